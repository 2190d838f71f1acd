package commands

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
)

// harness is the whole bot on the example policy, SQLite in memory and the sim cluster.
type harness struct {
	t     testing.TB
	bot   *Bot
	svc   *qm.Service
	clock *sim.Clock
	sim   *sim.Cluster

	mu   sync.Mutex
	sent []bot.Reply
}

var start = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC) // a Monday, 09:00 in Chicago

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessOn(t, "../docs/quartermaster.example.yaml")
}

// newHarnessOn is the whole bot on another policy file.
func newHarnessOn(t testing.TB, policyFile string) *harness {
	t.Helper()
	return newHarnessOnStore(t, policyFile, "sqlite::memory:")
}

// newHarnessOnStore is the whole bot on another policy file and the database at url.
func newHarnessOnStore(t testing.TB, policyFile, url string) *harness {
	t.Helper()
	p, err := policy.LoadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, clock: sim.NewClock(start)}
	h.sim = sim.New(p, h.clock)
	h.svc = &qm.Service{Policy: p, Store: st, Clock: h.clock, Backend: h.sim, Telemetry: h.sim, Directory: p}
	h.bot = &Bot{Svc: h.svc}
	h.svc.Notifier = &Notices{Bot: h.bot, Sender: bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.sent = append(h.sent, r)
		return nil
	})}
	return h
}

// say runs a command and returns the first reply's text.
func (h *harness) say(user, text string) bot.Reply {
	h.t.Helper()
	rs := h.bot.Handle(context.Background(), bot.Request{User: user, Text: text})
	if len(rs) == 0 {
		h.t.Fatalf("%s: %q got no reply", user, text)
	}
	return rs[0]
}

// notices returns and forgets the messages sent to who.
func (h *harness) notices(who string) []bot.Reply {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out, rest []bot.Reply
	for _, r := range h.sent {
		if r.To == who {
			out = append(out, r)
		} else {
			rest = append(rest, r)
		}
	}
	h.sent = rest
	return out
}

// advance moves the clock event by event, as the console does.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	ctx := context.Background()
	target := h.clock.Now().Add(d)
	for {
		next, err := h.svc.NextDue(ctx)
		if err != nil {
			h.t.Fatal(err)
		}
		if next.IsZero() || next.After(target) {
			break
		}
		h.clock.Set(next)
		if err := h.svc.Tick(ctx); err != nil {
			h.t.Fatal(err)
		}
	}
	h.clock.Set(target)
	if err := h.svc.Tick(ctx); err != nil {
		h.t.Fatal(err)
	}
}

func leaseIn(t *testing.T, text string) qm.LeaseID {
	t.Helper()
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, ".,:;()")
		if strings.HasPrefix(w, "L-") {
			if id, err := qm.ParseLeaseID(w); err == nil {
				return id
			}
		}
	}
	t.Fatalf("no lease id in %q", text)
	return 0
}
