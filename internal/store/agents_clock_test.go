package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store"
)

// A node's token row keeps nothing by the node's own clock: the newest report's time and number
// by that clock (last_report_at, last_seq) were read by nothing, and a node whose clock ran ahead
// and was set back left them stuck ahead, its number that of a run long gone. What says a node
// reports is when its last report came in on the service's clock.
func TestAgentTokensKeepNothingByTheNodesClock(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db, rep := replayEnv(t, url)
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		record(t, db, rep("a1b2", 7, t0.Add(365*24*time.Hour), t0, 50)) // a clock a year ahead
		record(t, db, rep("c3d4", 1, t0.Add(time.Minute), t0.Add(time.Minute), 50))
		rows, err := store.SQLX(db).QueryContext(t.Context(), `SELECT * FROM agent_tokens`)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"last_report_at", "last_seq"} {
			if slices.Contains(cols, c) {
				t.Errorf("agent_tokens still has %s, by the node's clock: %v", c, cols)
			}
		}
		ts, err := db.AgentTokens(t.Context())
		if err != nil || len(ts) != 1 || !ts[0].LastReceivedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("AgentTokens = %+v, %v; want edge-7's last report in at %s", ts, err, t0.Add(time.Minute))
		}
	})
}
