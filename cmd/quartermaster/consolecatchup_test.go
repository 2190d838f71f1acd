package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store"
)

// A console killed while it posted a week (the channel post out, the budget owners' DMs not yet)
// leaves the week claimed. The next console on the same database sends the rest once that claim
// runs out, as serve's catch-up does every five minutes, not a week later with the next post:
// each budget owner's DM once, the channel post not again, and a console after it nothing more.
func TestConsoleFinishesAWeekAKilledConsoleLeftHalfPosted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	// Mon 30 Nov 09:00 CST: a lease of team vision in 2026-W49, posted Mon 7 Dec 09:00 CST.
	runConsoleAt(t, dir, "2026-11-30T15:00:00Z", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n")

	// The console that posted the week died after the channel post went out and was recorded.
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "quartermaster.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)
	if ok, err := db.ClaimWeek(ctx, "2026-W49", "console:gone:1", at, 15*time.Minute); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if err := db.MarkDelivered(ctx, "2026-W49", "console:gone:1", "channel:#gpu-showback", at, 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Started again five minutes later, while the claim still holds, and run on past its end.
	msgs := runConsoleAt(t, dir, "2026-12-07T15:05:00Z", ":advance 20m\n:now\n")
	got := map[string]int{}
	for _, m := range msgs {
		if strings.Contains(m.Text, "2026-W49") {
			got[m.To]++
		}
	}
	if got["#gpu-showback"] != 0 {
		t.Errorf("the channel post went out again: %+v", msgs)
	}
	for _, owner := range []string{"dana@acme.example", "lee@acme.example"} {
		if got[owner] != 1 {
			t.Errorf("%s got the week %d times after the dead console's claim ran out, want once: %+v", owner, got[owner], msgs)
		}
	}

	// The week is posted: a later console sends none of it again.
	for _, m := range runConsoleAt(t, dir, "2026-12-07T16:00:00Z", ":advance 2h\n:now\n") {
		if strings.Contains(m.Text, "2026-W49") {
			t.Errorf("sent again after the week was posted: %+v", m)
		}
	}
}
