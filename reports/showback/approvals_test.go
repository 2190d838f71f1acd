package showback_test

import (
	"bytes"
	"encoding/json"
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
		out[i] = time.Duration(h * float64(time.Hour))
	}
	return out
}

// The 90th percentile of the time from request to a person's decision is the nearest rank: the
// shortest wait that at least 90 % of the decisions came within, a wait some request really had.
// With fewer than ten decisions it is the longest; with ten, the ninth. It is in the JSON, the
// text, the channel post, the budget owner's DM and /gpu report, next to the median.
func TestApprovalLatencyHasItsP90(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W49", showback.Week{})
	for _, c := range []struct {
		name   string
		waits  []time.Duration // in the order the requests were made
		p90    time.Duration
		p90Say string
	}{
		{"one decision", hours(0.75), 45 * time.Minute, "45m"},
		{"two decisions", hours(0.5, 0.25), 30 * time.Minute, "30m"},
		{"three decisions", hours(5, 1.0/6, 1), 5 * time.Hour, "5h"},
		{"ten decisions", hours(10, 1, 2, 3, 4, 5, 6, 7, 8, 9), 9 * time.Hour, "9h"},
		{"eleven decisions", hours(11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10 * time.Hour, "10h"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var leases []*qm.Lease
			for i, wait := range c.waits {
				leases = append(leases, decided(i+1, "language", at("2026-12-01 09:00").Add(time.Duration(i)*time.Minute), wait, i%3 == 2))
			}
			r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-12-07 09:00"), Leases: leases})
			got, ok := approvalsJSON(t, r)["p90_decision_latency_s"].(float64)
			if !ok || got != c.p90.Seconds() {
				t.Errorf("JSON p90_decision_latency_s = %v, want %v", approvalsJSON(t, r)["p90_decision_latency_s"], c.p90.Seconds())
			}
			want := ", p90 " + c.p90Say
			if text := r.Text(); !strings.Contains(text, want+".\n") || !strings.Contains(text, want+"; human touches") {
				t.Errorf("the report's total and language's line do not say %q:\n%s", want, text)
			}
			post := r.Post("#gpu-showback", nil)
			dm := r.OwnerDM("lee@acme.example", []string{"language"})
			answer := r.Answer(nil)
			for who, reply := range map[string]bot.Reply{"channel post": post, "budget owner's DM": dm, "/gpu report": answer} {
				if got := fieldValue(reply, "Approvals"); !strings.Contains(got, "median decision") || !strings.HasSuffix(got, want) {
					t.Errorf("the %s's approvals say %q, want the median and %q", who, got, want)
				}
			}
		})
	}
}
