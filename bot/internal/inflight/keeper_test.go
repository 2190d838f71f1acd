package inflight

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/testkit"
)

// memInbox is a fake bot.Inbox in memory, for the keeper's own tests (the adapters' tests use
// the database); accept, when set, is waited for before an Accept answers.
type memInbox struct {
	mu       sync.Mutex
	kept     map[string]bool
	finished []string
	accept   chan struct{}
	// downFor is how many Finish calls fail yet (the database is down).
	downFor int
	// finishCalls counts Finish calls.
	finishCalls int
}

func (m *memInbox) Accept(_ context.Context, cmds []bot.Accepted, _ time.Duration) ([]bool, error) {
	if m.accept != nil {
		<-m.accept
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]bool, len(cmds))
	for i, c := range cmds {
		out[i] = !m.kept[c.Key]
		m.kept[c.Key] = true
	}
	return out, nil
}

func (m *memInbox) Finish(_ context.Context, keys []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finishCalls++
	if m.downFor > 0 {
		m.downFor--
		return errors.New("the service cannot reach its database")
	}
	for _, k := range keys {
		delete(m.kept, k)
		m.finished = append(m.finished, k)
	}
	return nil
}

func (m *memInbox) Claim(context.Context, time.Time, time.Duration) ([]bot.Accepted, error) {
	return nil, nil
}

func (m *memInbox) holds(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kept[key]
}

