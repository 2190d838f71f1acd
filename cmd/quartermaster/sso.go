package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// ssoPass is how often serve looks for account links whose groups are due for a re-check (each
// is re-checked once per oidc.recheck, default daily).
const ssoPass = 15 * time.Minute

// setupSSO turns single sign-on on where QM_OIDC_ISSUER is set: the account links become the
// service's directory (the policy's static directory is no longer read), /gpu login, logout and
// unlink are offered, and the login endpoints are served on mux. Without it, nil, and the login
// endpoints answer 404 with a page saying single sign-on is not set up.
func setupSSO(a *App, getenv func(string) string, mux *http.ServeMux, log *slog.Logger) (*oidc.Service, error) {
	cfg, on, err := ssoSettings(getenv, a.Policy)
	if err != nil {
		return nil, err
	}
	if !on {
		// An old login link says why it leads nowhere, in the words /gpu login uses in chat.
		why := commands.SSONotSetUp
		oidc.RegisterNotSetUp(mux, strings.ToUpper(why[:1])+why[1:]+".")
		return nil, nil
	}
	sso, err := oidc.New(cfg, a.Store, a.Clock, log)
	if err != nil {
		return nil, err
	}
	a.Service.Directory = sso
	a.Bot.SSO = sso
	sso.Owner = submitterName()
	releaseStoppedTellers(context.Background(), a, sso.Owner, log)
	if err := sso.RefreshMembers(context.Background()); err != nil {
		log.Warn("reading who is in which group; approvers named by group hear of exceptions once it works", "err", err)
	}
	// A command a login link carries (an approval that needed a fresh login) runs as the account
	// once it has logged in; the page says what came of it, and whoever else it concerns is told.
	sso.Resume = func(ctx context.Context, acct qm.Account, command string) (string, bool) {
		rs := a.Bot.Handle(ctx, bot.Request{Account: bot.Account{Platform: acct.Platform, Workspace: acct.Workspace, User: acct.User}, Text: command})
		if len(rs) == 0 {
			return "Your " + command + " was done.", true
		}
		tellResumed(ctx, a, rs[1:], log)
		if rs[0].Error {
			return command + " did not go through: " + rs[0].PlainText(), false
		}
		return rs[0].PlainText(), true
	}
	// What a change of someone's groups means (to them, to their teams' budget owners) goes
	// through the outbox, queued as the change is marked told: a chat platform that is down
	// delays it, retried as other notices are, and a crash neither loses nor repeats it. Without
	// an outbox (the console) it is sent at once.
	sso.GroupsNotices = func(ctx context.Context, before, after *qm.AccountLink) []qm.Notice {
		if a.Service.Outbox != nil {
			return a.Bot.GroupsChangedNotices(ctx, before, after)
		}
		for _, r := range a.Bot.GroupsChanged(ctx, before, after) {
			if err := a.Sender.Send(ctx, r); err != nil {
				log.Error("telling of changed groups", "to", r.To, "err", err)
			}
		}
		return nil
	}
	sso.Queued, sso.Tell = a.Service.SendQueued, a.Service.Tell
	// The page a sign-in ends on says which teams the groups place the person in.
	sso.Teams = func(ctx context.Context, email string) ([]string, bool) {
		id, err := a.Service.Resolve(ctx, email)
		return id.Teams, err == nil
	}
	// A team's first sign-in starts its time-to-first-GPU in the showback.
	sso.LoggedIn = func(ctx context.Context, email string, at time.Time) {
		id, err := a.Service.Resolve(ctx, email)
		if err != nil || len(id.Teams) == 0 {
			return
		}
		if err := a.Store.NoteTeamLogins(ctx, id.Teams, at); err != nil {
			log.Error("noting a team's first login", "email", email, "err", err)
		}
	}
	sso.Register(mux)
	log.Info("single sign-on is on", "issuer", cfg.Issuer, "public_url", cfg.PublicURL, "groups_claim", cfg.GroupsClaim, "recheck", cfg.Recheck.String())
	return sso, nil
}

