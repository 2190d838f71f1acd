package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/reports/showback"
)

// metricValue is the value of one series on a /metrics body (name with its labels as written);
// -1 when it is absent.
func metricValue(body, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// serve's /metrics tells a platform admin how the weekly showback went: a budget owner Slack
// cannot reach is a DM that failed, counted, and their week stays pending (it is not posted in
// full); once they are back, serve started again sends the missing DM at its catch-up, nothing
// is pending and the end of the latest week posted is that week's end. (Borealis's policy: the
// week is posted on Fridays at 16:00 in Berlin to #finance, with a DM to each budget owner.)
func TestServeMetricsTellTheWeeklyShowback(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../commands/testdata/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "dm_budget_owners: false", "dm_budget_owners: true", 1)
	pol, err := policy.Load([]byte(src), "other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	polFile := filepath.Join(dir, "borealis.yaml")
	if err := os.WriteFile(polFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	st, err := store.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A lease in the week before last: that week and last week are due (or last week alone).
	at := time.Now().Add(-9 * 24 * time.Hour)
	l := &qm.Lease{User: "sam@borealis.example", Team: "speech", Class: "dev", GPUs: 1, State: qm.Expired,
		CreatedAt: at, StartedAt: at, ExpiresAt: at.Add(2 * time.Hour), EndedAt: at.Add(2 * time.Hour)}
	if err := st.Update(context.Background(), nil, func(tx qm.Tx) error { return tx.CreateLease(context.Background(), l) }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	loc := pol.Location
	sched, err := schedule.ParseWeekly(pol.Reports.Showback.Schedule, loc)
	if err != nil {
		t.Fatal(err)
	}
	latest := showback.WeekOf(sched.Last(time.Now()), loc).Prev()
	due := 0
	for w := showback.WeekOf(at, loc); !latest.Before(w); w = w.Next() {
		due++
	}
	if due == 0 {
		t.Fatal("no week is due")
	}

	api := newShowbackSlack(t)
	api.unreachable = map[string]bool{"olga@borealis.example": true}
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-borealis", SigningSecret: "borealis-secret", APIURL: api.URL}}
	o.app.flags.db, o.app.flags.policy = db, polFile
	// scrape waits for the start's catch-up to have tried every message of every due week, as
	// /metrics says it: every series of want at its value; it fails the test with the series that
	// are not when a minute passes.
	scrape := func(s *served, when string, want map[string]float64) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			code, body := getBody(t, s.url+"/metrics")
			if code != http.StatusOK {
				t.Fatalf("/metrics: HTTP %d", code)
			}
			var off []string
			for series, v := range want {
				if got := metricValue(body, series); got != v {
					off = append(off, fmt.Sprintf("%s is %v, want %v", series, got, v))
				}
			}
			if len(off) == 0 {
				return body
			}
			if time.Now().After(deadline) {
				slices.Sort(off)
				t.Fatalf("%s, a minute after the start: %s", when, strings.Join(off, "; "))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	s := startServe(t, o)
	body := scrape(s, "with olga unreachable", map[string]float64{
		`quartermaster_showback_messages_failed_total{kind="dm"}`:           float64(due), // olga's, of each week
		`quartermaster_showback_messages_sent_total{kind="channel"}`:        float64(due),
		`quartermaster_showback_messages_sent_total{kind="dm"}`:             float64(3 * due), // pete, sven and vera
		`quartermaster_showback_messages_failed_total{kind="channel"}`:      0,
		`quartermaster_showback_messages_failed_total{kind="team_channel"}`: 0,
		`quartermaster_showback_posts_pending`:                              float64(due),
		`quartermaster_showback_last_posted_week_end_timestamp_seconds`:     -1, // absent: no week was posted in full
	})
	promtoolCheck(t, body)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	api.mu.Lock()
	api.unreachable = nil
	api.mu.Unlock()
	s = startServe(t, o)
	scrape(s, "with olga back", map[string]float64{
		`quartermaster_showback_messages_sent_total{kind="dm"}`:         float64(due), // olga's, of each week
		`quartermaster_showback_messages_failed_total{kind="dm"}`:       0,
		`quartermaster_showback_messages_sent_total{kind="channel"}`:    0, // posted already
		`quartermaster_showback_posts_pending`:                          0,
		`quartermaster_showback_last_posted_week_end_timestamp_seconds`: float64(latest.End(loc).Unix()),
	})
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}
