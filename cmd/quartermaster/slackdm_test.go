package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A message written to the Slack app in its Messages tab whose text is a /gpu command without the
// slash runs as that command through serve's own wiring: the lease is made for its sender.
func TestServeRunsACommandWrittenToTheSlackApp(t *testing.T) {
	t.Parallel()
	api := newSlackAPI(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-test", SigningSecret: "shh", APIURL: api.URL}}
	o.app.flags.db = db
	s := startServe(t, o)
	body := `{"type":"event_callback","team_id":"T1","event_id":"EvIM1","event_time":1,"event":{"type":"message","channel":"D1","channel_type":"im","user":"UALICE","text":"request 1 interactive for 2h","ts":"1.000100"}}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte("shh"))
	fmt.Fprintf(m, "v0:%s:%s", ts, body)
	req, _ := http.NewRequest(http.MethodPost, s.url+"/slack/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if ls := leasesIn(t, db); len(ls) != 1 || ls[0].User != "alice@acme.example" {
		t.Fatalf("leases = %+v; want alice's", ls)
	}
}