// eventually polls cond for up to ten seconds.
func eventually(cond func() bool) bool {
	for range 1000 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

// TestKeeperKeepsUntilFinished: a command is kept until Finish; the same key again is refused
// (another process has it); after the adapter stops, Finish forgets nothing, so that a successor
// runs the work cut short.
func TestKeeperKeepsUntilFinished(t *testing.T) {
	in := &memInbox{kept: map[string]bool{}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	k := NewKeeper(ctx, in, time.Minute, slog.New(slog.DiscardHandler))
	kt, ok := k.Keep(bot.Accepted{Key: "a"})
	if !ok || !in.holds("a") {
		t.Fatalf("not kept: ok %v", ok)
	}
	if _, ok := k.Keep(bot.Accepted{Key: "a"}); ok {
		t.Fatal("a key kept already was kept again")
	}
	k.Finish(kt)
	if !eventually(func() bool { return !in.holds("a") }) {
		t.Fatal("a finished command is still kept")
	}
	cut, _ := k.Keep(bot.Accepted{Key: "b"})
	stop()
	k.Finish(cut)
	if !in.holds("b") {
		t.Error("work cut short by a stop was forgotten")
	}
}

// TestKeeperDoesNotWaitForASlowInbox: when the inbox does not answer in time the command goes
// ahead unkept-for-now, and once the inbox has kept it, Finish still forgets it.
func TestKeeperDoesNotWaitForASlowInbox(t *testing.T) {
	in := &memInbox{kept: map[string]bool{}, accept: make(chan struct{})}
	k := NewKeeper(t.Context(), in, time.Minute, slog.New(slog.DiscardHandler))
	kt, ok := k.Keep(bot.Accepted{Key: "slow"}) // returns after AcceptTimeout
	if !ok {
		t.Fatal("a command whose inbox is slow was refused")
	}
	k.Finish(kt) // before the inbox has kept it
	close(in.accept)
	if !eventually(func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		return len(in.finished) == 1 && !in.kept["slow"]
	}) {
		t.Fatalf("kept late and never forgotten: kept %v, finished %v", in.kept, in.finished)
	}
}

// TestAFinishedCommandIsForgottenOnceTheDatabaseReturns: a command answered while the
// database was down (its answer said so) is forgotten once the database is back, with growing
// pauses between the tries, instead of staying kept and being run again, minutes after its
// sender was told it failed, once its claim lapsed. The tries end when the claim has run out.
func TestAFinishedCommandIsForgottenOnceTheDatabaseReturns(t *testing.T) {
	in := &memInbox{kept: map[string]bool{}}
	var mu sync.Mutex
	var pauses []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		pauses = append(pauses, d)
		mu.Unlock()
		return ctx.Err()
	}
	var logs testkit.SyncBuffer
	k := newKeeper(t.Context(), in, 3*time.Minute, slog.New(slog.NewTextHandler(&logs, nil)), sleep)
	kt, ok := k.Keep(bot.Accepted{Key: "answered-while-down"})
	if !ok {
		t.Fatal("not kept")
	}
	in.mu.Lock()
	in.downFor = 4
	in.mu.Unlock()
	k.Finish(kt)
	if !eventually(func() bool { return !in.holds("answered-while-down") }) {
		t.Fatal("a command finished while the database was down is still kept after it returned: it would run again once its claim lapsed")
	}
	mu.Lock()
	got := append([]time.Duration(nil), pauses...)
	mu.Unlock()
	if len(got) != 4 {
		t.Fatalf("pauses %v, want one before each of the 4 tries after the failed one", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Errorf("pauses %v do not grow", got)
		}
	}

	// A database that stays down: the tries stop once the claim is over (another process may
	// have taken the command by then), and Finish works again for what comes after.
	kt, _ = k.Keep(bot.Accepted{Key: "down-for-good"})
	in.mu.Lock()
	in.downFor = 1 << 30
	calls := in.finishCalls
	in.mu.Unlock()
	mu.Lock()
	pauses = nil
	mu.Unlock()
	k.Finish(kt)
	if !eventually(func() bool { return strings.Contains(logs.String(), "they may run again") }) {
		t.Fatal("the tries did not end")
	}
	mu.Lock()
	var sum time.Duration
	for _, p := range pauses {
		sum += p
	}
	mu.Unlock()
	if sum < 3*time.Minute {
		t.Errorf("the tries ended after %v of pauses, before the claim (3m) ran out", sum)
	}
	in.mu.Lock()
	in.downFor = 0
	in.mu.Unlock()
	kt, _ = k.Keep(bot.Accepted{Key: "after"})
	k.Finish(kt)
	if !eventually(func() bool { return !in.holds("after") }) {
		t.Fatal("a command finished after the tries gave up is still kept")
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.kept["down-for-good"] {
		t.Error("a command the tries gave up on was forgotten though the database never answered")
	}
	if in.finishCalls-calls > 100 {
		t.Errorf("%d tries in one claim: no backoff", in.finishCalls-calls)
	}
}

// TestNilKeeper: an adapter without an inbox claims nothing and forgets nothing, safely.
func TestNilKeeper(t *testing.T) {
	var k *Keeper
	if ds, err := k.Claim(t.Context(), time.Now()); ds != nil || err != nil {
		t.Fatalf("Claim = %v, %v", ds, err)
	}
	k.Finish(Taken("x"))
}

// failingInbox fails every Accept (the database is down).
type failingInbox struct{ memInbox }

func (f *failingInbox) Accept(context.Context, []bot.Accepted, time.Duration) ([]bool, error) {
	return nil, errors.New("the service cannot reach its database")
}

// TestOwnIsTrueOnlyForAClaimTheInboxKept: what is delivered to every replica is owned only by
// the claim the inbox said it kept; a claim it refused, one it failed, and one it did not answer
// within the wait own nothing (another replica may have it), unlike Keep, which runs unkept.
func TestOwnIsTrueOnlyForAClaimTheInboxKept(t *testing.T) {
	in := &memInbox{kept: map[string]bool{}}
	k := NewKeeper(t.Context(), in, time.Minute, slog.New(slog.DiscardHandler))
	if !k.Own(bot.Accepted{Key: "a"}, time.Minute) {
		t.Error("a claim the inbox kept is not owned")
	}
	if k.Own(bot.Accepted{Key: "a"}, time.Minute) {
		t.Error("a claim another replica holds is owned")
	}
	down := NewKeeper(t.Context(), &failingInbox{memInbox{kept: map[string]bool{}}}, time.Minute, slog.New(slog.DiscardHandler))
	if down.Own(bot.Accepted{Key: "b"}, time.Minute) {
		t.Error("a claim the inbox failed is owned")
	}
	slow := &memInbox{kept: map[string]bool{}, accept: make(chan struct{})}
	ks := NewKeeper(t.Context(), slow, time.Minute, slog.New(slog.DiscardHandler))
	if ks.Own(bot.Accepted{Key: "c"}, 0) {
		t.Error("a claim the inbox has not answered is owned")
	}
	close(slow.accept)
}
