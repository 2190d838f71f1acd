package predict

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// A replay meets every event of a trace in time order, with the order at one moment as the
// replay defines it (ends, departures, starts already due, submits, starts at the submit's own
// moment, instantaneous ends; then by job), though it holds only the jobs in flight: the order
// is checked against all the trace's events sorted at once, on traces thick with ties.
func TestPlayMeetsEventsInTimeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 20 {
		var tr Trace
		submit := int64(0)
		for range 500 {
			submit += int64(rng.IntN(3)) // many jobs share a second
			j := Job{Submit: submit, Start: -1, End: -1, GPUs: 1}
			switch rng.IntN(6) {
			case 0: // never starts, leaves at once or later
				j.End = submit + int64(rng.IntN(3))
			case 1: // never starts, never seen to leave
			case 2: // starts at once, ends at once
				j.Start, j.End = submit, submit
			case 3: // starts, no recorded end
				j.Start = submit + int64(rng.IntN(4))
			default:
				j.Start = submit + int64(rng.IntN(4))
				j.End = j.Start + int64(rng.IntN(4))
			}
			tr.Jobs = append(tr.Jobs, j)
		}
		var want []event
		for i := range tr.Jobs {
			j := &tr.Jobs[i]
			n := int32(i)
			want = append(want, event{j.Submit, j, n, 3, evSubmit})
			switch {
			case j.Started() && j.Start == j.Submit:
				want = append(want, event{j.Start, j, n, 4, evStart})
			case j.Started():
				want = append(want, event{j.Start, j, n, 2, evStart})
			case j.End > j.Submit:
				want = append(want, event{j.End, j, n, 1, evWithdraw})
			case j.End >= 0:
				want = append(want, event{j.Submit, j, n, 5, evWithdraw})
			}
			switch {
			case j.Started() && j.End > j.Start:
				want = append(want, event{j.End, j, n, 0, evEnd})
			case j.Started() && j.End >= 0:
				want = append(want, event{j.Start, j, n, 5, evEnd})
			}
		}
		slices.SortFunc(want, func(a, b event) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.prio, b.prio), cmp.Compare(a.job, b.job))
		})
		var got []event
		if err := play(sourceOf(tr), func(ev *event) { got = append(got, *ev) }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("round %d: event %d of %d is %+v, want %+v", round, i, len(want), got[i], want[i])
				}
			}
			t.Fatalf("round %d: %d events, want %d", round, len(got), len(want))
		}
	}
}
