package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// Discord users of the example policy's directory (its discord: accounts).
const (
	dAlice   = "100000000000000001"
	dBob     = "100000000000000002"
	dDana    = "100000000000000004"
	dNobody  = "100000000000000009"
	dGuild   = "500000000000000001"
	dChannel = "600000000000000001"   // where commands are typed
	dVision  = "200000000000000001"   // #vision-gpu, per the example policy
	scenario = "2026-11-30T15:00:00Z" // a Monday, 09:00 in Chicago
)

// discordEnv is the whole product behind the Discord adapter as serve wires it: the example
// policy, the sim cluster, a real database, the /gpu handler, and a fake Discord.
type discordEnv struct {
	t        *testing.T
	app      *App
	fake     *discordtest.Fake
	signer   *discordtest.Signer
	settings discordSettings
	adapter  *discordbot.Adapter
	srv      *httptest.Server
}

func newDiscordEnv(t *testing.T, dbURL string) *discordEnv {
	t.Helper()
	return newDiscordEnvWith(t, commonFlags{db: dbURL})
}

// newDiscordEnvWith is newDiscordEnv with the flags given (another policy).
func newDiscordEnvWith(t *testing.T, flags commonFlags) *discordEnv {
	t.Helper()
	start, _ := time.Parse(time.RFC3339, scenario)
	a, err := NewApp(context.Background(), appOptions{flags: flags, simClock: true, start: start, logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	e := &discordEnv{t: t, app: a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	return e
}

// start wires a Discord adapter as serve does and serves its endpoint.
func (e *discordEnv) start() {
	e.t.Helper()
	ad, err := newDiscordApp(e.app, e.settings, storetest.Logger(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	e.adapter = ad
	// As serve has it: notices written with the change that causes them and sent from the
	// database's outbox, through the platforms' senders.
	e.app.Service.Outbox = e.app.Store
	e.app.Service.SenderName = senderName()
	e.app.Sender = senders{ad}
	mux := http.NewServeMux()
	ad.Register(mux)
	e.srv = httptest.NewServer(mux)
	srv := e.srv
	e.t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ad.Close(ctx)
	})
}

// restart replaces the adapter, as a restarted service would: what it posted is remembered in
// the database, nothing else.
func (e *discordEnv) restart() {
	e.wait()
	e.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.adapter.Close(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.start()
}

func (e *discordEnv) wait() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.adapter.Wait(ctx); err != nil {
		e.t.Fatalf("work still in flight: %v", err)
	}
}

// do sends a signed interaction and returns its answer: the one in the acknowledgement, or, when
// the work was deferred, the reply that replaced the deferral. Everything it set off is done
// when it returns.
func (e *discordEnv) do(body []byte) discordtest.Message {
	e.t.Helper()
	b, err := e.post(body)
	if err != nil {
		e.t.Fatal(err)
	}
	e.wait()
	return e.answer(body, b)
}

// post sends a signed interaction and returns Discord's acknowledgement as it came.
func (e *discordEnv) post(body []byte) ([]byte, error) {
	resp, err := http.DefaultClient.Do(e.signer.Request(e.srv.URL+discordbot.Path, body))
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("interaction: HTTP %d %s", resp.StatusCode, b)
	}
	return b, nil
}

// answer is the answer to the interaction body, whose acknowledgement was ack, once the work it
// set off is done: the acknowledgement's own, or the reply that replaced a deferral.
func (e *discordEnv) answer(body, ack []byte) discordtest.Message {
	e.t.Helper()
	m, err := discordtest.Response(ack)
	if err != nil {
		e.t.Fatal(err)
	}
	if m.Type == 5 {
		later, ok := e.fake.AnswerTo(discordtest.ID(body))
		if !ok {
			e.t.Fatalf("a deferred interaction was never answered")
		}
		// The deferral says who sees the answer; its edit keeps that.
		later.Type, later.Ephemeral = 5, m.Ephemeral
		m = later
	}
	// The answer is a message of its own, with its own id, which a click on one of its buttons
	// carries.
	m.ID = "answer-" + discordtest.ID(body)
	return m
}

func (e *discordEnv) command(user, sub string, opts ...discordtest.Opt) discordtest.Message {
	e.t.Helper()
	return e.do(discordtest.Command(discordtest.Who{User: user, Channel: dChannel, Guild: dGuild}, "gpu", sub, opts...))
}

func (e *discordEnv) click(user string, m discordtest.Message, label string) discordtest.Message {
	e.t.Helper()
	b, ok := m.Button(label)
	if !ok {
		e.t.Fatalf("no button %q in %+v", label, m.Buttons)
	}
	return e.do(discordtest.Click(discordtest.Who{User: user, Channel: m.ChannelID, Guild: dGuild}, m, b.CustomID))
}

func (e *discordEnv) lease(id string) *qm.Lease {
	e.t.Helper()
	lid, err := qm.ParseLeaseID(id)
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := e.app.Service.Get(context.Background(), lid)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

func (e *discordEnv) leases() []*qm.Lease {
	e.t.Helper()
	ls, err := e.app.Service.List(context.Background(), qm.LeaseFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ls
}

func opt(name string, v any) discordtest.Opt { return discordtest.Opt{Name: name, Value: v} }

// TestDiscordRequestGrantsLease: /gpu request with typed options grants a lease and answers
// privately with the lease card and its buttons. On PostgreSQL.
func TestDiscordRequestGrantsLease(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.Postgres(t))
	m := e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
	ls := e.leases()
	if len(ls) != 1 || ls[0].User != "alice@acme.example" || ls[0].State != qm.Active || ls[0].Duration != 2*time.Hour {
		t.Fatalf("leases = %+v", ls)
	}
	if !m.Ephemeral || !strings.Contains(m.Text(), "L-1 is active: 1 × interactive (L40S) on l40s-01") {
		t.Errorf("answer = %+v", m)
	}
	for _, want := range []string{"State: active", "Time left: 2h", "Cost so far: $0.00"} {
		if !strings.Contains(m.Text(), want) {
			t.Errorf("the lease card lacks %q: %s", want, m.Text())
		}
	}
	if _, ok := m.Button("Extend 1h"); !ok {
		t.Errorf("no Extend button: %+v", m.Buttons)
	}
	if b, ok := m.Button("Release"); !ok || b.Style != 4 {
		t.Errorf("no red Release button: %+v", m.Buttons)
	}
}

// A duration typed in an option as two words, as the grammar reads it in Slack and the console
// (1h 30m, 2 hours), reaches the command as one duration; two durations are refused there.
func TestDiscordDurationOfSeveralWords(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "1h 30m"))
	e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2 hours"))
	ls := e.leases()
	if len(ls) != 2 || ls[0].Duration != 90*time.Minute || ls[1].Duration != 2*time.Hour {
		t.Fatalf("leases = %+v", ls)
	}
	if m := e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h 3h")); !strings.Contains(m.Text(), "twice") {
		t.Errorf("two durations answered %q", m.Text())
	}
	if ls := e.leases(); len(ls) != 2 {
		t.Errorf("two durations made a lease: %+v", ls)
	}
}

