package slack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack/slackutilsx"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// im posts the message event Slack sends when user writes text to the app in its Messages tab
// (with bot set: when a bot, the app itself among them, posts there), and waits for its work.
func (e *env) im(user, text string, bot bool) {
	e.t.Helper()
	e.imSent(user, slackutilsx.EscapeMessage(text), bot)
}

// appUser is the app's bot user, as the authorizations of the events Slack sends name it.
const appUser = "UQMAPP"

// imSent is im with the text as Slack sends it (escaped, a mention as <@U…>).
func (e *env) imSent(user, sent string, bot bool) {
	e.t.Helper()
	e.deliverIM(user, sent, bot)
	e.wait()
}

// deliverIM is imSent without waiting for the message's work.
func (e *env) deliverIM(user, sent string, bot bool) {
	e.t.Helper()
	ev := map[string]any{"type": "message", "channel": dm(user), "channel_type": "im", "user": user,
		"text": sent, "ts": fmt.Sprintf("%d.000100", time.Now().UnixNano()), "event_ts": "1.0"}
	if bot {
		ev["bot_id"] = "BQM"
	}
	cb := map[string]any{"type": "event_callback", "team_id": "T1", "api_app_id": "A1",
		"event_id": "EvIM" + e.newTrigger(), "event_time": 1, "event": ev,
		"authorizations": []map[string]any{{"team_id": "T1", "user_id": appUser, "is_bot": true}}}
	if e.unauthorized {
		delete(cb, "authorizations")
	}
	body, _ := json.Marshal(cb)
	if code := e.signed("/slack/events", string(body), nil); code != http.StatusOK {
		e.t.Fatalf("message event: HTTP %d", code)
	}
}

// A message to the app in its Messages tab whose text is a /gpu command, with or without "/gpu"
// or "gpu" in front, runs as that command for its sender, and the answer comes in the DM.
func TestADirectMessageThatIsACommandRunsInSlack(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.im("UALICE", "request 1 interactive for 1h", false)
	ls := e.leases()
	if len(ls) != 1 || ls[0].User != "alice@acme.example" {
		t.Fatalf("leases %+v; want alice's", ls)
	}
	posts := e.postsTo(dm("UALICE"))
	if len(posts) == 0 || !strings.Contains(posts[len(posts)-1].Text, ls[0].ID.String()) {
		t.Fatalf("the DM holds %+v; want the answer naming %s", posts, ls[0].ID.String())
	}
	for _, text := range []string{"gpu list", "/gpu list", "List"} {
		before := len(e.postsTo(dm("UALICE")))
		e.im("UALICE", text, false)
		posts := e.postsTo(dm("UALICE"))
		if len(posts) != before+1 || !strings.Contains(posts[before].Text, ls[0].ID.String()) {
			t.Errorf("%q: the DM holds %+v; want the list with %s", text, posts[before:], ls[0].ID.String())
		}
	}
}

// Any other message to the app gets one sentence saying how to ask, with a request that works
// for its sender as the example, and does not repeat what was written (a mention would ping);
// the app's own messages, and other bots', are not answered, so no two bots answer each other.
func TestADirectMessageThatIsNoCommandSaysHowToAskInSlack(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.im("UBOB", "hi <!channel> can I get a GPU?", false)
	posts := e.postsTo(dm("UBOB"))
	if len(posts) != 1 {
		t.Fatalf("%d answers, want one: %+v", len(posts), posts)
	}
	text := posts[0].Text
	if strings.Contains(text, "<!channel>") || strings.Contains(text, "@channel") || strings.Contains(text, "GPU?") {
		t.Errorf("the answer repeats what was written: %q", text)
	}
	_, example, _ := strings.Cut(text, "`")
	example, _, found := strings.Cut(example, "`")
	if !found || !strings.Contains(text, "help") {
		t.Fatalf("the answer %q has no example and no pointer to help", text)
	}
	if len(e.leases()) != 0 {
		t.Fatal("a lease was made")
	}
	e.im("UBOB", example, false)
	if ls := e.leases(); len(ls) != 1 || ls[0].User != "bob@acme.example" {
		t.Errorf("the example %q, sent back, made %+v; want bob's lease", example, ls)
	}
	before := len(e.postsTo(dm("UBOB")))
	e.im("UBOB", "L-1 is active: 1 × interactive", true)
	e.im("UBOB", "help", true)
	if got := e.postsTo(dm("UBOB"))[before:]; len(got) != 0 {
		t.Errorf("answered a bot's message: %+v", got)
	}
}

// On another policy (other classes, teams and people), the example a message that is no command
// is answered with is a request of that policy that works for its sender when sent back.
func TestTheExampleForAMessageWorksOnAnotherPolicy(t *testing.T) {
	e := newAndesEnv(t)
	e.im("UJUAN", "hola, ¿me das una GPU?", false)
	posts := e.postsTo(dm("UJUAN"))
	if len(posts) != 1 {
		t.Fatalf("%d answers, want one: %+v", len(posts), posts)
	}
	_, example, _ := strings.Cut(posts[0].Text, "`")
	example, _, found := strings.Cut(example, "`")
	if !found {
		t.Fatalf("no example in %q", posts[0].Text)
	}
	e.im("UJUAN", example, false)
	if ls := e.leases(); len(ls) != 1 || ls[0].User != "juan_perez@andes.example" {
		t.Errorf("the example %q, sent back, made %+v; want juan's lease; answers %+v", example, ls, e.postsTo(dm("UJUAN")))
	}
}
