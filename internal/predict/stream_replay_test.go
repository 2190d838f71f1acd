//go:build !race

package predict

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEvaluateFileMatchesEvaluate replays whole traces several times over, so it is built
// without the race detector, as the long replays of traces_test.go are.

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
