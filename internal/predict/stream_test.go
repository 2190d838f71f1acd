package predict

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
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

// EvaluateFile reads the file again on every pass rather than holding the trace, and reports
// exactly what reading the trace into memory and replaying it reports: on a published trace,
// on a pod list whose queue column is the queueing delay and whose CPU pods are left out, on
// the same list out of submit order, and on sacct's records.
func TestEvaluateFileMatchesEvaluate(t *testing.T) {
	dir := t.TempDir()
	orig, _ := deepQueueTrace(3000, 64)
	var pods strings.Builder
	pods.WriteString("job_id,user,vc,gpu_num,submit_time,start_time,end_time,queue\n")
	var lines []string
	for i, j := range orig.Jobs {
		lines = append(lines, fmt.Sprintf("%d,%s,vc%d,%g,%d,%d,%d,%d\n", i, j.User, i%3, j.GPUs, j.Submit, j.Start, j.End, j.Start-j.Submit))
		if i%7 == 0 { // a CPU pod beside it
			lines = append(lines, fmt.Sprintf("c%d,%s,vc0,0,%d,%d,%d,0\n", i, j.User, j.Submit, j.Submit, j.Submit+60))
		}
	}
	pods.WriteString(strings.Join(lines, ""))
	slices.Reverse(lines)
	files := map[string]string{
		"pods.csv":      pods.String(),
		"unsorted.csv":  "job_id,user,vc,gpu_num,submit_time,start_time,end_time,queue\n" + strings.Join(lines, ""),
		"records.sacct": sacctOf(orig),
	}
	paths := []string{filepath.Join(tracesDir(t), "KTH-SP2-1996-2.1-cln.swf.gz")}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		format := ""
		if strings.HasSuffix(p, ".sacct") {
			format = FormatSacct
		}
		got, err := EvaluateFile(p, format, "x", DefaultTrainFraction)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		tr, err := ReadTraceFile(p, format)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := Evaluate(tr, "x", DefaultTrainFraction)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: streamed\n%+v\nin memory\n%+v", filepath.Base(p), got, want)
		}
		if got.Scored == 0 || got.Results[0].P90Scored == 0 {
			t.Errorf("%s: nothing scored: %+v", filepath.Base(p), got)
		}
		if strings.HasSuffix(p, ".csv") && (got.Skipped != 429 || !strings.HasPrefix(got.Why, "429 ask for no GPU")) {
			t.Errorf("%s: %d left out (%s), want the 429 CPU pods", filepath.Base(p), got.Skipped, got.Why)
		}
	}
	// A file that is mostly unreadable is refused in the same sentence.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("job_id,submit_time,start_time,end_time,gpus\n1,0,5,9,1\n2,x,5,9,1\n3,y,5,9,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := EvaluateFile(bad, "", "bad", DefaultTrainFraction)
	_, want := ReadTraceFile(bad, "")
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("mostly unreadable: %v, want %v", err, want)
	}
}
