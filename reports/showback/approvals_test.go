package showback_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// decided is a request of team that a rule sent to its budget owner, made at created and
// decided by a person after wait: approved (and run for an hour), or denied when deny is set.
func decided(id int, team string, created time.Time, wait time.Duration, deny bool) *qm.Lease {
	l := &qm.Lease{ID: qm.LeaseID(id), User: "maya@acme.example", Team: team, Class: "interactive", GPUs: 2, Rules: "large-request",
		CreatedAt: created, DecidedBy: "lee@acme.example", DecidedAt: created.Add(wait)}
	if deny {
		l.State, l.EndedAt = qm.Denied, l.DecidedAt
		return l
	}
	l.State, l.StartedAt, l.ExpiresAt, l.EndedAt = qm.Expired, l.DecidedAt, l.DecidedAt.Add(time.Hour), l.DecidedAt.Add(time.Hour)
	return l
}

// approvalsJSON is the total's approvals as the JSON report writes them.
func approvalsJSON(t *testing.T, r *showback.Report) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Total struct {
			Approvals map[string]any `json:"approvals"`
		} `json:"total"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Total.Approvals
}

func fieldValue(r bot.Reply, label string) string {
	for _, s := range r.Sections {
		for _, f := range s.Fields {
			if f.Label == label {
				return f.Value
			}
		}
	}
	return ""
}

func hours(hs ...float64) []time.Duration {
	out := make([]time.Duration, len(hs))
	for i, h := range hs {
		out[i] = time.Duration(math.Round(h*3600)) * time.Second
	}
	return out
}

// The median and the 90th percentile of the time from request to a person's decision are what a
// person computes from the decisions: the median is the middle wait, or the mean of the two middle
// ones; the p90 is the nearest rank, the shortest wait that at least 90 % of the decisions came
// within, a wait some request really had (with fewer than ten decisions the longest; with ten, the
// ninth). Both are in the JSON, the text, the channel post, the budget owner's DM and /gpu report.
func TestApprovalLatencyMedianAndP90(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W49", showback.Week{})
	for _, c := range []struct {
		name              string
		waits             []time.Duration // in the order the requests were made
		median, p90       time.Duration
		medianSay, p90Say string
	}{
		{"one decision", hours(0.75), 45 * time.Minute, 45 * time.Minute, "45m", "45m"},
		{"two decisions", hours(1, 1.0/3), 40 * time.Minute, time.Hour, "40m", "1h"},
		{"three decisions", hours(5, 1.0/6, 1), time.Hour, 5 * time.Hour, "1h", "5h"},
		{"four decisions", hours(10, 1, 3, 2), 150 * time.Minute, 10 * time.Hour, "2h30m", "10h"},
		{"ten decisions", hours(10, 1, 2, 3, 4, 5, 6, 7, 8, 9), 330 * time.Minute, 9 * time.Hour, "5h30m", "9h"},
		{"eleven decisions", hours(11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 6 * time.Hour, 10 * time.Hour, "6h", "10h"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var leases []*qm.Lease
			for i, wait := range c.waits {
				leases = append(leases, decided(i+1, "language", at("2026-12-01 09:00").Add(time.Duration(i)*time.Minute), wait, i%3 == 2))
			}
			r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-12-07 09:00"), Leases: leases})
			a := approvalsJSON(t, r)
			for field, want := range map[string]time.Duration{"median_decision_latency_s": c.median, "p90_decision_latency_s": c.p90} {
				if got, ok := a[field].(float64); !ok || got != want.Seconds() {
					t.Errorf("JSON %s = %v, want %v", field, a[field], want.Seconds())
				}
			}
			want := "; median decision " + c.medianSay + ", p90 " + c.p90Say
			if text := r.Text(); !strings.Contains(text, want+".\n") || !strings.Contains(text, want+"; human touches") {
				t.Errorf("the report's total and language's line do not say %q:\n%s", want, text)
			}
			post := r.Post("#gpu-showback", nil)
			dm := r.OwnerDM("lee@acme.example", []string{"language"})
			answer := r.Answer(nil)
			for who, reply := range map[string]bot.Reply{"channel post": post, "budget owner's DM": dm, "/gpu report": answer} {
				if got := fieldValue(reply, "Approvals"); !strings.HasSuffix(got, want) {
					t.Errorf("the %s's approvals say %q, want %q", who, got, want)
				}
			}
		})
	}
}
