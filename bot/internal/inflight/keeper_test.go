package inflight

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// memInbox is a fake bot.Inbox in memory, for the keeper's own tests (the adapters' tests use
// the database); accept, when set, is waited for before an Accept answers.
type memInbox struct {
	mu       sync.Mutex
	kept     map[string]bool
	finished []string
	accept   chan struct{}
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

// TestNilKeeper: an adapter without an inbox claims nothing and forgets nothing, safely.
func TestNilKeeper(t *testing.T) {
	var k *Keeper
	if ds, err := k.Claim(t.Context(), time.Now()); ds != nil || err != nil {
		t.Fatalf("Claim = %v, %v", ds, err)
	}
	k.Finish(Taken("x"))
}
