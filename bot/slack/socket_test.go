package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestSocketMode: over a Socket Mode WebSocket (slacktest's), a slash command envelope is
// acknowledged with its envelope id, does the same work as over HTTP, and a retried envelope
// makes no second lease.
func TestSocketMode(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.current().RunSocketMode(ctx, slackbot.SocketPingInterval(time.Minute)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunSocketMode: %v", err)
		}
	}()

	trigger := e.newTrigger()
	envelope := func(id string, retry int) string {
		b, _ := json.Marshal(map[string]any{
			"type": "slash_commands", "envelope_id": id, "accepts_response_payload": true, "retry_attempt": retry,
			"payload": map[string]any{"command": "/gpu", "text": "request 1 interactive for 2h", "user_id": "UALICE",
				"channel_id": "CGENERAL", "trigger_id": trigger, "response_url": e.slack.responseURL(trigger)},
		})
		return string(b)
	}
	acked := func(id string) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case m := <-e.slack.srv.SeenFeed:
				if strings.Contains(m, `"envelope_id":"`+id+`"`) {
					return
				}
			case <-timeout:
				t.Fatalf("envelope %s was not acknowledged", id)
			}
		}
	}
	e.slack.srv.SendToWebsocket(envelope("env-1", 0))
	acked("env-1")
	e.wait()
	e.slack.srv.SendToWebsocket(envelope("env-2", 1))
	acked("env-2")
	e.wait()

	ls := e.leases()
	if len(ls) != 1 || ls[0].User != "alice@acme.example" {
		t.Fatalf("leases = %+v", ls)
	}
	if r := e.responseTo(trigger); !strings.Contains(r.Text, ls[0].ID.String()+" is active") {
		t.Errorf("answer = %q", r.Text)
	}
}
