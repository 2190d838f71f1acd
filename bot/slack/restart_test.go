package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// restartProcess replaces everything a restart replaces: a new lease service, a new /gpu handler
// and a new adapter, on the same database (and the same cluster, which outlives the process).
// Nothing held in memory survives.
func (e *env) restartProcess() {
	e.t.Helper()
	e.wait()
	old := e.svc
	e.svc = &qm.Service{Policy: old.Policy, Store: e.db, Clock: old.Clock, Backend: old.Backend, Telemetry: old.Telemetry,
		Directory: old.Directory, Logger: old.Logger}
	tpl := e.bot.Templates
	e.bot = &commands.Bot{Svc: e.svc, Logger: storetest.Logger(e.t)}
	if tpl != nil {
		commands.AddTemplates(e.bot, tpl.Catalog, workload.Settings{})
	}
	e.svc.Notifier = &commands.Notices{Bot: e.bot, Sender: bot.SenderFunc(func(ctx context.Context, r bot.Reply) error {
		return e.current().Send(ctx, r)
	})}
	e.restart()
}

// state is everything a command can change, as text: every lease of every kind with its history.
func (e *env) state() string {
	e.t.Helper()
	ls, err := e.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind})
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range ls {
		ev, err := e.svc.History(context.Background(), l.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %s %d×%s %s state=%s ext=%d exp=%s kept=%s decided=%s/%s events=%d\n", l.ID, l.Kind, l.Parent, l.GPUs, l.Class,
			l.Duration, l.State, l.Extensions, l.ExpiresAt.Format(time.RFC3339), l.KeptAt.Format(time.RFC3339), l.DecidedBy, l.DecidedAt.Format(time.RFC3339), len(ev))
	}
	return b.String()
}

// Every state-changing command and click, delivered again after the service restarted (a new
// process on the same database, which remembers no delivery it saw), changes nothing the second
// time: typed request, submit, extend (within policy and beyond it), keep, quota request,
// approve and deny, release; the Approve button, the Deny form and the Release button.
func TestRedeliveryAfterARestartChangesNothingTwice(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	commands.AddTemplates(e.bot, cat, workload.Settings{})
	clock := e.svc.Clock.(*sim.Clock)

	// deliverTwice delivers once, checks that it changed something, restarts, delivers the very
	// same delivery again (as Slack's retry would) and checks that nothing more changed.
	deliverTwice := func(what string, deliver func()) {
		t.Helper()
		before := e.state()
		deliver()
		e.wait()
		after := e.state()
		if after == before {
			t.Fatalf("%s changed nothing the first time:\n%s", what, after)
		}
		clock.Advance(time.Minute) // a repeat that acted again would leave other times
		e.restartProcess()
		deliver()
		e.wait()
		if again := e.state(); again != after {
			t.Errorf("%s delivered again after a restart changed something:\nafter the first:\n%s\nafter the repeat:\n%s", what, after, again)
		}
	}
	command := func(user, text string) func() {
		trigger := e.newTrigger()
		body := e.commandBody(user, text, trigger)
		return func() {
			if code := e.signed("/slack/commands", body, map[string]string{"X-Slack-Retry-Num": "1"}); code != http.StatusOK {
				t.Fatalf("/gpu %s: HTTP %d", text, code)
			}
		}
	}
	leaseOf := func(user string) string {
		ls := e.leases()
		return ls[len(ls)-1].ID.String()
	}

	deliverTwice("request", command("UALICE", "request 1 interactive for 2h"))
	a := leaseOf("UALICE")
	deliverTwice("submit", command("UALICE", "submit cuda-smoke"))
	deliverTwice("extend within policy", command("UALICE", "extend "+a+" 1h"))
	deliverTwice("extend beyond policy", command("UALICE", "extend "+a+" 20h"))
	// keep answers an idle warning: the lease, idle past interactive's idle_timeout, is warned first
	e.idleFor(e.lease(a), 31*time.Minute)
	if st := e.lease(a).State; st != qm.IdleWarned {
		t.Fatalf("%s idle for 31m is %s, not warned", a, st)
	}
	deliverTwice("keep", command("UALICE", "keep "+a))
	deliverTwice("quota request", command("UALICE", "quota request +1 interactive for 1d because a demo"))
	quota, err := e.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.KindQuota})
	if err != nil || len(quota) != 1 {
		t.Fatalf("quota requests: %v %v", quota, err)
	}
	deliverTwice("approve typed", command("UDANA", "approve "+quota[0].ID.String()))
	deliverTwice("release typed", command("UALICE", "release "+a))

	// Clicks: Approve on the approval post, the Deny form, Cancel on a waiting lease's card.
	id := overQuota(e)
	toDana, _ := approvalCopies(e, id)
	approve := e.clickPayload("UDANA", e.newTrigger(), toDana, findButton(t, toDana.Blocks, "/gpu approve "+id))
	deliverTwice("the Approve button", func() { e.interaction(approve) })

	e.command("UALICE", "request 4 interactive for 2h") // over quota again: one to deny
	e.wait()
	var pending string
	for _, l := range e.leases() {
		if l.State == qm.PendingApproval {
			pending = l.ID.String()
		}
	}
	if pending == "" {
		t.Fatal("no request waits for approval")
	}
	submit := map[string]any{
		"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UDANA"},
		"view": map[string]any{"id": "VDENY1", "callback_id": "qm.deny", "private_metadata": denyMeta(t, e, pending),
			"state": map[string]any{"values": map[string]any{"qm.deny.reason": map[string]any{"qm.deny.reason": map[string]any{"type": "plain_text_input", "value": "use the train class"}}}}},
	}
	deliverTwice("the Deny form", func() { e.interaction(submit) })

	e.command("UALICE", "request 1 interactive for 1h")
	e.wait()
	b := e.leases()[len(e.leases())-1].ID.String()
	_, _, responses, _ := e.slack.snapshot()
	card := responses[len(responses)-1]
	cancel := e.clickPayload("UALICE", e.newTrigger(), card, findButton(t, card.Blocks, "/gpu cancel "+b))
	deliverTwice("the Cancel button", func() { e.interaction(cancel) })
}