// tellResumed sends the replies of a resumed command that are addressed to someone (To set)
// through the outbox, as every other notice: Slack or Discord being down at that moment delays
// them, retried by the sender loop, instead of losing them. Without an outbox (the console) they
// are sent at once.
func tellResumed(ctx context.Context, a *App, rs []bot.Reply, log *slog.Logger) {
	var ns []qm.Notice
	for _, r := range rs {
		if r.To == "" {
			continue
		}
		if a.Service.Outbox == nil {
			if err := a.Sender.Send(ctx, r); err != nil {
				log.Error("sending a reply of a resumed command", "to", r.To, "err", err)
			}
			continue
		}
		n, err := commands.MessageNotice(r)
		if err != nil {
			log.Error("a reply of a resumed command cannot be queued", "to", r.To, "err", err)
			continue
		}
		ns = append(ns, n)
	}
	if err := a.Service.Tell(ctx, ns...); err != nil {
		log.Error("queueing the replies of a resumed command", "replies", len(ns), "err", err)
	}
}

// releaseStoppedTellers gives back, at start and before the first re-check pass, the changes of
// groups that processes on this host had found and not yet told when they stopped (killed in the
// middle of a pass, or an earlier life of a restarted container's process with the same id): the
// first pass tells them at once, instead of once their claim lapses. This process's own claims
// and other hosts' are left; theirs lapse.
func releaseStoppedTellers(ctx context.Context, a *App, self string, log *slog.Logger) {
	owners, err := a.Store.GroupsChangeClaimers(ctx, a.Clock.Now())
	if err != nil {
		log.Warn("reading the claims on changes of groups to tell", "err", err)
		return
	}
	host, _ := os.Hostname()
	var stopped []string
	for _, o := range owners {
		name, _, _ := strings.Cut(o, "@")
		if o != self && senderStopped(name, host) {
			stopped = append(stopped, o)
		}
	}
	if len(stopped) == 0 {
		return
	}
	n, err := a.Store.ReleaseGroupsChanges(ctx, stopped)
	if err != nil {
		log.Warn("taking back the changes of groups that stopped processes had to tell", "err", err)
		return
	}
	log.Info("took back the changes of groups that stopped processes on this host had to tell; the next re-check pass tells them", "processes", strings.Join(stopped, ","), "changes", n)
}

// ssoSettings are single sign-on's settings, as serve and discord register both read them: the
// environment through getenv, the client secret possibly from a file (QM_OIDC_CLIENT_SECRET_FILE)
// like every secret, and the policy's oidc section. on is false when single sign-on is off.
func ssoSettings(getenv func(string) string, pol *policy.Policy) (cfg oidc.Config, on bool, err error) {
	clientSecret, err := config.SecretFrom(oidc.EnvClientSecret, getenv)
	if err != nil {
		return cfg, false, err
	}
	return oidc.FromEnv(func(k string) string {
		if k == oidc.EnvClientSecret {
			return clientSecret
		}
		return getenv(k)
	}, pol)
}

// ssoLoop re-checks the groups of the links that are due, now and every ssoPass (or every
// re-check period where that is shorter), and forgets old login links.
func ssoLoop(ctx context.Context, sso *oidc.Service, log *slog.Logger) {
	every := min(ssoPass, sso.Config().Recheck)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rep, err := sso.Recheck(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("re-checking groups failed; will retry", "err", err)
		case rep.Checked+rep.Revoked+rep.Unchecked+rep.Told > 0:
			log.Info("groups re-checked", "checked", rep.Checked, "changed", rep.Changed, "revoked", rep.Revoked, "unchecked", rep.Unchecked, "no_groups", rep.NoGroups, "told", rep.Told)
		}
		if _, err := sso.Prune(ctx); err != nil && ctx.Err() == nil {
			log.Warn("forgetting old login links failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
