package slack_test

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/testkit"
)

// An app whose request URLs were set by hand to the wrong endpoint (Interactivity pointed at
// /slack/commands, as one-endpoint apps do) still works: each delivery is handled as what it is,
// wherever it arrives, and the log says which URL to set. Before, a click that arrived at the
// commands URL was taken for Slack's certificate check and did nothing, and nobody was told.
func TestADeliveryAtTheWrongURLIsHandledAsWhatItIs(t *testing.T) {
	e := newHarborEnv(t)
	var log testkit.SyncBuffer
	e.useHTTPAdapter(e.bot, func(c *slackbot.Config) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) })

	// A slash command posted to the interactivity URL.
	trigger := e.newTrigger()
	if code := e.signed("/slack/interactions", e.commandBody("UWIREMU", "request 1 bench for 1h", trigger), nil); code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	card := e.responseTo(trigger)
	if ls := e.leases(); len(ls) != 1 || ls[0].State != qm.Active {
		t.Fatalf("a command at the interactivity URL: leases %+v, answer %q", ls, card.Text)
	}
	if !strings.Contains(log.String(), "/slack/commands") {
		t.Errorf("the log does not name the URL to set for the slash command:\n%s", log.String())
	}

	// Its Release button, clicked, posted to the commands URL.
	b, _ := json.Marshal(e.clickPayload("UWIREMU", e.newTrigger(), card, findButton(t, card.Blocks, "/gpu release L-1")))
	before := len(log.String())
	if code := e.send("/slack/commands", url.Values{"payload": {string(b)}}.Encode(), secret, time.Now(), nil); code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	if l := e.lease("L-1"); l.State != qm.Released {
		t.Errorf("a click at the commands URL left L-1 %s", l.State)
	}
	if got := log.String()[before:]; !strings.Contains(got, "/slack/interactions") || !strings.Contains(got, "Interactivity") {
		t.Errorf("the log does not name the URL to set for interactivity:\n%s", got)
	}
}

// A slash command whose Content-Type a proxy changed is still read: the signature vouches for
// the body, and the body is the form Slack sent.
func TestACommandWithAnotherContentTypeIsStillRead(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	trigger := e.newTrigger()
	body := e.commandBody("UALICE", "request 1 interactive for 2h", trigger)
	if code := e.send("/slack/commands", body, secret, time.Now(), map[string]string{"Content-Type": "text/plain; charset=utf-8"}); code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	if ls := e.leases(); len(ls) != 1 {
		t.Fatalf("%d leases after a command sent as text/plain", len(ls))
	}
	if r := e.responseTo(trigger); !strings.Contains(r.Text, "is active") {
		t.Errorf("answer %q", r.Text)
	}
}