// denyMeta opens the Deny form for lease id as dana and returns the form's private metadata.
func denyMeta(t *testing.T, e *env, id string) string {
	t.Helper()
	var msg message
	for _, m := range e.postsTo(dm("UDANA")) {
		if strings.Contains(m.Text, "Approval needed") && strings.Contains(m.Text, id) {
			msg = m
		}
	}
	if msg.TS == "" {
		t.Fatalf("no approval post for %s", id)
	}
	e.click("UDANA", msg, findButton(t, msg.Blocks, "/gpu deny "+id))
	e.wait()
	_, _, _, views := e.slack.snapshot()
	v := views[len(views)-1]
	if v.View["callback_id"] != "qm.deny" {
		t.Fatalf("the Deny button opened %+v", v.View)
	}
	meta, _ := v.View["private_metadata"].(string)
	return meta
}

// stalled is a handler that never gets to a command: it waits until its process stops.
type stalled struct{ got chan string }

func (s stalled) Handle(ctx context.Context, req bot.Request) []bot.Reply {
	s.got <- req.Text
	<-ctx.Done()
	return nil
}

// A command acknowledged by a process that stopped before running it (a kill, a crash) is run
// by another process once the first one's claim on it is gone (here released, as a restarted
// serve releases its dead predecessor's; TestInbox checks that a claim lapses): the lease is made
// once and the answer reaches the person who asked. One acknowledged too long ago is not run;
// its sender is told so.
func TestACommandAcknowledgedBeforeAStopIsRunAfterIt(t *testing.T) {
	e := newEnv(t, storetest.Postgres(t))
	live := e.newAdapterWith(e.bot, time.Hour, 0)
	stuck := stalled{got: make(chan string, 1)}
	gone := e.newAdapterWith(stuck, time.Hour, 0)
	release := func() {
		t.Helper()
		if _, err := e.db.ReleaseDeliveryClaims(t.Context(), "slack", []string{"test"}); err != nil {
			t.Fatal(err)
		}
	}

	e.handler.Store(gone)
	trigger := e.command("UALICE", "request 1 interactive for 2h")
	<-stuck.got // acknowledged, and its work started but never finished
	e.handler.Store(live)
	old := e.adapter
	e.adapter = live
	closeNow(t, old)

	if n, err := live.Recover(t.Context()); err != nil || n != 0 {
		t.Fatalf("recovered %d commands while the first process's claim held (%v)", n, err)
	}
	release()
	if n, err := live.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands once the claim was released, want 1 (%v)", n, err)
	}
	e.wait()
	closeNow(t, gone) // the stalled work ends; what it left is not run twice
	// Forgetting a finished command is written in the background: wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		owners, err := e.db.DeliveryClaimers(t.Context(), "slack", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if len(owners) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answered command is still kept, claimed by %v", owners)
		}
	}
	release()
	if n, _ := live.Recover(t.Context()); n != 0 {
		t.Fatalf("recovered %d commands again", n)
	}
	ls := e.leases()
	if len(ls) != 1 || ls[0].User != "alice@acme.example" || ls[0].State != qm.Active {
		t.Fatalf("leases after the recovery: %+v", ls)
	}
	if r := e.responseTo(trigger); !strings.Contains(r.Text, ls[0].ID.String()+" is active") {
		t.Errorf("the answer to the recovered command: %q", r.Text)
	}

	// Too old: the sender is told, nothing is made.
	late := e.newAdapterWith(stuck, time.Hour, 0)
	e.handler.Store(late)
	e.command("UALICE", "request 1 interactive for 3h")
	<-stuck.got
	e.handler.Store(live)
	closeNow(t, late)
	release()
	tooLate := e.newAdapterWith(e.bot, time.Hour, time.Nanosecond) // anything acknowledged is too old
	defer closeNow(t, tooLate)
	if n, err := tooLate.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands, want the old one (%v)", n, err)
	}
	waitFor(t, tooLate)
	if ls := e.leases(); len(ls) != 1 {
		t.Fatalf("a command too old to run made a lease: %+v", ls)
	}
	posts, _, responses, _ := e.slack.snapshot()
	var told bool
	for _, m := range append(posts, responses...) {
		if strings.Contains(m.Text, "too late to run it now") && strings.Contains(m.Text, "request 1 interactive for 3h") {
			told = true
		}
	}
	if !told {
		t.Errorf("the sender of the command too old to run was not told: %+v %+v", posts, responses)
	}
}

