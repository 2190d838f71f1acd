package slack_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// stateOf is a modal's state as Slack sends it back.
func stateOf(class, gpus, duration string) map[string]any {
	sel := func(v string) map[string]any {
		return map[string]any{"type": "static_select", "selected_option": map[string]any{"value": v}}
	}
	return map[string]any{"values": map[string]any{
		"qm.form.class":    map[string]any{"qm.form.class": sel(class)},
		"qm.form.gpus":     map[string]any{"qm.form.gpus": map[string]any{"type": "number_input", "value": gpus}},
		"qm.form.duration": map[string]any{"qm.form.duration": sel(duration)},
		"qm.form.template": map[string]any{"qm.form.template": map[string]any{"type": "plain_text_input", "value": "jupyterlab"}},
		"qm.form.team":     map[string]any{"qm.form.team": map[string]any{"type": "static_select"}},
		"qm.form.data":     map[string]any{"qm.form.data": map[string]any{"type": "plain_text_input", "value": ""}},
	}}
}

// TestRequestModal: "/gpu" alone opens the request modal at once, before the estimate is known,
// and the estimate fills it in with views.update; changing a field updates the estimate in place;
// submitting makes the request and DMs the result.
func TestRequestModal(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	trigger := e.command("UALICE", "")
	e.wait()
	_, _, responses, views := e.slack.snapshot()
	if len(views) != 2 || views[0].Method != "open" || views[0].Trigger != trigger || views[1].Method != "update" || views[1].ViewID != "V1" {
		t.Fatalf("views = %+v; want the form opened, then updated with its estimate", views)
	}
	if len(responses) != 0 {
		t.Errorf("opening the modal also answered: %+v", responses)
	}
	opened := textIn([]map[string]any{views[0].View})
	for _, want := range []string{"qm.form.class", "qm.form.gpus", "qm.form.duration", "qm.form.template", "qm.form.team", "qm.form.data",
		`"dispatch_action":true`, "Calculating the cost and the predicted wait"} {
		if !strings.Contains(opened, want) {
			t.Errorf("the modal lacks %s: %s", want, opened)
		}
	}
	if filled := textIn([]map[string]any{views[1].View}); !strings.Contains(filled, "1 × interactive for 2h: $1.80") {
		t.Errorf("the update lacks the estimate: %s", filled)
	}

	// The user picks 2 train GPUs for 8h: a block_actions from the view, which updates it.
	change := map[string]any{
		"type": "block_actions", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UALICE"},
		"container": map[string]any{"type": "view", "view_id": "V1"},
		"view": map[string]any{"id": "V1", "hash": "h1", "callback_id": "qm.request", "private_metadata": views[0].View["private_metadata"],
			"state": stateOf("train", "2", "8h")},
		"actions": []any{map[string]any{"type": "static_select", "action_id": "qm.form.duration", "block_id": "qm.form.duration", "selected_option": map[string]any{"value": "8h"}}},
	}
	if code, _ := e.interaction(change); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	_, _, _, views = e.slack.snapshot()
	if len(views) != 3 || views[2].Method != "update" || views[2].ViewID != "V1" {
		t.Fatalf("views = %+v", views)
	}
	if s := textIn([]map[string]any{views[2].View}); !strings.Contains(s, "2 × train for 8h: $56.00") || !strings.Contains(s, "Predicted wait") {
		t.Errorf("the updated estimate: %s", s)
	}
	if n := len(e.leases()); n != 0 {
		t.Fatalf("the estimate made %d leases", n)
	}

	// A bad number is refused in the modal, with nothing made.
	submit := func(gpus string) (int, string) {
		return e.interaction(map[string]any{
			"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UALICE"},
			"view": map[string]any{"id": "V1", "hash": "h2", "callback_id": "qm.request", "private_metadata": views[0].View["private_metadata"],
				"state": stateOf("train", gpus, "8h")},
		})
	}
	if code, body := submit("0"); code != http.StatusOK || !strings.Contains(body, `"qm.form.gpus"`) {
		t.Fatalf("0 GPUs: HTTP %d %s", code, body)
	}
	if code, body := submit("2"); code != http.StatusOK || strings.TrimSpace(body) != "" {
		t.Fatalf("submit: HTTP %d %q", code, body)
	}
	e.wait()
	ls := e.leases()
	if len(ls) != 1 || ls[0].GPUs != 2 || ls[0].Class != "train" || ls[0].Template != "jupyterlab" || ls[0].Duration.Hours() != 8 {
		t.Fatalf("leases = %+v", ls)
	}
	dms := e.postsTo(dm("UALICE"))
	if len(dms) != 1 || !strings.Contains(dms[0].Text, ls[0].ID.String()+" is active") {
		t.Fatalf("alice's DMs: %+v", dms)
	}
	// Slack may deliver the submission twice; it still makes one lease.
	submit("2")
	e.wait()
	if n := len(e.leases()); n != 1 {
		t.Fatalf("%d leases after a repeated submission", n)
	}
}