// discordOverQuota fills team vision's interactive quota as alice and asks for a fifth GPU, which
// the over-quota rule sends to dana. It returns the pending lease's id and alice's answer.
func discordOverQuota(e *discordEnv) (string, discordtest.Message) {
	e.t.Helper()
	for range 4 {
		e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
	}
	m := e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
	if !strings.Contains(m.Text(), "L-5 waits for approval") || !strings.Contains(m.Text(), "over-quota") {
		e.t.Fatalf("the fifth request was answered %q", m.Text())
	}
	if l := e.lease("L-5"); l.State != qm.PendingApproval {
		e.t.Fatalf("L-5 is %s", l.State)
	}
	return "L-5", m
}

// approvalPosts are the approval messages in dana's DM and in #vision-gpu.
func approvalPosts(e *discordEnv, id string) (toDana, toChannel discordtest.Message) {
	e.t.Helper()
	find := func(ch string) discordtest.Message {
		for _, m := range e.fake.PostsTo(ch) {
			if strings.Contains(m.Text(), "Approval needed") && strings.Contains(m.Text(), id) {
				return m
			}
		}
		e.t.Fatalf("no approval message for %s in %s: %+v", id, ch, e.fake.PostsTo(ch))
		return discordtest.Message{}
	}
	return find(discordtest.DMChannel(dDana)), find(dVision)
}

