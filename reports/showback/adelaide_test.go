package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// adelaidePolicy bills in dinars (three decimals) on clocks half an hour off the hour that move
// for daylight saving time (Australia/Adelaide: +9:30, +10:30 from the first Sunday of October).
const adelaidePolicy = `organization: Southern Cross Compute
currency: KWD
timezone: Australia/Adelaide
classes:
  - name: nb
    sku: L4
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.137
    max_gpus: 1
    max_duration: 6h
  - name: big8
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 1.0415
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
teams:
  - name: computational-neuroscience-and-cognitiv
    idp_groups: [g-neuro]
    budget_owners: [olga@sc.example]
    quota: {gpus: {nb: 2, big8: 8}, gpu_hours_per_week: 300}
  - name: alpha
    idp_groups: [g-alpha]
    budget_owners: [ann@sc.example]
    quota: {gpus: {nb: 2}, gpu_hours_per_week: 100}
reports:
  showback: {schedule: "TUE 07:30", channel: "#showback", dm_budget_owners: true}
backend: sim
sim:
  nodes:
    - {name: l4, count: 2, class: nb, gpus: 4}
    - {name: h100, count: 2, class: big8, gpus: 8}
`

func loadAdelaide(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Load([]byte(adelaidePolicy), "adelaide.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A quota increase of one GPU reads as one GPU, as chat wrote it when it was asked for and
// approved ("+1 big8 GPU"), in the text and the channel post; one of two GPUs reads "+2 nb GPUs".
func TestAQuotaIncreaseOfOneGPUReadsOneGPU(t *testing.T) {
	p := loadAdelaide(t)
	w, _ := showback.ParseWeek("2026-W47", showback.Week{})
	from := w.Start(p.Location)
	team := "computational-neuroscience-and-cognitiv"
	one := &qm.Lease{ID: 1, Kind: qm.KindQuota, User: "nu@sc.example", Team: team, Class: "big8", GPUs: 1, State: qm.Expired,
		Because: "test", CreatedAt: from.Add(10 * time.Hour), DecidedBy: "olga@sc.example", DecidedAt: from.Add(10 * time.Hour),
		StartedAt: from.Add(10 * time.Hour), ExpiresAt: from.Add(34 * time.Hour), EndedAt: from.Add(34 * time.Hour)}
	two := &qm.Lease{ID: 2, Kind: qm.KindQuota, User: "nu@sc.example", Team: team, Class: "nb", GPUs: 2, State: qm.Expired,
		Because: "deadline", CreatedAt: from.Add(40 * time.Hour), DecidedBy: "olga@sc.example", DecidedAt: from.Add(40 * time.Hour),
		StartedAt: from.Add(40 * time.Hour), ExpiresAt: from.Add(64 * time.Hour), EndedAt: from.Add(64 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{one, two}})
	for what, s := range map[string]string{"text": r.Text(), "post": replyText(r.Post("#showback", nil))} {
		if !strings.Contains(s, "team "+team+" +1 big8 GPU, ") {
			t.Errorf("the %s does not write the increase of one GPU as +1 big8 GPU:\n%s", what, s)
		}
		if !strings.Contains(s, "team "+team+" +2 nb GPUs, ") {
			t.Errorf("the %s does not write the increase of two GPUs as +2 nb GPUs:\n%s", what, s)
		}
	}
}
