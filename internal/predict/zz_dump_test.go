package predict

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestZZDump(t *testing.T) {
	name := os.Getenv("ZZTRACE")
	if name == "" {
		t.Skip()
	}
	tr, _ := ReadTraceFile(filepath.Join(tracesDir(t), name), "")
	p := New(Config{})
	q := &QBETS{N: qbetsWindow}
	ests := Replay(tr, p, q)
	f, _ := os.Create("/tmp/p3/dump.csv")
	defer f.Close()
	fmt.Fprintln(f, "i,queue,gpus,started,wait,cens,median,p90,way,b0,b1,b2,qb,alone,backfill,queued,ahead,recent,submit,start")
	end := tr.End()
	for i, j := range tr.Jobs {
		e := ests[0][i]
		w := j.Wait()
		if !j.Started() {
			w = censoredAt(&j, end)
		}
		fmt.Fprintf(f, "%d,%s,%g,%v,%d,%d,%g,%g,%d,%g,%g,%g,%g,%g,%g,%g,%d,%g,%d,%d\n", i, j.Queue, j.GPUs, j.Started(), w, 0, e.Median.Seconds(), min(e.P90.Seconds(), 1e9), e.bound,
			e.bounds[0], e.bounds[1], e.bounds[2], ests[1][i].P90.Seconds(), e.Situation.Alone.Seconds(), e.Situation.Backfill.Seconds(), e.Situation.Queued.Seconds(), e.Situation.Ahead, e.Situation.RecentWait.Seconds(), j.Submit, j.Start)
	}
}