// TestDiscordApproval: an over-quota request posts Approve / Deny to the budget owner by DM and
// in the team's channel; her click decides, both copies are edited in place without buttons,
// and the requester is told by DM. The adapter is restarted in between: where the copies were
// posted is remembered in the database.
func TestDiscordApproval(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	id, _ := discordOverQuota(e)
	toDana, toChannel := approvalPosts(e, id)
	for _, m := range []discordtest.Message{toDana, toChannel} {
		if b, ok := m.Button("Approve " + id); !ok || b.Style != 1 {
			t.Errorf("%s: no primary Approve button: %+v", m.ChannelID, m.Buttons)
		}
		if b, ok := m.Button("Deny " + id); !ok || b.Style != 4 {
			t.Errorf("%s: no red Deny button: %+v", m.ChannelID, m.Buttons)
		}
	}
	e.restart()

	answer := e.click(dDana, toChannel, "Approve "+id)
	if l := e.lease(id); l.State == qm.PendingApproval || l.State == qm.Denied || l.DecidedBy != "dana@acme.example" {
		t.Fatalf("after the click: %s decided by %q", l.State, l.DecidedBy)
	}
	if !answer.Ephemeral || !strings.Contains(answer.Text(), "Approved "+id) {
		t.Errorf("dana's answer = %+v", answer)
	}
	edits := e.fake.Edits()
	edited := map[string]bool{}
	for _, ed := range edits {
		edited[ed.ChannelID+"/"+ed.ID] = true
		if !strings.Contains(ed.Text(), id+" was approved by dana@acme.example") || len(ed.Buttons) != 0 || !ed.Components {
			t.Errorf("edit = %+v; want the decision and no buttons", ed)
		}
	}
	if len(edits) != 2 || !edited[toDana.ChannelID+"/"+toDana.ID] || !edited[toChannel.ChannelID+"/"+toChannel.ID] {
		t.Fatalf("edits = %+v; want both copies", edits)
	}
	told := false
	for _, m := range e.fake.PostsTo(discordtest.DMChannel(dAlice)) {
		told = told || strings.Contains(m.Text(), id) && strings.Contains(strings.ToLower(m.Text()), "approved by dana@acme.example")
	}
	if !told {
		t.Errorf("alice was not told; her DMs: %+v", e.fake.PostsTo(discordtest.DMChannel(dAlice)))
	}
}

// TestDiscordApprovalRefused: a click on Approve by anyone who may not decide (a teammate, the
// requester herself) is refused privately and changes nothing.
func TestDiscordApprovalRefused(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	id, _ := discordOverQuota(e)
	_, toChannel := approvalPosts(e, id)
	posts := len(e.fake.Posts())
	for _, user := range []string{dBob, dAlice, dNobody} {
		m := e.click(user, toChannel, "Approve "+id)
		if !m.Ephemeral || strings.Contains(m.Text(), "Approved") || !strings.Contains(m.Text(), "Example:") && !strings.Contains(m.Text(), "may not") {
			t.Errorf("%s's click answered %+v", user, m)
		}
	}
	if l := e.lease(id); l.State != qm.PendingApproval || l.DecidedBy != "" {
		t.Fatalf("after refused clicks: %s decided by %q", l.State, l.DecidedBy)
	}
	if n := len(e.fake.Edits()); n != 0 {
		t.Errorf("%d messages were edited", n)
	}
	if n := len(e.fake.Posts()); n != posts {
		t.Errorf("%d new posts", n-posts)
	}
}

// TestDiscordDenyWithReason: Deny opens a form; the reason given reaches the requester.
func TestDiscordDenyWithReason(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	id, _ := discordOverQuota(e)
	toDana, _ := approvalPosts(e, id)
	form := e.click(dDana, toDana, "Deny "+id)
	if form.Type != 9 || len(form.Inputs) != 1 {
		t.Fatalf("Deny answered %+v; want a form", form)
	}
	e.do(discordtest.Submit(discordtest.Who{User: dDana, Channel: toDana.ChannelID}, form.CustomID, form.Inputs[0], "use the train class"))
	if l := e.lease(id); l.State != qm.Denied || l.DecidedBy != "dana@acme.example" {
		t.Fatalf("%s is %s, decided by %q", id, l.State, l.DecidedBy)
	}
	told := false
	for _, m := range e.fake.PostsTo(discordtest.DMChannel(dAlice)) {
		told = told || strings.Contains(m.Text(), id+" was denied by dana@acme.example: use the train class")
	}
	if !told {
		t.Errorf("alice's DMs: %+v", e.fake.PostsTo(discordtest.DMChannel(dAlice)))
	}
}

// TestDiscordDenyRefusedBeforeTheForm: a click on Deny by someone who may not decide (a
// teammate, the requester herself) is refused at once, privately, naming who decides, with no
// form to type a reason into; nothing changes.
func TestDiscordDenyRefusedBeforeTheForm(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	id, _ := discordOverQuota(e)
	_, toChannel := approvalPosts(e, id)
	for user, want := range map[string]string{dBob: "Only dana@acme.example or platform-leads@acme.example can decide " + id, dAlice: "Only dana@acme.example or platform-leads@acme.example can decide " + id} {
		m := e.click(user, toChannel, "Deny "+id)
		if m.Type == 9 || len(m.Inputs) > 0 {
			t.Errorf("%s's click on Deny opened a form: %+v", user, m)
			continue
		}
		if !m.Ephemeral || !strings.Contains(m.Text(), want) {
			t.Errorf("%s's click on Deny answered %q; want a private %q", user, m.Text(), want)
		}
	}
	if l := e.lease(id); l.State != qm.PendingApproval || l.DecidedBy != "" {
		t.Fatalf("after refused clicks: %s decided by %q", l.State, l.DecidedBy)
	}
	if n := len(e.fake.Edits()); n != 0 {
		t.Errorf("%d messages were edited", n)
	}
}

