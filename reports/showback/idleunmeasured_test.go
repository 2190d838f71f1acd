package showback_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A team whose leases no agent reported on has no measured idle time: the text, the post and
// the budget owner's message say its idle is not measured rather than "0.0% idle", and the CSV
// and JSON leave its idle GPU-hours empty (null); a team with telemetry keeps its figures.
func TestIdleOfATeamWithoutTelemetryIsNotMeasured(t *testing.T) {
	p := loadBerlin(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	// optik: 2 GPUs for 4 hours, no telemetry at all.
	l := &qm.Lease{ID: 1, User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 2, State: qm.Expired,
		CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(4 * time.Hour), EndedAt: from.Add(4 * time.Hour)}
	// sprache: 1 GPU for 2 hours, reported busy, then idle.
	m := &qm.Lease{ID: 2, User: "lars@nordlicht.example", Team: "sprache", Class: "a100", GPUs: 1, State: qm.Expired,
		CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(2 * time.Hour), EndedAt: from.Add(2 * time.Hour)}
	usage := []qm.UsageRollup{
		{Lease: 2, Hour: from, GPUSeconds: 3600, IdleGPUSeconds: 0, UtilSum: 900, Samples: 10},
		{Lease: 2, Hour: from.Add(time.Hour), GPUSeconds: 3600, IdleGPUSeconds: 3600, Samples: 10},
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: []*qm.Lease{l, m}, Usage: usage})

	text := r.Text()
	for _, want := range []string{"optik: 8.00 GPU-hours", "idle not measured", "sprache: 2.00 GPU-hours", "idle 1.00 GPU-hours (50.0%)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	var optik string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "optik") {
			optik += line + "\n"
		}
	}
	if strings.Contains(optik, "(0.0%)") || strings.Contains(optik, " 0.0% idle") || strings.Contains(optik, "idle 0.00") {
		t.Errorf("optik, without telemetry, is shown as never idle:\n%s", optik)
	}
	post := r.Post("#finanzen", nil).PlainText()
	if !strings.Contains(post, "optik") || !strings.Contains(post, "idle not measured") {
		t.Errorf("the post does not say optik's idle is not measured:\n%s", post)
	}
	dm := r.OwnerDM("jana@nordlicht.example", []string{"optik"}).PlainText()
	if strings.Contains(dm, " 0.0% idle") || strings.Contains(dm, "idle 0.00") || !strings.Contains(dm, "idle not measured") {
		t.Errorf("the budget owner's message:\n%s", dm)
	}
	for _, row := range csvRows(t, r) {
		switch row["team"] {
		case "optik":
			if row["idle_gpu_hours"] != "" {
				t.Errorf("CSV idle_gpu_hours of optik %q, want empty", row["idle_gpu_hours"])
			}
		case "sprache":
			if row["idle_gpu_hours"] != "1.00" {
				t.Errorf("CSV idle_gpu_hours of sprache %q, want 1.00", row["idle_gpu_hours"])
			}
		}
	}
	var b strings.Builder
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Rows []struct {
			Team string   `json:"team"`
			Idle *float64 `json:"idle_gpu_hours"`
		} `json:"rows"`
		Teams []struct {
			Name string   `json:"team"`
			Idle *float64 `json:"idle_gpu_hours"`
		} `json:"teams"`
	}
	if err := json.Unmarshal([]byte(b.String()), &js); err != nil {
		t.Fatal(err)
	}
	for _, row := range js.Rows {
		if (row.Idle == nil) != (row.Team == "optik") {
			t.Errorf("JSON row of %s: idle_gpu_hours %v", row.Team, row.Idle)
		}
	}
	for _, tm := range js.Teams {
		if (tm.Idle == nil) != (tm.Name == "optik") {
			t.Errorf("JSON team %s: idle_gpu_hours %v", tm.Name, tm.Idle)
		}
	}
}