// TestAppHome: opening the Home tab publishes my leases and my team's quota; a command and a
// notice that concern me refresh it; a repeated event is dropped.
func TestAppHome(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.command("UALICE", "request 1 interactive for 2h")
	e.wait()
	opened := `{"type":"event_callback","event_id":"Ev1","event_time":1,"event":{"type":"app_home_opened","user":"UALICE","channel":"DUALICE","tab":"home","event_ts":"1.0"}}`
	for _, h := range []map[string]string{nil, {"X-Slack-Retry-Num": "1"}} {
		if code := e.signed("/slack/events", opened, h); code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
	}
	e.wait()
	publishes := func() []view {
		_, _, _, vs := e.slack.snapshot()
		var out []view
		for _, v := range vs {
			if v.Method == "publish" {
				out = append(out, v)
			}
		}
		return out
	}
	ps := publishes()
	if len(ps) != 1 || ps[0].User != "UALICE" || ps[0].View["type"] != "home" {
		t.Fatalf("publishes = %+v", ps)
	}
	home := textIn([]map[string]any{ps[0].View})
	for _, want := range []string{"Your leases", "L-1", "active", "Your team's quota", "1 of 4 GPUs in use", "qm.open.request"} {
		if !strings.Contains(home, want) {
			t.Errorf("the Home tab lacks %q: %s", want, home)
		}
	}

	// A command refreshes it.
	e.command("UALICE", "release L-1")
	e.wait()
	ps = publishes()
	if len(ps) != 2 || !strings.Contains(textIn([]map[string]any{ps[1].View}), "released") {
		t.Fatalf("after release: %d publishes", len(ps))
	}
	// So does a notice to her.
	if err := e.current().Send(context.Background(), bot.Reply{To: "alice@acme.example", Text: "L-1 expired."}); err != nil {
		t.Fatal(err)
	}
	e.wait()
	if n := len(publishes()); n != 3 {
		t.Fatalf("after a notice: %d publishes, want 3", n)
	}
	// Someone who never opened the tab gets no publishes.
	e.command("UBOB", "list")
	e.wait()
	for _, p := range publishes() {
		if p.User != "UALICE" {
			t.Errorf("published a Home tab for %s, who never opened it", p.User)
		}
	}

	// The tab's button opens the request modal.
	b := findButton(t, []map[string]any{{"elements": ps[0].View["blocks"].([]any)[1].(map[string]any)["elements"]}}, "open")
	if code, _ := e.interaction(map[string]any{"type": "block_actions", "trigger_id": "Thome", "user": map[string]any{"id": "UALICE"},
		"container": map[string]any{"type": "view", "view_id": "VH"}, "view": map[string]any{"id": "VH", "type": "home"},
		"actions": []any{map[string]any{"type": "button", "action_id": b.ActionID, "block_id": "home.actions", "value": b.Value}}}); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	_, _, _, vs := e.slack.snapshot()
	if open := vs[len(vs)-2]; open.Method != "open" || open.Trigger != "Thome" {
		t.Errorf("the Home tab's button: %+v", open)
	}
}

