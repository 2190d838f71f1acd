package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The report's medians follow one rule: the queue waits' p50 (and the predicted p50) is the
// median as the approvals' median decision is, the middle value or the mean of the two middle
// ones. Requests that each waited as long for a person's decision as then in the queue show the
// same median for both; with waits of 30m and 2h30m, 1h30m, not 30m.
func TestQueueWaitP50AndDecisionMedianFollowOneRule(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W49", showback.Week{})
	for _, c := range []struct {
		name   string
		waits  []time.Duration
		median string
	}{
		{"two", hours(0.5, 2.5), "1h30m"},
		{"three", hours(3, 0.5, 1), "1h"},
		{"four", hours(4, 0.5, 1, 2), "1h30m"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var leases []*qm.Lease
			var preds []qm.WaitPrediction
			for i, d := range c.waits {
				created := at("2026-12-02 09:00").Add(time.Duration(i) * time.Minute)
				l := &qm.Lease{ID: qm.LeaseID(i + 1), User: "maya@acme.example", Team: "language", Class: "interactive", GPUs: 2, Rules: "large-request",
					CreatedAt: created, DecidedBy: "lee@acme.example", DecidedAt: created.Add(d), State: qm.Expired}
				l.StartedAt = l.DecidedAt.Add(d) // queued as long after its approval
				l.ExpiresAt, l.EndedAt = l.StartedAt.Add(time.Hour), l.StartedAt.Add(time.Hour)
				leases = append(leases, l)
				preds = append(preds, qm.WaitPrediction{Lease: l.ID, Median: d, P90: 2 * d, At: l.DecidedAt})
			}
			r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-12-07 09:00"), Leases: leases, Predictions: preds})
			a, q := r.Total.Approvals, r.Total.QueueWait
			if a.MedianLatency == nil || q.P50 == nil || q.PredictedP50 == nil || *a.MedianLatency != *q.P50 || *q.P50 != *q.PredictedP50 {
				t.Fatalf("median decision %s, queue wait p50 %s, predicted p50 %s; want one median of %v", secsOf(a.MedianLatency), secsOf(q.P50), secsOf(q.PredictedP50), c.waits)
			}
			text := r.Text()
			for _, want := range []string{"; median decision " + c.median + ",", "waited p50 " + c.median + ",", " against a predicted p50 of " + c.median + ","} {
				if !strings.Contains(text, want) {
					t.Errorf("the report does not say %q:\n%s", want, text)
				}
			}
		})
	}
}

func secsOf(s *showback.Seconds) string {
	if s == nil {
		return "none"
	}
	return s.Duration().String()
}
