package slack_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// The request form opens at once, even when every worker is busy: the estimate waits for a
// worker, the form does not.
func TestRequestFormOpensWhileWorkersAreBusy(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	release := make(chan struct{})
	var once sync.Once
	busy := bot.HandlerFunc(func(ctx context.Context, req bot.Request) []bot.Reply {
		if strings.Contains(req.Text, "slow") {
			<-release
		}
		return e.bot.Handle(ctx, req)
	})
	e.useHTTPAdapter(busy, func(c *slackbot.Config) {
		c.MaxWork, c.Choices = 1, slackbot.Choices{Classes: []slackbot.Choice{{Value: "interactive"}, {Value: "train"}}}
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	e.command("UBOB", "help slow") // holds the only worker
	trigger := e.command("UALICE", "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, _, views := e.slack.snapshot()
		if len(views) > 0 {
			if views[0].Method != "open" || views[0].Trigger != trigger || !strings.Contains(textIn([]map[string]any{views[0].View}), "Calculating") {
				t.Fatalf("first view call %+v", views[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the form did not open while the worker was busy")
		}
		time.Sleep(20 * time.Millisecond)
	}
	once.Do(func() { close(release) })
	e.wait()
	_, _, _, views := e.slack.snapshot()
	if last := views[len(views)-1]; last.Method != "update" || !strings.Contains(textIn([]map[string]any{last.View}), "1 × interactive for 2h") {
		t.Errorf("the estimate never filled the form in: %+v", last)
	}
}

// A 429 on views.open is retried only while the trigger id can still open a form; past that the
// user is told to type the request, with an example that works.
func TestRequestFormRetriesOnlyWhileTheTriggerLives(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.slack.limit("views.open", 1)
	e.command("UALICE", "")
	e.wait()
	_, _, _, views := e.slack.snapshot()
	if len(views) == 0 || views[0].Method != "open" {
		t.Fatalf("one 429 of a second: the form should open on the retry: %+v", views)
	}

	e = newEnv(t, storetest.SQLite(t))
	e.slack.limit("views.open", 5)
	trigger := e.command("UALICE", "")
	e.wait()
	e.slack.mu.Lock()
	calls := e.slack.viewCalls["open"]
	e.slack.mu.Unlock()
	if calls > 3 {
		t.Errorf("views.open was called %d times for one trigger; a trigger lives 3 s and each retry waits 1 s", calls)
	}
	r := e.responseTo(trigger)
	if !strings.Contains(r.Text, "could not be opened; type the request instead. Example: `/gpu request 1 interactive for 2h`") {
		t.Errorf("the user was not told what to type: %+v", r)
	}
}

// The request form starts at a length the first class allows without approval: 2h, or the
// class's max_duration where that is shorter, offered in the menu.
func TestRequestFormStartsWithinTheFirstClassLimit(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.useHTTPAdapter(e.bot, func(c *slackbot.Config) {
		c.Choices = slackbot.Choices{Classes: []slackbot.Choice{{Value: "quick"}}, DefaultDuration: "1h30m"}
	})
	e.command("UALICE", "")
	e.wait()
	_, _, _, views := e.slack.snapshot()
	blocks, _ := views[0].View["blocks"].([]any)
	var initial string
	for _, b := range blocks {
		el, _ := b.(map[string]any)["element"].(map[string]any)
		if el["action_id"] == "qm.form.duration" {
			opt, _ := el["initial_option"].(map[string]any)
			initial, _ = opt["value"].(string)
		}
	}
	if initial != "1h30m" {
		t.Errorf("the form starts at %q, want 1h30m: %s", initial, textIn([]map[string]any{views[0].View}))
	}
}

// initialOf is the value a form's field starts at: its menu's initial option, or its text.
func initialOf(v map[string]any, action string) string {
	blocks, _ := v["blocks"].([]any)
	for _, b := range blocks {
		el, _ := b.(map[string]any)["element"].(map[string]any)
		if el["action_id"] != action {
			continue
		}
		if opt, ok := el["initial_option"].(map[string]any); ok {
			s, _ := opt["value"].(string)
			return s
		}
		s, _ := el["initial_value"].(string)
		return s
	}
	return ""
}

// lastOpened is the form most recently opened.
func (e *env) lastOpened() map[string]any {
	e.t.Helper()
	_, _, _, views := e.slack.snapshot()
	for i := len(views) - 1; i >= 0; i-- {
		if views[i].Method == "open" {
			return views[i].View
		}
	}
	e.t.Fatal("no form was opened")
	return nil
}

// The request form starts on the class that "/gpu request" naming no class would get: with the
// team's interactive GPUs all held, on train, as the typed request goes; with no class having
// room, on the catalog's first class.
func TestRequestFormStartsOnTheClassWithRoom(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	granted := func(text string) string {
		t.Helper()
		trigger := e.command("UALICE", text)
		e.wait()
		r := e.responseTo(trigger)
		if !strings.Contains(r.Text, "is active") {
			t.Fatalf("/gpu %s: %s", text, r.Text)
		}
		return r.Text
	}
	e.command("UALICE", "")
	e.wait()
	if c := initialOf(e.lastOpened(), "qm.form.class"); c != "interactive" {
		t.Fatalf("with room everywhere the form starts on %q, want interactive", c)
	}

	for range 4 { // team vision may hold 4 interactive GPUs at once
		granted("request 1 interactive for 1h")
	}
	e.command("UALICE", "")
	e.wait()
	form := e.lastOpened()
	if c := initialOf(form, "qm.form.class"); c != "train" {
		t.Errorf("with vision's interactive GPUs all held the form starts on %q, want train", c)
	}
	if d := initialOf(form, "qm.form.duration"); d != "2h" {
		t.Errorf("the form starts at %q, want 2h", d)
	}
	if typed := granted("request 1 for 1h"); !strings.Contains(typed, "× train") {
		t.Errorf("the typed request naming no class went elsewhere than the form: %s", typed)
	}

	granted("request 8 train for 1h")
	granted("request 7 train for 1h") // 16 of vision's 16 train GPUs
	e.command("UALICE", "")
	e.wait()
	if c := initialOf(e.lastOpened(), "qm.form.class"); c != "interactive" {
		t.Errorf("with no class having room the form starts on %q, want interactive, the first", c)
	}
}

// A form that starts on another class than the first starts at that class's own length.
func TestRequestFormStartsAtTheLengthOfItsClass(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var asked []string
	e.useHTTPAdapter(e.bot, func(c *slackbot.Config) {
		c.Choices = slackbot.Choices{Classes: []slackbot.Choice{{Value: "interactive", Duration: "2h"}, {Value: "train", Duration: "45m"}}, DefaultDuration: "2h"}
		c.FormClass = func(_ context.Context, req bot.Request) (string, bool) {
			asked = append(asked, req.User)
			return "train", true
		}
	})
	e.command("UALICE", "")
	e.wait()
	form := e.lastOpened()
	if c, d := initialOf(form, "qm.form.class"), initialOf(form, "qm.form.duration"); c != "train" || d != "45m" {
		t.Errorf("the form starts on %s for %s, want train for 45m", c, d)
	}
	if len(asked) != 1 || asked[0] != "alice@acme.example" {
		t.Errorf("the class was asked for %v, want alice@acme.example", asked)
	}
}

// Two changes to the request form sent from the same version of it (the second before the first
// one's estimate landed) leave the form with the estimate of the last change, the one its fields
// show, not the first one's.
func TestTheFormShowsTheEstimateOfItsLastChange(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.slack.mu.Lock()
	e.slack.checkHashes = true
	e.slack.mu.Unlock()
	e.command("UALICE", "")
	e.wait()
	_, _, _, views := e.slack.snapshot()
	if len(views) != 2 {
		t.Fatalf("views = %+v", views)
	}
	meta, hash := views[0].View["private_metadata"], "h2" // the form as its estimate left it
	change := func(gpus string) {
		t.Helper()
		code, _ := e.interaction(map[string]any{
			"type": "block_actions", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UALICE"},
			"container": map[string]any{"type": "view", "view_id": "V1"},
			"view":      map[string]any{"id": "V1", "hash": hash, "callback_id": "qm.request", "private_metadata": meta, "state": stateOf("train", gpus, "8h")},
			"actions":   []any{map[string]any{"type": "number_input", "action_id": "qm.form.gpus", "block_id": "qm.form.gpus", "value": gpus}},
		})
		if code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
		e.wait()
	}
	change("2")
	change("3")
	_, _, _, views = e.slack.snapshot()
	if last := textIn([]map[string]any{views[len(views)-1].View}); !strings.Contains(last, "3 × train for 8h") {
		t.Errorf("the form shows 3 GPUs but its estimate is for another number: %s", last)
	}
}
