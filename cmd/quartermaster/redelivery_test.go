package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// restartProcess replaces what a restart replaces: a new lease service and /gpu handler on the
// same database (and cluster), and a new adapter. Nothing held in memory survives.
func (e *discordEnv) restartProcess() {
	e.t.Helper()
	e.wait()
	a := e.app
	old := a.Service
	svc := &qm.Service{Policy: old.Policy, Store: old.Store, Clock: old.Clock, Backend: old.Backend, Telemetry: old.Telemetry,
		Directory: old.Directory, Logger: old.Logger, Waits: old.Waits, Topology: old.Topology}
	a.Service = svc
	ob := a.Bot
	a.Bot = &commands.Bot{Svc: svc, Logger: ob.Logger, Templates: ob.Templates, SSO: ob.SSO, Reports: ob.Reports}
	a.Handler = a.Bot
	svc.Notifier = &commands.Notices{Bot: a.Bot, Sender: bot.SenderFunc(func(ctx context.Context, r bot.Reply) error { return a.Sender.Send(ctx, r) })}
	e.restart()
}

// state is everything a command can change, as text: every lease of every kind with its history.
func (e *discordEnv) state() string {
	e.t.Helper()
	ctx := context.Background()
	ls, err := e.app.Service.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind})
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range ls {
		ev, err := e.app.Service.History(ctx, l.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %s %d×%s %s state=%s ext=%d exp=%s kept=%s decided=%s/%s events=%d\n", l.ID, l.Kind, l.Parent, l.GPUs, l.Class,
			l.Duration, l.State, l.Extensions, l.ExpiresAt.Format(time.RFC3339), l.KeptAt.Format(time.RFC3339), l.DecidedBy, l.DecidedAt.Format(time.RFC3339), len(ev))
	}
	return b.String()
}

// On Discord too, every state-changing command, click and form delivered again after a restart
// (a new process on the same database) changes nothing the second time: request, extend (within
// policy and beyond), keep, quota request, release; the Approve button and the Deny form.
func TestDiscordRedeliveryAfterARestartChangesNothingTwice(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	who := func(user string) discordtest.Who {
		return discordtest.Who{User: user, Channel: dChannel, Guild: dGuild}
	}
	twice := func(what string, body []byte) {
		t.Helper()
		before := e.state()
		e.do(body)
		after := e.state()
		if after == before {
			t.Fatalf("%s changed nothing the first time:\n%s", what, after)
		}
		e.app.SimClk.Advance(time.Minute)
		e.restartProcess()
		e.do(body)
		if again := e.state(); again != after {
			t.Errorf("%s delivered again after a restart changed something:\nafter the first:\n%s\nafter the repeat:\n%s", what, after, again)
		}
	}
	twice("request", discordtest.Command(who(dAlice), "gpu", "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h")))
	twice("extend within policy", discordtest.Command(who(dAlice), "gpu", "extend", opt("lease", "L-1"), opt("duration", "1h")))
	twice("extend beyond policy", discordtest.Command(who(dAlice), "gpu", "extend", opt("lease", "L-1"), opt("duration", "20h")))
	// keep answers an idle warning: L-1 idle past interactive's idle_timeout is warned first
	if err := e.app.SetUtilization(context.Background(), "L-1", 0); err != nil {
		t.Fatal(err)
	}
	if err := e.app.Advance(context.Background(), 31*time.Minute); err != nil {
		t.Fatal(err)
	}
	if l := e.lease("L-1"); l.State != qm.IdleWarned {
		t.Fatalf("L-1 idle for 31m is %s, not warned", l.State)
	}
	twice("keep", discordtest.Command(who(dAlice), "gpu", "keep", opt("lease", "L-1")))
	twice("quota request", discordtest.Command(who(dAlice), "gpu", "quota-request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "1d"), opt("reason", "a demo")))
	twice("release", discordtest.Command(who(dAlice), "gpu", "release", opt("lease", "L-1")))

	id, _ := discordOverQuota2(e)
	toDana, _ := approvalPosts(e, id)
	b, ok := toDana.Button("Approve " + id)
	if !ok {
		t.Fatalf("no Approve button: %+v", toDana.Buttons)
	}
	twice("the Approve button", discordtest.Click(discordtest.Who{User: dDana, Channel: toDana.ChannelID, Guild: dGuild}, toDana, b.CustomID))

	m := e.command(dAlice, "request", opt("gpus", 4), opt("class", "interactive"), opt("duration", "2h"))
	other := leaseIDIn(t, m.Text())
	toDana, _ = approvalPosts(e, other)
	form := e.click(dDana, toDana, "Deny "+other)
	if form.Type != 9 || len(form.Inputs) != 1 {
		t.Fatalf("Deny answered %+v; want a form", form)
	}
	twice("the Deny form", discordtest.Submit(discordtest.Who{User: dDana, Channel: toDana.ChannelID}, form.CustomID, form.Inputs[0], "use the train class"))
}

// discordOverQuota2 fills team vision's interactive quota as alice and asks for one more GPU;
// it returns the id of the request that waits for approval.
func discordOverQuota2(e *discordEnv) (string, discordtest.Message) {
	e.t.Helper()
	for range 4 {
		e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
	}
	m := e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
	id := leaseIDIn(e.t, m.Text())
	if l := e.lease(id); l.State != qm.PendingApproval {
		e.t.Fatalf("%s is %s: %s", id, l.State, m.Text())
	}
	return id, m
}

func leaseIDIn(t *testing.T, text string) string {
	t.Helper()
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ':' || r == ',' || r == '.' || r == '\n' }) {
		if _, err := qm.ParseLeaseID(w); err == nil && strings.HasPrefix(w, "L-") {
			return w
		}
	}
	t.Fatalf("no lease id in %q", text)
	return ""
}