// TestDiscordBadInput: missing or malformed options, and input the grammar refuses, get one
// private sentence and an example that works on this installation, written as Discord's options
// are typed; nothing is created.
func TestDiscordBadInput(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	cases := []struct {
		sub  string
		opts []discordtest.Opt
		want string
	}{
		{"estimate", []discordtest.Opt{opt("gpus", 2), opt("class", "train")}, "/gpu estimate needs the option duration (how long, like 8h). Example: /gpu estimate gpus:1 class:interactive duration:4h"},
		{"request", []discordtest.Opt{{Name: "gpus", Value: "lots", Type: 4}}, `The option gpus of /gpu request takes a whole number, not "lots". Example: /gpu request gpus:1 class:interactive duration:4h`},
		{"request", []discordtest.Opt{opt("gpus", 1), opt("class", "interactive"), opt("duration", "forever")}, `"forever" is not a duration; write it like 30m, 4h or 2d. Example: /gpu request gpus:1 class:interactive duration:4h`},
		{"request", []discordtest.Opt{opt("gpus", 1), opt("class", "tpu")}, `Example: /gpu request gpus:1 class:interactive duration:4h`},
		{"extend", []discordtest.Opt{opt("lease", "yesterday"), opt("duration", "1h")}, `"yesterday" is not a lease id; lease ids look like L-42. Example: /gpu list`}, // alice has no lease to name
		{"status", nil, "/gpu status needs the option lease"},
	}
	for _, c := range cases {
		m := e.command(dAlice, c.sub, c.opts...)
		if !m.Ephemeral || !strings.Contains(m.Text(), c.want) {
			t.Errorf("/gpu %s %v answered %q; want %q", c.sub, c.opts, m.Text(), c.want)
		}
	}
	if ls := e.leases(); len(ls) != 0 {
		t.Errorf("bad input made leases: %+v", ls)
	}
	m := e.command(dNobody, "list")
	if !strings.Contains(m.Text(), "discord:"+dNobody+" is not in the directory") {
		t.Errorf("a stranger was answered %q", m.Text())
	}
	if m := e.command(dNobody, "help"); !strings.Contains(m.Text(), "Quartermaster gets you GPUs without a ticket") {
		t.Errorf("help for a stranger: %q", m.Text())
	}
}

// TestDiscordAutocomplete: lease options suggest the person's own leases and what waits for
// their decision; template options suggest templates.
func TestDiscordAutocomplete(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	discordOverQuota(e)
	suggest := func(user, sub, option, typed string) []string {
		m := e.do(discordtest.Autocomplete(discordtest.Who{User: user, Channel: dChannel, Guild: dGuild}, "gpu", sub, discordtest.Opt{Name: option, Value: typed, Focused: true}))
		if m.Type != 8 {
			t.Fatalf("autocomplete answered type %d", m.Type)
		}
		var out []string
		for _, c := range m.Choices {
			out = append(out, c.Name)
		}
		return out
	}
	if got := suggest(dAlice, "release", "lease", "L-"); len(got) != 5 {
		t.Errorf("alice's leases: %q", got)
	}
	got := suggest(dDana, "approve", "lease", "")
	if len(got) != 1 || got[0] != "L-5 — pending_approval, 1 × interactive for alice@acme.example" {
		t.Errorf("dana's approvals: %q", got)
	}
	if got := suggest(dBob, "release", "lease", ""); len(got) != 0 {
		t.Errorf("bob sees %q", got)
	}
	if got := suggest(dAlice, "template", "name", "jupy"); len(got) != 2 || !strings.Contains(strings.Join(got, "|"), "jupyterlab — JupyterLab") {
		t.Errorf("templates: %q", got)
	}
	// Someone the directory does not know may run /gpu template, so gets the templates too, and
	// nobody's leases.
	if got := suggest(dNobody, "template", "name", "jupy"); len(got) != 2 {
		t.Errorf("templates for a stranger: %q", got)
	}
	if got := suggest(dNobody, "release", "lease", ""); len(got) != 0 {
		t.Errorf("leases for a stranger: %q", got)
	}
}

