package inflight

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestOutboxKeepsEachKeysOrder: jobs for one key run one at a time in the order pushed, while
// another key's jobs do not wait for them; Wait returns once all have run.
func TestOutboxKeepsEachKeysOrder(t *testing.T) {
	tr := NewTracker()
	o := NewOutbox(0, tr)
	var mu sync.Mutex
	ran := map[string][]int{}
	running := map[string]bool{}
	overlap := false
	block := make(chan struct{})
	ctx := context.Background()
	for i := range 5 {
		o.Push(ctx, "#a", func(context.Context) {
			mu.Lock()
			if running["#a"] {
				overlap = true
			}
			running["#a"] = true
			mu.Unlock()
			if i == 0 {
				<-block // #a is held up at its first job
			}
			mu.Lock()
			running["#a"] = false
			ran["#a"] = append(ran["#a"], i)
			mu.Unlock()
		})
	}
	done := make(chan struct{})
	o.Push(ctx, "#b", func(context.Context) { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("#b waited for #a")
	}
	close(block)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tr.Wait(wctx); err != nil {
		t.Fatalf("jobs still in flight: %v", err)
	}
	if overlap {
		t.Error("two jobs of one key ran at once")
	}
	if got := ran["#a"]; len(got) != 5 || got[0] != 0 || got[4] != 4 || got[2] != 2 {
		t.Errorf("#a ran %v, want 0 1 2 3 4", got)
	}
}

// TestCallReturnsTheJobsErrorOrGivesUp: Call returns what its job returned; one whose caller stops
// waiting before its turn comes returns at once, and its job never runs.
func TestCallReturnsTheJobsErrorOrGivesUp(t *testing.T) {
	tr := NewTracker()
	o := NewOutbox(0, tr)
	base := context.Background()
	boom := errors.New("boom")
	if err := o.Call(base, base, "#a", func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Call = %v, want the job's error", err)
	}
	block := make(chan struct{})
	o.Push(base, "#a", func(context.Context) { <-block })
	ctx, cancel := context.WithCancel(base)
	cancel()
	ran := false
	if err := o.Call(ctx, base, "#a", func(context.Context) error { ran = true; return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call after its caller gave up = %v", err)
	}
	close(block)
	wctx, stop := context.WithTimeout(base, 10*time.Second)
	defer stop()
	if err := tr.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("a job whose caller had given up ran")
	}
}

// TestARunningJobStopsWhenItsCallerGivesUp: the context of a job that is running ends when its
// caller stops waiting, so that it sends nothing after Call has reported it not done; one whose
// caller waits keeps its context.
func TestARunningJobStopsWhenItsCallerGivesUp(t *testing.T) {
	tr := NewTracker()
	o := NewOutbox(0, tr)
	base := context.Background()
	ctx, cancel := context.WithCancel(base)
	started := make(chan struct{})
	sentAfter := make(chan bool, 1)
	go func() { <-started; cancel() }()
	err := o.Call(ctx, base, "#a", func(jctx context.Context) error {
		close(started)
		<-jctx.Done() // a rate-limit wait, cut short
		sentAfter <- jctx.Err() == nil
		return jctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	wctx, stop := context.WithTimeout(base, 10*time.Second)
	defer stop()
	if err := tr.Wait(wctx); err != nil {
		t.Fatal("the job did not stop when its caller gave up")
	}
	if <-sentAfter {
		t.Error("the job went on after its caller gave up")
	}
	if err := o.Call(base, base, "#a", func(jctx context.Context) error { return jctx.Err() }); err != nil {
		t.Errorf("a job whose caller waits: %v", err)
	}
}
