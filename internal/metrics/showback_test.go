package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The weekly showback's metrics: every kind of message at 0 from the start, so an alert on the
// increase of failures sees the first one; a message the chat refused (a budget owner it cannot
// reach) counted as failed, one it took as sent; the weeks due and not posted, and the end of the
// latest week posted, read from the database at each scrape (and no such time before any week
// was posted). The scrape passes promtool check metrics.
func TestShowbackMetrics(t *testing.T) {
	m := New(Build{Version: "test"})
	posted := time.Date(2026, 3, 9, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	st := ShowbackState{Unposted: 2}
	m.Showback([]string{"channel", "dm", "team_channel"}, func(context.Context) (ShowbackState, error) { return st, nil })
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	body := scrape()
	for _, want := range []string{
		`quartermaster_showback_messages_sent_total{kind="channel"} 0`,
		`quartermaster_showback_messages_failed_total{kind="dm"} 0`,
		`quartermaster_showback_messages_failed_total{kind="team_channel"} 0`,
		`quartermaster_showback_posts_pending 2`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "quartermaster_showback_last_posted_week_end_timestamp_seconds ") {
		t.Errorf("/metrics gives the end of a week posted before any was:\n%s", body)
	}

	m.ShowbackMessage("dm", errors.New("slack: cannot reach olga@borealis.example: users_not_found"))
	m.ShowbackMessage("dm", nil)
	m.ShowbackMessage("channel", nil)
	st = ShowbackState{PostedThrough: posted}
	body = scrape()
	for _, want := range []string{
		`quartermaster_showback_messages_failed_total{kind="dm"} 1`,
		`quartermaster_showback_messages_sent_total{kind="dm"} 1`,
		`quartermaster_showback_messages_sent_total{kind="channel"} 1`,
		`quartermaster_showback_messages_failed_total{kind="channel"} 0`,
		`quartermaster_showback_posts_pending 0`,
		`quartermaster_showback_last_posted_week_end_timestamp_seconds 1.7730108e+09`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (Debian package prometheus); scripts/test.sh installs it")
		}
		t.Skip("promtool is not installed; apt-get install prometheus")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// A showback state that cannot be read leaves its gauges out of the scrape and is counted with
// the other database reads that failed.
func TestShowbackStateErrorsAreCounted(t *testing.T) {
	m := New(Build{})
	m.Showback([]string{"dm"}, func(context.Context) (ShowbackState, error) { return ShowbackState{}, errors.New("database down") })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if strings.Contains(rec.Body.String(), "quartermaster_showback_posts_pending ") {
		t.Error("weeks unposted shown while the database is down")
	}
	if got := value(t, m, "quartermaster_state_read_errors_total"); got < 1 {
		t.Errorf("the failed read is not counted: %v", got)
	}
}