// TestDiscordRegister: `quartermaster discord register` installs /gpu with one subcommand per
// offered command of the table, options typed from its parameters.
func TestDiscordRegister(t *testing.T) {
	f := discordtest.New(t)
	t.Setenv("DISCORD_BOT_TOKEN", discordtest.Token)
	t.Setenv("DISCORD_APP_ID", discordtest.App)
	t.Setenv("DISCORD_API_URL", f.URL)
	t.Setenv("QM_POLICY", "../../docs/quartermaster.example.yaml") // the policy parityApp runs with
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"discord", "register", "--guild", dGuild}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "Registered /gpu (id ") || !strings.Contains(out.String(), "in server "+dGuild) {
		t.Errorf("output: %q", out.String())
	}
	ow := f.Overwrites()
	if len(ow) != 1 || ow[0].Guild != dGuild || ow[0].App != discordtest.App || len(ow[0].Commands) != 1 {
		t.Fatalf("overwrites = %+v", ow)
	}
	subs := map[string]map[string]map[string]any{} // subcommand -> option -> option's fields
	var names []string
	for _, s := range ow[0].Commands[0]["options"].([]any) {
		sm := s.(map[string]any)
		if sm["type"] != 1.0 {
			t.Errorf("%v is not a subcommand", sm["name"])
		}
		name := sm["name"].(string)
		names = append(names, name)
		subs[name] = map[string]map[string]any{}
		opts, _ := sm["options"].([]any)
		for _, o := range opts {
			om := o.(map[string]any)
			subs[name][om["name"].(string)] = om
		}
	}
	// What serve offers, from its own wiring.
	app := parityApp(t)
	var want []string
	for _, s := range app.Bot.Offered() {
		want = append(want, s.Name)
	}
	if strings.Join(names, " ") != strings.Join(want, " ") || len(want) < 18 {
		t.Errorf("subcommands = %s\nserve offers %s", strings.Join(names, " "), strings.Join(want, " "))
	}
	req := subs["request"]
	if g := req["gpus"]; g["type"] != 4.0 || g["min_value"] != 1.0 || g["required"] != false {
		t.Errorf("request gpus = %v", g)
	}
	if c := req["class"]; c["type"] != 3.0 || len(c["choices"].([]any)) != 2 || c["choices"].([]any)[1].(map[string]any)["value"] != "train" {
		t.Errorf("request class = %v", c)
	}
	if d := req["duration"]; d["type"] != 3.0 {
		t.Errorf("request duration = %v", d)
	}
	if tp := req["template"]; tp["autocomplete"] != true {
		t.Errorf("request template = %v", tp)
	}
	if x := req["exclusive"]; x["type"] != 5.0 {
		t.Errorf("request exclusive = %v", x)
	}
	if l := subs["approve"]["lease"]; l["required"] != true || l["autocomplete"] != true {
		t.Errorf("approve lease = %v", l)
	}
	qr := subs["quota-request"]
	if qr["gpus"]["required"] != true || qr["reason"]["required"] != true || qr["duration"]["required"] != false {
		t.Errorf("quota-request = %v", qr)
	}
	if h := subs["help"]["command"]; len(h["choices"].([]any)) != len(want) {
		t.Errorf("help's choices = %v", h["choices"])
	}

	// Without the settings it says what it needs.
	t.Setenv("DISCORD_APP_ID", "")
	errb.Reset()
	if code := run(context.Background(), []string{"discord", "register"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "needs DISCORD_BOT_TOKEN and DISCORD_APP_ID") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	// --print writes what would be installed, and calls nothing.
	out.Reset()
	if code := run(context.Background(), []string{"discord", "register", "--print"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), `"name": "quota-request"`) {
		t.Errorf("--print: exit %d, %q", code, out.String())
	}
	if len(f.Overwrites()) != 1 {
		t.Error("--print called Discord")
	}
	// It prints what is registered: no null where Discord takes an array (channel_types,
	// choices, options), and the class option's choices, the policy's classes.
	var printed map[string]any
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
		t.Fatalf("--print is not JSON: %v", err)
	}
	if strings.Contains(out.String(), "null") {
		t.Errorf("--print has a null: %s", out.String())
	}
	var choices []string
	for _, s := range printed["options"].([]any) {
		if s.(map[string]any)["name"] != "request" {
			continue
		}
		for _, o := range s.(map[string]any)["options"].([]any) {
			if o.(map[string]any)["name"] == "class" {
				for _, c := range o.(map[string]any)["choices"].([]any) {
					choices = append(choices, c.(map[string]any)["value"].(string))
				}
			}
		}
	}
	if pol := parityApp(t).Bot.Svc.Policy; strings.Join(choices, " ") != strings.Join(pol.ClassNames(), " ") {
		t.Errorf("--print offers the classes %v; the policy has %v", choices, pol.ClassNames())
	}
	// With single sign-on configured, /gpu login, logout and unlink are offered, so registered.
	t.Setenv("QM_OIDC_ISSUER", "https://sso.acme.example/realms/acme")
	t.Setenv("QM_OIDC_CLIENT_ID", "quartermaster")
	t.Setenv("QM_PUBLIC_URL", "https://quartermaster.acme.example")
	out.Reset()
	if code := run(context.Background(), []string{"discord", "register", "--print"}, nil, &out, &errb); code != 0 {
		t.Fatalf("--print with SSO: exit %d: %s", code, errb.String())
	}
	for _, name := range []string{"login", "logout", "unlink"} {
		if !strings.Contains(out.String(), `"name": "`+name+`"`) {
			t.Errorf("with SSO, /gpu %s is not registered", name)
		}
	}
}