// TestIdleWarningButtons: an idle warning carries Keep and Release; Keep runs as the clicking user.
func TestIdleWarningButtons(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.command("UALICE", "request 1 interactive for 2h")
	e.wait()
	l := e.leases()[0]
	n := qm.Notice{Kind: qm.NoticeIdleWarning, To: []string{"alice@acme.example"}, Lease: l}
	for _, r := range e.bot.RenderNotice(context.Background(), n) {
		if err := e.current().Send(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	dms := e.postsTo(dm("UALICE"))
	if len(dms) != 1 {
		t.Fatalf("DMs = %+v", dms)
	}
	id := l.ID.String()
	if b := findButton(t, dms[0].Blocks, "/gpu keep "+id); b.Style != "primary" {
		t.Errorf("keep style %q", b.Style)
	}
	release := findButton(t, dms[0].Blocks, "/gpu release "+id)
	if release.Style != "danger" {
		t.Errorf("release style %q", release.Style)
	}
	// Bob cannot release alice's lease by clicking her button.
	e.click("UBOB", dms[0], release)
	e.wait()
	if got := e.lease(id); got.State != qm.Active {
		t.Fatalf("bob's click: %s", got.State)
	}
	e.click("UALICE", dms[0], release)
	e.wait()
	if got := e.lease(id); got.State != qm.Released {
		t.Fatalf("alice's click: %s", got.State)
	}
}

// TestRateLimited: Slack answers 429 to the first posts; every notice still arrives once, in order.
func TestRateLimited(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.slack.limit("chat.postMessage", 2)
	for i := range 5 {
		if err := e.current().Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "notice " + string(rune('A'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	got := e.postsTo("CVISIONGPU")
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Text)
	}
	if strings.Join(texts, ",") != "notice A,notice B,notice C,notice D,notice E" {
		t.Fatalf("posted %q", texts)
	}
}

// TestANoticeGivenUpDuringARateLimitWaitIsNotPostedLater: a notice whose sender stops waiting
// while Slack's Retry-After runs (the outbox's claim is running out; it will send the notice
// again) is not posted when the wait ends: Send said it was not delivered, so posting it
// anyway would deliver it twice.
func TestANoticeGivenUpDuringARateLimitWaitIsNotPostedLater(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ctx, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	e.slack.limit("chat.postMessage", 1)
	e.slack.mu.Lock()
	e.slack.onLimited = func(string) { giveUp() }
	e.slack.mu.Unlock()
	err := e.current().Send(ctx, bot.Reply{To: "#vision-gpu", Text: "approve L-1?"})
	if err == nil {
		t.Fatal("Send reported a notice delivered that Slack refused with 429 and whose sender gave up")
	}
	e.wait()
	if got := e.postsTo("CVISIONGPU"); len(got) != 0 {
		t.Fatalf("the notice was posted %d time(s) after Send reported it not delivered (%v): the outbox will send it again", len(got), err)
	}
}

// TestUnknownUser: a Slack user with no profile email, or one the directory does not know, gets
// one clear ephemeral sentence and nothing is made.
func TestUnknownUser(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for user, want := range map[string]string{"UBOT": "shows none", "UEVE": "not in the directory", "UGHOST": "try again"} {
		trigger := e.command(user, "request 1 interactive for 2h")
		e.wait()
		r := e.responseTo(trigger)
		if !strings.Contains(r.Text, want) || r.ResponseType != "ephemeral" {
			t.Errorf("%s: answer %q (%s), want %q", user, r.Text, r.ResponseType, want)
		}
	}
	if n := len(e.leases()); n != 0 {
		t.Fatalf("%d leases", n)
	}
}

// TestUnknownUserOnTheFormAndHome: the request form's estimate and the Home tab tell a Slack user
// who cannot be identified the same sentence a command does (no email on the profile; Slack did
// not say), never an empty name or Slack's error code.
func TestUnknownUserOnTheFormAndHome(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for user, want := range map[string]string{"UBOT": "shows none", "UGHOST": "try again"} {
		e.command(user, "")
		e.wait()
		opened := `{"type":"event_callback","event_id":"Ev` + user + `","event_time":1,"event":{"type":"app_home_opened","user":"` + user + `","channel":"D` + user + `","tab":"home","event_ts":"1.0"}}`
		if code := e.signed("/slack/events", opened, nil); code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
		e.wait()
		_, _, _, views := e.slack.snapshot()
		var form, home string
		for _, v := range views {
			switch {
			case v.Method == "update":
				form = textIn([]map[string]any{v.View})
			case v.Method == "publish" && v.User == user:
				home = textIn([]map[string]any{v.View})
			}
		}
		for what, s := range map[string]string{"the form's estimate": form, "the Home tab": home} {
			if !strings.Contains(s, want) || strings.Contains(s, " is not in the directory") || strings.Contains(s, "user_not_found") {
				t.Errorf("%s: %s says %s, want %q", user, what, s, want)
			}
		}
	}
	if n := len(e.leases()); n != 0 {
		t.Fatalf("%d leases", n)
	}
}

// TestNoEmailWithSignIn: with single sign-on on, a Slack user whose profile shows no email is
// handed to the handler by chat account (so /gpu login can link it), and a notice to the person
// the link names reaches that account by DM.
func TestNoEmailWithSignIn(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var mu sync.Mutex
	var got []bot.Request
	h := bot.HandlerFunc(func(_ context.Context, req bot.Request) []bot.Reply {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, req)
		return []bot.Reply{{Ephemeral: true, Text: "Sign in with the single sign-on of Acme: https://qm.example/auth/login?t=x"}}
	})
	a := e.useHTTPAdapter(h, func(c *slackbot.Config) {
		c.SignIn = func() bool { return true }
		c.LinkedUser = func(_ context.Context, person string) (string, bool, error) {
			return "UBOT", person == "robot@acme.example", nil
		}
	})
	trigger := e.command("UBOT", "login")
	e.wait()
	if r := e.responseTo(trigger); !strings.Contains(r.Text, "Sign in with") {
		t.Errorf("UBOT, with no email, was answered %q", r.Text)
	}
	mu.Lock()
	if len(got) != 1 || got[0].User != "" || got[0].Account.User != "UBOT" || got[0].Account.Platform != slackbot.Platform {
		t.Errorf("the handler got %+v; want one request known by its Slack account alone", got)
	}
	mu.Unlock()
	if err := a.Send(t.Context(), bot.Reply{To: "robot@acme.example", Text: "L-7 is active."}); err != nil {
		t.Fatal(err)
	}
	e.wait()
	posts, _, _, _ := e.slack.snapshot()
	if len(posts) == 0 || posts[len(posts)-1].Channel != "DUBOT" || !strings.Contains(posts[len(posts)-1].Text, "L-7 is active.") {
		t.Errorf("the linked person's notice: %+v", posts)
	}
}

// TestEditOnlyPostsNothing: an edit-only update edits the recipient's copies of its Ref, buttons
// gone, and, where they have none, posts nothing.
func TestEditOnlyPostsNothing(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ctx := context.Background()
	ask := bot.Reply{To: "dana@acme.example", Ref: "approval:L-5", Text: "Approval needed: L-5.", Actions: []bot.Action{{Label: "Approve", Command: "/gpu approve L-5", Style: "primary"}}}
	if err := e.current().Send(ctx, ask); err != nil {
		t.Fatal(err)
	}
	e.wait()
	for _, to := range []string{"dana@acme.example", "alice@acme.example"} {
		if err := e.current().Send(ctx, bot.Reply{To: to, Ref: "approval:L-5", Update: true, EditOnly: true, Text: "L-5 is no longer yours to decide."}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	_, updates, _, _ := e.slack.snapshot()
	if len(updates) != 1 || updates[0].Channel != dm("UDANA") || !strings.Contains(textIn(updates[0].Blocks), "no longer yours") || strings.Contains(textIn(updates[0].Blocks), "Approve") {
		t.Errorf("updates = %+v; want dana's copy, without buttons", updates)
	}
	if ps := e.postsTo(dm("UALICE")); len(ps) != 0 {
		t.Errorf("alice, who had no copy, was sent %+v", ps)
	}
}
