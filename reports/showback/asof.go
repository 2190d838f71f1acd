package showback

import (
	"math"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// asOf rewinds the leases read from the store to what was known of them at now, so that a report
// made as of an earlier instant (quartermaster report --now) tells the week as the service would
// have told it then, whatever happened since: a lease asked for later is not there, one that ended
// later is still running (billed up to now), a decision made later is still pending, a start after
// now has not happened, and a pause that began later did not. The leases are copies; the store's
// are left alone. Only an extension granted after now is not rewound: it moves the end of a lease
// that was still running then, which bills up to now either way.
func asOf(leases []*qm.Lease, now time.Time) []*qm.Lease {
	out := make([]*qm.Lease, 0, len(leases))
	for _, l := range leases {
		if l.CreatedAt.After(now) {
			continue
		}
		c := *l
		rewound := false
		if c.DecidedBy != "" && c.DecidedAt.After(now) {
			// Undecided then: nothing that followed the decision had happened.
			c.DecidedBy, c.DecidedAt = "", time.Time{}
			c.StartedAt, c.ExpiresAt, c.EndedAt = time.Time{}, time.Time{}, time.Time{}
			rewound = true
		}
		if c.StartedAt.After(now) {
			c.StartedAt, c.ExpiresAt, c.EndedAt = time.Time{}, time.Time{}, time.Time{}
			rewound = true
		}
		if c.EndedAt.After(now) {
			c.EndedAt = time.Time{}
			rewound = true
		}
		if rewound {
			c.Reclaimed = 0
			switch {
			case !c.StartedAt.IsZero():
				c.State = qm.Active
			case c.Rules != "" && c.DecidedBy == "":
				c.State = qm.PendingApproval
			default:
				c.State = qm.Queued
			}
		}
		c.Pauses = nil
		for _, p := range l.Pauses {
			if p.From.After(now) || c.StartedAt.IsZero() {
				continue
			}
			if p.To.After(now) {
				p.To = time.Time{}
			}
			c.Pauses = append(c.Pauses, p)
		}
		out = append(out, &c)
	}
	return out
}

// usageAsOf keeps the usage rollups telemetry had written by now: none of an hour that began
// later, and of the hour now is in, no more GPU-seconds than the lease's GPUs can have had from the
// hour's start to now (a rollup read later holds the rest of the hour too; one read at now holds
// no more than that and is kept whole). An hour starts where its rollup does, on the clocks of
// loc (qm.HourSpan: after Lord Howe Island's half-hour change, at the change).
func usageAsOf(usage []qm.UsageRollup, leases []*qm.Lease, now time.Time, loc *time.Location) []qm.UsageRollup {
	gpus := map[qm.LeaseID]int{}
	for _, l := range leases {
		gpus[l.ID] = l.GPUs
	}
	out := make([]qm.UsageRollup, 0, len(usage))
	for _, u := range usage {
		if !u.Hour.Before(now) {
			continue
		}
		if from, end := qm.HourSpan(u.Hour, loc); end.After(now) {
			most := float64(gpus[u.Lease]) * max(0, now.Sub(from).Seconds())
			if u.GPUSeconds > most {
				part := 0.0
				if u.GPUSeconds > 0 {
					part = most / u.GPUSeconds
				}
				u.GPUSeconds, u.IdleGPUSeconds = most, u.IdleGPUSeconds*part
				// As many samples as that part holds, at the same mean.
				if n := int64(math.Round(float64(u.Samples) * part)); u.Samples > 0 {
					u.UtilSum, u.Samples = u.UtilSum*float64(n)/float64(u.Samples), n
				}
			}
		}
		out = append(out, u)
	}
	return out
}