// TestServeDiscord: serve mounts the interactions endpoint when there is a public key (PING,
// and 401 for an unsigned request), and refuses to start half-configured.
func TestServeDiscord(t *testing.T) {
	t.Parallel()
	f := discordtest.New(t)
	signer := discordtest.NewSigner()
	s := startServe(t, serveOptions{discord: discordSettings{BotToken: discordtest.Token, PublicKey: signer.PublicKey(), AppID: discordtest.App, APIURL: f.URL}})
	resp, err := http.DefaultClient.Do(signer.Request(s.url+discordbot.Path, discordtest.Ping()))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != `{"type":1}` {
		t.Errorf("PING: HTTP %d %s", resp.StatusCode, b)
	}
	resp, err = http.Post(s.url+discordbot.Path, "application/json", strings.NewReader(string(discordtest.Ping())))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: HTTP %d", resp.StatusCode)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	err = serve(context.Background(), serveOptions{app: appOptions{flags: commonFlags{db: storetest.SQLite(t)}}, discord: discordSettings{PublicKey: signer.PublicKey()}})
	if err == nil || !strings.Contains(err.Error(), "DISCORD_BOT_TOKEN is not") {
		t.Errorf("half-configured: %v", err)
	}
}

// TestServeDiscordGateway: without a public key serve connects to the gateway, and an
// interaction delivered there is answered over REST by the same handler.
func TestServeDiscordGateway(t *testing.T) {
	t.Parallel()
	f := discordtest.New(t)
	s := startServe(t, serveOptions{discord: discordSettings{BotToken: discordtest.Token, APIURL: f.URL}})
	body := discordtest.Command(discordtest.Who{User: dAlice, Channel: dChannel, Guild: dGuild}, "gpu", "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "1h"))
	if n := f.Deliver(body); n != 1 {
		t.Fatalf("delivered to %d clients", n)
	}
	var got discordtest.Message
	if !f.WaitFor(func() bool {
		m, ok := f.AnswerTo(discordtest.ID(body))
		got = m
		return ok && m.Type != 5
	}) {
		t.Fatalf("no answer over REST: %+v", f.Answers())
	}
	if !strings.Contains(got.Text(), "L-1 is active") {
		t.Errorf("answer = %q", got.Text())
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestSendersFanOut: a notice counts as delivered when one platform took it; it is tried again
// only when none did and one failed; a recipient no platform knows is nobody's failure.
func TestSendersFanOut(t *testing.T) {
	t.Parallel()
	ok := bot.SenderFunc(func(context.Context, bot.Reply) error { return nil })
	fails := bot.SenderFunc(func(context.Context, bot.Reply) error { return errors.New("HTTP 503") })
	notHere := bot.SenderFunc(func(context.Context, bot.Reply) error { return fmt.Errorf("%w: lee", discordbot.ErrNotHere) })
	for _, c := range []struct {
		name  string
		s     senders
		retry bool
	}{
		{"both deliver", senders{ok, ok}, false},
		{"one fails, one delivers", senders{fails, ok}, false},
		{"one fails, the other does not know them", senders{fails, notHere}, true},
		{"nobody knows them", senders{notHere}, false},
		{"the only one fails", senders{fails}, true},
	} {
		if err := c.s.Send(context.Background(), bot.Reply{To: "lee@acme.example", Text: "x"}); (err != nil) != c.retry {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestDiscordSignatures: a request signed with another key, a signature over another body and a
// request without the signature get 401, and no lease is made, nothing posted.
func TestDiscordSignatures(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	url := e.srv.URL + discordbot.Path
	body := discordtest.Command(discordtest.Who{User: dAlice, Channel: dChannel, Guild: dGuild}, "gpu", "request", opt("gpus", 1), opt("class", "interactive"))
	forged := discordtest.NewSigner().Request(url, body)
	otherBody := e.signer.Request(url, body)
	otherBody.Header.Set("X-Signature-Ed25519", e.signer.Signature(otherBody.Header.Get("X-Signature-Timestamp"), []byte(`{"type":1}`)))
	unsigned := e.signer.Request(url, body)
	unsigned.Header.Del("X-Signature-Ed25519")
	for name, req := range map[string]*http.Request{"forged": forged, "over another body": otherBody, "unsigned": unsigned} {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, resp.StatusCode)
		}
	}
	e.wait()
	if ls := e.leases(); len(ls) != 0 {
		t.Errorf("leases = %+v", ls)
	}
	if n := e.fake.Calls(); n != 0 {
		t.Errorf("Discord was called %d times", n)
	}
	// The same body, signed, makes the lease.
	if m := e.do(body); !strings.Contains(m.Text(), "L-1 is active") {
		t.Errorf("signed: %q", m.Text())
	}
}

// TestServePostsShowbackOnDiscord: with Discord alone, serve posts a week it missed to the
// showback channel's Discord id with the chart and the CSV attached, and DMs the budget owners
// who have a Discord account; one without (lee) does not hold the week up. Started again, it
// posts nothing twice.
func TestServePostsShowbackOnDiscord(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	st, err := store.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-9 * 24 * time.Hour)
	l := &qm.Lease{User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Expired,
		CreatedAt: at, StartedAt: at, ExpiresAt: at.Add(2 * time.Hour), EndedAt: at.Add(2 * time.Hour)}
	if err := st.Update(context.Background(), nil, func(tx qm.Tx) error { return tx.CreateLease(context.Background(), l) }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	loc, _ := time.LoadLocation("America/Chicago")
	sched, _ := schedule.ParseWeekly("MON 09:00", loc)
	want := 0
	for w := showback.WeekOf(at, loc); !showback.WeekOf(sched.Last(time.Now()), loc).Prev().Before(w); w = w.Next() {
		want++
	}
	const showbackChannel = "200000000000000003" // #gpu-showback in the example policy
	f := discordtest.New(t)
	o := serveOptions{discord: discordSettings{BotToken: discordtest.Token, APIURL: f.URL}} // the gateway: no public URL
	o.app.flags.db = db
	s := startServe(t, o)
	if !f.WaitFor(func() bool {
		return len(f.PostsTo(showbackChannel)) == want && len(f.PostsTo(discordtest.DMChannel(dDana))) == want
	}) {
		t.Fatalf("no showback: in the channel %d, to dana %d; want %d each", len(f.PostsTo(showbackChannel)), len(f.PostsTo(discordtest.DMChannel(dDana))), want)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range f.PostsTo(showbackChannel) {
		var names []string
		for _, file := range p.Files {
			names = append(names, file.Name+" "+file.Type)
		}
		if len(p.Files) != 2 || !strings.HasSuffix(names[0], ".png image/png") || !strings.Contains(names[1], ".csv") || !strings.Contains(p.Text(), "GPU showback, 20") {
			t.Errorf("showback post: %q with files %q", p.Text(), names)
		}
	}
	if n := len(f.Posts()); n != 2*want {
		t.Errorf("%d posts, want %d (the channel and dana, each week)", n, 2*want)
	}
	s = startServe(t, o)
	time.Sleep(time.Second)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Posts()); n != 2*want {
		t.Errorf("a restart posted again: %d posts", n)
	}
}

// TestDiscordWithSSO: with single sign-on a Discord user nobody's directory names signs in from
// Discord (/gpu login is a subcommand), is then known by the account they linked, and is reached
// by DM through it.
func TestDiscordWithSSO(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t)
	e := &discordEnv{t: t, app: w.a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	const dErin = "100000000000000077"
	erin := oidctest.NewUser("sub-erin", "erin@acme.example", "ai-vision")

	m := e.command(dErin, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "1h"))
	if !m.Ephemeral || !strings.Contains(m.Text(), "does not know who you are yet") || !loginURL.MatchString(m.Text()) {
		t.Fatalf("before signing in: %q", m.Text())
	}
	if ls := e.leases(); len(ls) != 0 {
		t.Fatalf("a lease before signing in: %+v", ls)
	}
	login := e.command(dErin, "login")
	u := loginURL.FindString(login.Text())
	if u == "" {
		t.Fatalf("/gpu login answered %q", login.Text())
	}
	w.idp.SignIn(erin)
	if page := oidctest.NewBrowser(t).Follow(u); !strings.Contains(page.Body, "erin@acme.example") {
		t.Fatalf("the login page: %s", page.Body)
	}

	m = e.command(dErin, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "1h"))
	ls := e.leases()
	if len(ls) != 1 || ls[0].User != "erin@acme.example" || !strings.Contains(m.Text(), "L-1 is active") {
		t.Fatalf("after signing in: %q, leases %+v", m.Text(), ls)
	}
	if err := w.a.Advance(context.Background(), 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	e.wait()
	told := false
	for _, p := range e.fake.PostsTo(discordtest.DMChannel(dErin)) {
		told = told || strings.Contains(p.Text(), "L-1 expired")
	}
	if !told {
		t.Errorf("erin's DMs: %+v", e.fake.PostsTo(discordtest.DMChannel(dErin)))
	}
}

// TestDiscordRegisterBigCatalog: a catalog with more classes than Discord lists as choices (30
// here, with long names) still registers /gpu; the class options suggest the classes as they
// are typed.
func TestDiscordRegisterBigCatalog(t *testing.T) {
	var b strings.Builder
	b.WriteString("organization: Initech Research\nbackend: slurm\nclasses:\n")
	for i := range 30 {
		fmt.Fprintf(&b, "  - {name: h200-shared-notebooks-partition-%02d, sku: H200, price_per_gpu_hour: 2, max_gpus: 1, max_duration: 4h, slurm: {partition: p%d, gres: \"gpu:h200\"}}\n", i, i)
	}
	pol := filepath.Join(t.TempDir(), "initech.yaml")
	if err := os.WriteFile(pol, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := discordtest.New(t)
	t.Setenv("DISCORD_BOT_TOKEN", discordtest.Token)
	t.Setenv("DISCORD_APP_ID", discordtest.App)
	t.Setenv("DISCORD_API_URL", f.URL)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"discord", "register", "--guild", dGuild, "--policy", pol}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, s := range f.Overwrites()[0].Commands[0]["options"].([]any) {
		opts, _ := s.(map[string]any)["options"].([]any)
		for _, o := range opts {
			if om := o.(map[string]any); om["name"] == "class" && (om["autocomplete"] != true || om["choices"] != nil) {
				t.Errorf("/gpu %s's class = %v; want the classes suggested as typed", s.(map[string]any)["name"], om)
			}
		}
	}
}

// TestDiscordReportThisWeek: /gpu report's week option takes what its description offers,
// "this week" and "last week", as typed in Slack.
func TestDiscordReportThisWeek(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
	if m := e.command(dDana, "report", opt("week", "this week")); !strings.Contains(m.Text(), "GPU showback of team vision, 2026-W49 (Mon 30 Nov – Sun 6 Dec 2026), so far") {
		t.Errorf("this week: %q", m.Text())
	}
	if m := e.command(dDana, "report", opt("week", "last week"), opt("team", "vision")); !strings.Contains(m.Text(), "There is no history for 2026-W48") {
		t.Errorf("last week: %q", m.Text())
	}
}

// TestDiscordSignInAsAnotherPerson: a Discord account linked to erin that signs in again as
// someone else is told the account is linked to erin and that erin signs out first (the
// other-person refusal), not that the link was made for another chat account: Discord shows no
// email, so the link it asked for is its own.
func TestDiscordSignInAsAnotherPerson(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t)
	e := &discordEnv{t: t, app: w.a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	const dErin = "100000000000000078"
	erin := oidctest.NewUser("sub-erin", "erin@acme.example", "ai-vision")
	frank := oidctest.NewUser("sub-frank", "frank@acme.example", "ai-vision")
	u := loginURL.FindString(e.command(dErin, "login").Text())
	w.idp.SignIn(erin)
	if page := oidctest.NewBrowser(t).Follow(u); page.Status != http.StatusOK {
		t.Fatalf("erin's login: %d %s", page.Status, page.Body)
	}

	login := e.command(dErin, "login")
	u = loginURL.FindString(login.Text())
	if u == "" {
		t.Fatalf("/gpu login answered %q", login.Text())
	}
	w.idp.SignIn(frank)
	page := oidctest.NewBrowser(t).Follow(u)
	if page.Status != http.StatusForbidden || !strings.Contains(page.Body, "other-person") || !strings.Contains(page.Body, "/gpu logout") {
		t.Fatalf("signing in as frank from erin's Discord account: %d %s", page.Status, page.Body)
	}
	if l, err := w.a.Store.AccountLink(context.Background(), qm.Account{Platform: "discord", User: dErin}); err != nil || l.Email != "erin@acme.example" {
		t.Fatalf("the link after the refusal: %+v %v", l, err)
	}
}

// TestDiscordAutocompleteIgnoresAccentsAndCase: lease and template options match what is typed
// the way class options do: accents typed are left out, capitals and spaces around it do not
// count.
func TestDiscordAutocompleteIgnoresAccentsAndCase(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	discordOverQuota(e)
	suggest := func(user, sub, option, typed string) []string {
		m := e.do(discordtest.Autocomplete(discordtest.Who{User: user, Channel: dChannel, Guild: dGuild}, "gpu", sub, discordtest.Opt{Name: option, Value: typed, Focused: true}))
		var out []string
		for _, c := range m.Choices {
			out = append(out, c.Name)
		}
		return out
	}
	want := suggest(dAlice, "template", "name", "jupy")
	if len(want) == 0 {
		t.Fatal("no template suggested for jupy")
	}
	for _, typed := range []string{"JUPY", " júpy ", "JÚPY"} {
		if got := suggest(dAlice, "template", "name", typed); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("templates for %q: %q, want %q", typed, got, want)
		}
	}
	leases := suggest(dAlice, "release", "lease", "L-")
	if len(leases) == 0 {
		t.Fatal("no lease suggested for L-")
	}
	for _, typed := range []string{"l-", " Ĺ- ", "ĺ-"} {
		if got := suggest(dAlice, "release", "lease", typed); strings.Join(got, "|") != strings.Join(leases, "|") {
			t.Errorf("leases for %q: %q, want %q", typed, got, leases)
		}
	}
}