func closeNow(t *testing.T, a *slackbot.Adapter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = a.Close(ctx)
}

func waitFor(t *testing.T, a *slackbot.Adapter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// The sender of a command too old to run is shown the command as typed: its &, < and > are
// escaped once, so "A&B <urgent>" reads as typed, not as "A&amp;B &lt;urgent&gt;", and still
// pings nobody.
func TestATooOldCommandIsQuotedAsTyped(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	stuck := stalled{got: make(chan string, 1)}
	gone := e.newAdapterWith(stuck, time.Hour, 0)
	e.handler.Store(gone)
	e.command("UALICE", "quota request +1 interactive for 1d because A&B <urgent> <!channel>")
	<-stuck.got
	closeNow(t, gone)
	if _, err := e.db.ReleaseDeliveryClaims(t.Context(), "slack", []string{"test"}); err != nil {
		t.Fatal(err)
	}
	tooLate := e.newAdapterWith(e.bot, time.Hour, time.Nanosecond)
	e.handler.Store(tooLate)
	if n, err := tooLate.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands, want 1 (%v)", n, err)
	}
	waitFor(t, tooLate)
	closeNow(t, tooLate)
	posts, _, responses, _ := e.slack.snapshot()
	var told []string
	for _, m := range append(posts, responses...) {
		if strings.Contains(m.Text, "too late to run it now") {
			told = append(told, m.Text, textIn(m.Blocks))
		}
	}
	if len(told) == 0 {
		t.Fatalf("the sender was not told: %+v %+v", posts, responses)
	}
	for _, s := range told {
		if !strings.Contains(s, `A&amp;B &lt;urgent&gt; &lt;!channel&gt;`) && !strings.Contains(s, `A\u0026amp;B \u0026lt;urgent\u0026gt; \u0026lt;!channel\u0026gt;`) {
			t.Errorf("the command is not quoted as typed (escaped once): %s", s)
		}
	}
}
