package ingest_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A report claiming a longer interval than any agent runs with (interval_s 3600, where --interval
// stops at 10 minutes) stands for 10 minutes: the node's silence is noticed as it would be for an
// agent on --interval 10m (after 30 minutes), not three hours later.
func TestAnIntervalLongerThanAnyAgentsDoesNotHideASilentNode(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		e.report(l, e.clock.Now(), time.Hour, 80)
		for range 80 { // 40 minutes of silence
			e.clock.Advance(30 * time.Second)
			e.tick()
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 1 {
			t.Errorf("a node silent for 40 minutes after a report claiming a 1-hour interval: %d notices to the platform channel, want 1", len(n))
		}
	})
}
