package showback_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/reports/showback"
)

// blippingLedger is the database's ledger, whose next failures MarkDelivered calls fail as
// they do while the database restarts.
type blippingLedger struct {
	*store.DB
	mu    sync.Mutex
	fails int
}

func (l *blippingLedger) MarkDelivered(ctx context.Context, week, owner, key string, now time.Time, ttl time.Duration) error {
	l.mu.Lock()
	fail := l.fails > 0
	if fail {
		l.fails--
	}
	l.mu.Unlock()
	if fail {
		return errors.New("store: dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	return l.DB.MarkDelivered(ctx, week, owner, key, now, ttl)
}

// A message that went out while the database could not record it (it was restarting) is
// recorded once the database is back, so that the week's next run does not send it again: each
// recipient gets the week's showback once.
func TestAShowbackMessageSentWhileTheDatabaseBlinksIsNotSentAgain(t *testing.T) {
	pol, db, w := borealisWeekOfOneLease(t)
	fc := clockwork.NewFakeClockAt(time.Date(2026, 3, 13, 17, 0, 0, 0, pol.Location))
	chat := &refusingChat{}
	ledger := &blippingLedger{DB: db, fails: 1}
	pub := &showback.Publisher{Reports: &showback.Service{Policy: pol, Source: db, Clock: fc}, Ledger: ledger, Deliver: chat,
		Schedule: w, Owner: "a", ClaimTTL: 15 * time.Minute}
	week := showback.Week{Year: 2026, Num: 10}
	if _, err := pub.Publish(t.Context(), week); err != nil {
		t.Logf("first run: %v", err)
	}
	fc.Advance(20 * time.Minute) // past the claim: the next run takes the week over
	if _, err := pub.Publish(t.Context(), week); err != nil {
		t.Fatalf("second run: %v", err)
	}
	seen := map[string]int{}
	for _, to := range chat.got {
		seen[to]++
	}
	for to, n := range seen {
		if n != 1 {
			t.Errorf("%s got the week's showback %d times; the chat got %s", to, n, strings.Join(chat.got, ","))
		}
	}
}
