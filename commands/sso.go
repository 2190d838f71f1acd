package commands

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// SSO is single sign-on, where it is set up (internal/oidc implements it): who a chat account
// is at the identity provider, and the one-time links that let it sign in.
type SSO interface {
	// Link is the account's link, or an ENOTFOUND error; current is false when its groups are no
	// longer confirmed by the provider and it must sign in again.
	Link(ctx context.Context, a qm.Account) (link *qm.AccountLink, current bool, err error)
	// LoginURL makes a one-time login link for the account; chatEmail, when not empty, is the
	// email the login must prove, and resume a command to run once it has.
	LoginURL(ctx context.Context, a qm.Account, chatEmail, resume string) (url string, expires time.Time, err error)
	// Logout unlinks the account; false when it was not linked.
	Logout(ctx context.Context, a qm.Account) (bool, error)
	// Unlink unlinks a chat account (platform:workspace:user) or every account of an email.
	Unlink(ctx context.Context, who string) (int64, error)
}

// accountOf is the chat account of a request, as the domain names accounts.
func accountOf(req bot.Request) qm.Account {
	return qm.Account{Platform: req.Account.Platform, Workspace: req.Account.Workspace, User: req.Account.User}
}

// chatEmail is the email the chat platform showed for the request, when it is one. Discord shows
// apps no email: the User its adapter names is who Quartermaster already knows the account as
// (its earlier sign-in, or the directory), which a new sign-in is not held to; signing in there
// as someone else than the account's link is refused as another person's account, with how to
// sign out first.
func chatEmail(req bot.Request) string {
	if req.Account.Platform == "discord" {
		return ""
	}
	if strings.Contains(req.User, "@") {
		return req.User
	}
	return ""
}

var errNoAccount = qm.Errorf(qm.EFORBIDDEN, "this chat did not say which account you are, so single sign-on cannot tell who you are here; use Slack or another chat with /gpu login.")

// door is single sign-on at the door: a command that needs to know who asks runs only for a
// linked account whose groups are current, as the email its login proved; anything else gets a
// login link and nothing else happens. An approval or denial needs a login fresher than
// approvals.step_up: an older one gets a link that makes the decision once the login is done.
// stop is true when the replies are the answer.
func (b *Bot) door(ctx context.Context, req *bot.Request, c Command) (replies []bot.Reply, stop bool) {
	acct := accountOf(*req)
	if acct.IsZero() {
		return []bot.Reply{b.refuse(ctx, c.Verb, errNoAccount)}, true
	}
	// A decision is carried by the login link and made once the login is done, whatever made
	// the login necessary: the approver's click is not lost.
	resume := ""
	if c.Verb == "approve" || c.Verb == "deny" {
		resume = "/gpu " + c.Verb + " " + c.Lease.String()
		if c.Reason != "" {
			resume += " " + c.Reason
		}
	}
	nothing := "nothing was done"
	if resume != "" {
		nothing = "nothing was decided yet"
	}
	link, current, err := b.SSO.Link(ctx, acct)
	if resume != "" && (qm.ErrorCode(err) == qm.ENOTFOUND || err == nil && !current) {
		// Who they are is not known now; a decision a sign-in could only be refused (no such
		// request waits) is refused now, without a link.
		if werr := b.Svc.WaitsForDecision(ctx, c.Lease); qm.ErrorCode(werr) == qm.EFORBIDDEN {
			return []bot.Reply{b.refuse(ctx, c.Verb, werr)}, true
		}
	}
	switch {
	case qm.ErrorCode(err) == qm.ENOTFOUND:
		return b.loginPrompt(ctx, *req, c, "Quartermaster does not know who you are yet, so "+nothing+".", resume, false), true
	case err != nil:
		return []bot.Reply{b.refuse(ctx, c.Verb, err)}, true
	case !current && !link.NoGroupsAt.IsZero():
		// The provider answered the re-check but said nothing about groups: a sign-in reads them.
		return b.loginPrompt(ctx, *req, c, fmt.Sprintf("Your groups could not be confirmed with the identity provider since %s: it gave no groups when they were checked again (last %s), so %s.", b.when(link.CheckedAt), b.when(link.NoGroupsAt), nothing), resume, false), true
	case !current:
		return b.loginPrompt(ctx, *req, c, fmt.Sprintf("Your groups could not be confirmed with the identity provider since %s, so %s.", b.when(link.CheckedAt), nothing), resume, false), true
	}
	if stepUp := b.pol().Approvals.StepUp.Duration; resume != "" && stepUp > 0 {
		if age := b.Svc.Clock.Now().Sub(link.LoginAt); age > stepUp {
			// Their groups are current, so whether they may decide is known: someone who may
			// not (a teammate, the requester), or a request that no longer waits, is told so
			// now, not after a sign-in whose decision could only be refused.
			if r := b.decisionRefusal(ctx, qm.CanonicalUser(link.Email), c); r != nil {
				return []bot.Reply{*r}, true
			}
			why := fmt.Sprintf("Deciding %s spends a budget, so it needs a sign-in from the last %s; yours was %s ago.", c.Lease, policy.FormatDuration(stepUp), policy.FormatDuration(age))
			return b.loginPrompt(ctx, *req, c, why, resume, true), true
		}
	}
	req.User = qm.CanonicalUser(link.Email)
	return nil, false
}

// loginPrompt answers with a one-time login link, privately: why it is needed, the link, and
// what happens after. With resume set the link carries the command, which runs as soon as the
// login is done; a decision is promised outright only where mayDecide says the person is one of
// those who decide it, else only if it is theirs to decide.
func (b *Bot) loginPrompt(ctx context.Context, req bot.Request, c Command, why, resume string, mayDecide bool) []bot.Reply {
	url, exp, err := b.SSO.LoginURL(ctx, accountOf(req), chatEmail(req), resume)
	if err != nil {
		return []bot.Reply{b.refuse(ctx, c.Verb, err)}
	}
	then := "then type your command again."
	switch {
	case c.Verb == "login":
		then = "then come back here."
	case resume != "" && c.Verb == "approve":
		then = c.Lease.String() + " is approved as soon as you have"
	case resume != "":
		then = c.Lease.String() + " is denied as soon as you have"
	}
	if resume != "" {
		if !mayDecide {
			then += ", if it is yours to decide"
		}
		then += "."
	}
	text := fmt.Sprintf("Sign in with the single sign-on of %s (the link works once, until %s): %s — %s",
		b.pol().Organization, exp.In(b.pol().Location).Format("15:04 MST"), url, then)
	if why != "" {
		text = why + " " + text
	}
	return []bot.Reply{{Ephemeral: true, Text: text}}
}

// login is /gpu login: a private one-time link that links this chat account to the identity.
func (b *Bot) login(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	acct := accountOf(req)
	if acct.IsZero() {
		return []bot.Reply{b.refuse(ctx, c.Verb, errNoAccount)}
	}
	why := ""
	if link, _, err := b.SSO.Link(ctx, acct); err == nil {
		why = fmt.Sprintf("You are signed in as %s since %s; to sign in again:", link.Email, b.when(link.LoginAt))
	}
	return b.loginPrompt(ctx, req, c, why, "", false)
}

// logout is /gpu logout: this chat account is unlinked.
func (b *Bot) logout(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	acct := accountOf(req)
	if acct.IsZero() {
		return []bot.Reply{b.refuse(ctx, c.Verb, errNoAccount)}
	}
	link, _, err := b.SSO.Link(ctx, acct)
	if qm.ErrorCode(err) == qm.ENOTFOUND {
		return []bot.Reply{{Ephemeral: true, Text: "This chat account is not signed in, so there is nothing to sign out of. /gpu login signs you in."}}
	}
	if err != nil {
		return []bot.Reply{b.refuse(ctx, c.Verb, err)}
	}
	if _, err := b.SSO.Logout(ctx, acct); err != nil {
		return []bot.Reply{b.refuse(ctx, c.Verb, err)}
	}
	b.log().Info("signed out", "account", acct.String(), "email", link.Email)
	b.handOverStranded(ctx)
	return []bot.Reply{{Ephemeral: true, Text: fmt.Sprintf("Signed out: this chat account is no longer linked to %s. Your leases run on; /gpu login signs you in again.", link.Email)}}
}

// unlink is /gpu unlink WHO: a platform admin (oidc.admins) unlinks someone's chat accounts.
func (b *Bot) unlink(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	if c.Who == nil || !b.pol().IsSSOAdmin(c.Who.User, c.Who.Groups) {
		return []bot.Reply{b.refuse(ctx, c.Verb, qm.Errorf(qm.EFORBIDDEN, "only a platform admin (oidc.admins in the policy) can unlink other people's chat accounts; you can sign yourself out.").WithExample("/gpu logout"))}
	}
	n, err := b.SSO.Unlink(ctx, c.Arg)
	if err != nil {
		return []bot.Reply{b.refuse(ctx, c.Verb, err)}
	}
	b.log().Info("unlinked by a platform admin", "admin", c.Who.User, "who", c.Arg, "accounts", n)
	if n > 0 {
		b.handOverStranded(ctx)
	}
	if n == 0 {
		return []bot.Reply{{Text: fmt.Sprintf("No chat account is linked to %s; nothing changed.", c.Arg)}}
	}
	return []bot.Reply{{Text: fmt.Sprintf("Unlinked %s of %s: they must /gpu login again before they can ask for anything. Their running leases are left alone.", policy.Count(int(n), "chat account", "chat accounts"), c.Arg)}}
}

func parseUnlink(c Command, args []string) (Command, error) {
	if len(args) != 1 {
		return c, bad(c.Verb, "/gpu unlink needs one email or chat account (platform:workspace:user).")
	}
	c.Arg = unquoted(args[0])
	if id, ok := discordUser(c.Arg); ok {
		c.Arg = "discord::" + id
		return c, nil
	}
	if strings.Count(c.Arg, ":") == 2 {
		if _, err := qm.ParseAccount(c.Arg); err == nil {
			return c, nil
		}
	} else if looksLikeEmail(c.Arg) {
		return c, nil
	}
	// A typed @name (Slack's) names nobody Quartermaster can look up: the command arrives as
	// typed (manifest.yaml: should_escape: false, which every other argument relies on), so Slack
	// never says whose account a mention is.
	if slackMention(c.Arg) {
		return c, bad(c.Verb, "%s is neither an email nor a chat account: Slack passes a mention to /gpu as the name typed, not as an account, so Quartermaster cannot tell whose it is; type their email, or their Slack account as slack:WORKSPACE_ID:MEMBER_ID (in Slack, their profile's ⋮ menu, Copy member ID; the workspace ID begins with T).", policy.Quoted(c.Arg, 60))
	}
	return c, bad(c.Verb, "%s is neither an email nor a chat account like slack:T024BE7LD:U024BE7LH or discord::880000000000000001.", policy.Quoted(c.Arg, 60))
}

// discordNameTyped is the refusal of /gpu unlink who:@name on Discord: a name typed after @ and
// not picked from the list Discord offers reaches the command as text, which names nobody.
func discordNameTyped(c Command) error {
	return bad(c.Verb, "%s is neither an email nor a chat account: Discord passes a name typed after @ as text, unless the person is picked from the list it offers as you type; pick them there, or type their email, or their Discord account as discord:USER_ID (in Discord, Settings > Advanced > Developer Mode, then Copy User ID on the person).", policy.Quoted(c.Arg, 60))
}

// discordNotAPerson is the refusal, on Discord, of /gpu unlink who: with what names no person: a
// role or channel mention (what Discord writes when one is picked, a channel of the policy's
// discord.channels by its name), or a word. It says so in
// Discord's words, with no Slack account format.
func discordNotAPerson(c Command) error {
	how := "pick the person in the who option as you type, or type their email, or their Discord account as discord:USER_ID (in Discord, Settings > Advanced > Developer Mode, then Copy User ID on the person)."
	switch {
	case strings.HasPrefix(c.Arg, "<@&") && strings.HasSuffix(c.Arg, ">"):
		return bad(c.Verb, "%s is a Discord role, not a person: %s", policy.Quoted(c.Arg, 60), how)
	case channelWord(c.Arg) || strings.HasPrefix(c.Arg, "<#") && strings.HasSuffix(c.Arg, ">"):
		// #team-7b-gpu: a channel the policy's discord.channels names, as the adapter passes it.
		return bad(c.Verb, "%s is a Discord channel, not a person: %s", policy.Quoted(c.Arg, 60), how)
	}
	return bad(c.Verb, "%s is neither an email nor a Discord account: %s", policy.Quoted(c.Arg, 60), how)
}

// slackMention reports whether s is a Slack mention of a person: @name as typed, or <@U…> (or
// <@W…>, with or without |name) written out.
func slackMention(s string) bool {
	if name, ok := strings.CutPrefix(s, "@"); ok {
		return name != ""
	}
	id, ok := strings.CutPrefix(s, "<@")
	if !ok || !strings.HasSuffix(id, ">") {
		return false
	}
	id, _, _ = strings.Cut(strings.TrimSuffix(id, ">"), "|")
	return len(id) > 1 && (id[0] == 'U' || id[0] == 'W') && strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == ""
}

// discordUser is the Discord user id that s names as Discord admins write one: a mention
// (<@USER_ID>, or <@!USER_ID>, which Discord inserts when a user is picked) or the directory's
// discord:USER_ID. A Discord account is linked without a workspace (discord::USER_ID).
func discordUser(s string) (string, bool) {
	id, ok := strings.CutPrefix(s, "<@")
	if ok {
		id, ok = strings.CutSuffix(strings.TrimPrefix(id, "!"), ">")
	} else if platform, rest, found := strings.Cut(s, ":"); found && strings.EqualFold(platform, "discord") {
		id, ok = rest, true
	}
	if !ok || id == "" || len(id) > 20 || strings.Trim(id, "0123456789") != "" {
		return "", false
	}
	return id, true
}

// looksLikeEmail reports whether s is written as an email: one @ with something on each side,
// and no spaces or angle brackets (a chat mention is not one).
func looksLikeEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" && !strings.ContainsAny(s, "<> \t") && !strings.Contains(domain, "@")
}

func hasSSO(b *Bot) bool { return b.SSO != nil }

// SSONotSetUp is why the single sign-on commands are not offered without it, and who turns it on
// (docs/sso.md).
const SSONotSetUp = "single sign-on is not set up on this install, and a platform admin turns it on by setting QM_OIDC_ISSUER (docs/sso.md)"

// GroupsChanged tells what a re-check of someone's groups at the identity provider means: for
// each team they left, they (and its budget owners) hear that they can start no new leases for
// it, which of their requests waiting for approval were withdrawn and which of their leases
// queued and not yet started were cancelled (or, for a revoked sign-in, which requests wait
// and cannot be approved until {they} sign in again, which leases queued for GPUs do not start
// until then, and which leases whose jobs the scheduler queued, and would start, were
// cancelled), and which of their leases run on to
// their end (budget owners named by group: each member signed in); they read it in the second
// person ("you are no longer in team …"), the budget owners about them. after is nil when the provider no longer honours their sign-in (that chat account
// was unlinked): that says nothing about their groups, so the teams they lose are those no other
// chat account of theirs, still signed in, keeps, until they sign in again. When their groups
// changed, their copies of approval messages that they may no longer decide are edited to say
// who decides now, without buttons (formerApprovers). The replies are addressed (To) and ready
// to send.
func (b *Bot) GroupsChanged(ctx context.Context, before, after *qm.AccountLink) []bot.Reply {
	if before == nil {
		return nil
	}
	user := qm.CanonicalUser(before.Email)
	teams := func(groups []string) map[string]bool {
		out := map[string]bool{}
		for _, t := range b.pol().TeamsOf(groups) {
			out[t.Name] = true
		}
		return out
	}
	was, is := teams(before.Groups), map[string]bool{}
	switch {
	case after != nil:
		is = teams(after.Groups)
	default:
		if id, err := b.Svc.Resolve(ctx, user); err == nil {
			is = teams(id.Groups)
		}
	}
	var lost []string
	for t := range was {
		if !is[t] {
			lost = append(lost, t)
		}
	}
	sort.Strings(lost)
	var out []bot.Reply
	if after == nil {
		out = append(out, bot.Reply{To: user, Text: fmt.Sprintf("Your sign-in from %s was revoked at the identity provider, so that chat account is no longer linked. /gpu login signs you in again.", platformLabel(before.Account.Platform))})
	}
	for _, team := range lost {
		ls, err := b.Svc.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, User: user, Team: team, States: qm.OpenStates})
		if err != nil {
			b.log().Error("listing the leases of someone who left a team", "user", user, "team", team, "err", err)
		}
		// The notice is written about them ({they}) for the budget owners, and to them ("you")
		// for themselves: head is the first sentence of each.
		head := fmt.Sprintf("%s is no longer in team %s at the identity provider (checked %s), so they can start no new leases for it.", user, team, b.when(b.Svc.Clock.Now()))
		yours := fmt.Sprintf("You are no longer in team %s at the identity provider (checked %s), so you can start no new leases for it.", team, b.when(b.Svc.Clock.Now()))
		if after == nil {
			head = fmt.Sprintf("The sign-in of %s was revoked at the identity provider (checked %s), so they can start no new leases for team %s until they sign in again.", user, b.when(b.Svc.Clock.Now()), team)
			yours = fmt.Sprintf("Your sign-in was revoked at the identity provider (checked %s), so you can start no new leases for team %s until you sign in again.", b.when(b.Svc.Clock.Now()), team)
		}
		text := ""
		var ids, withdrawn, held, waiting, cancelled []string
		for _, l := range ls {
			if l.State == qm.PendingApproval && after == nil {
				// Their sign-in was revoked: it waits, and cannot be approved until they sign in.
				held = append(held, fmt.Sprintf("%s (%s)", l.ID, b.askText(l)))
				continue
			}
			if l.State == qm.Queued && l.Ref == "" && after == nil {
				// Queued for GPUs the service places: as an approval, its start waits for them.
				waiting = append(waiting, fmt.Sprintf("%s (%s)", l.ID, b.askText(l)))
				continue
			}
			if l.State == qm.Queued && after == nil {
				// Its job waits in the scheduler's queue, which would start it before they are
				// back: it is cancelled, as for someone who left the team.
				ok, err := b.Svc.Withdraw(ctx, l, fmt.Sprintf("the sign-in of %s was revoked at the identity provider before it started", user))
				if err != nil {
					b.log().Error("cancelling a queued lease of someone whose sign-in was revoked", "lease", l.ID, "user", user, "err", err)
				}
				if ok {
					cancelled = append(cancelled, fmt.Sprintf("%s (%s)", l.ID, b.askText(l)))
					continue
				}
				if cur, err := b.Svc.Get(ctx, l.ID); err == nil {
					l = cur
				}
			}
			// A request that still waits would start a new lease for the team once approved, and
			// a lease queued for GPUs once they free: each is withdrawn (a queued job leaves the
			// scheduler's queue). Only a sign-in the provider revoked says nothing of their teams.
			if (l.State == qm.PendingApproval || l.State == qm.Queued) && after != nil {
				wasQueued := l.State == qm.Queued
				ok, err := b.Svc.Withdraw(ctx, l, fmt.Sprintf("%s is no longer in team %s at the identity provider", user, team))
				if err != nil {
					b.log().Error("withdrawing a request of someone who left a team", "lease", l.ID, "user", user, "team", team, "err", err)
				}
				if ok && wasQueued {
					cancelled = append(cancelled, fmt.Sprintf("%s (%s)", l.ID, b.askText(l)))
					continue
				}
				if ok {
					withdrawn = append(withdrawn, fmt.Sprintf("%s (%s)", l.ID, b.askText(l)))
					continue
				}
				if cur, err := b.Svc.Get(ctx, l.ID); err == nil {
					l = cur // it moved on meanwhile (started, decided): say what it is now
				}
			}
			ids = append(ids, fmt.Sprintf("%s (%s, %s)", l.ID, l.State, b.askText(l)))
		}
		if len(withdrawn) > 0 {
			what := "This request, which waited for approval, was withdrawn: "
			if len(withdrawn) > 1 {
				what = "These requests, which waited for approval, were withdrawn: "
			}
			text += " " + what + strings.Join(withdrawn, "; ") + "."
		}
		if len(cancelled) > 0 {
			what := "This lease, queued and not yet started, was cancelled: "
			if len(cancelled) > 1 {
				what = "These leases, queued and not yet started, were cancelled: "
			}
			if after == nil {
				what = "This lease, queued in the scheduler, which would start it before {they} sign in again, was cancelled: "
				if len(cancelled) > 1 {
					what = "These leases, queued in the scheduler, which would start them before {they} sign in again, were cancelled: "
				}
			}
			text += " " + what + strings.Join(cancelled, "; ") + "."
		}
		if len(waiting) > 0 {
			what := "This lease, queued for GPUs, does not start until {they} sign in again: "
			if len(waiting) > 1 {
				what = "These leases, queued for GPUs, do not start until {they} sign in again: "
			}
			text += " " + what + strings.Join(waiting, "; ") + "."
		}
		if len(held) > 0 {
			what := "This request waits for approval, and cannot be approved until {they} sign in again: "
			if len(held) > 1 {
				what = "These requests wait for approval, and cannot be approved until {they} sign in again: "
			}
			text += " " + what + strings.Join(held, "; ") + "."
		}
		switch {
		case len(ids) == 1:
			text += " This lease is left alone and runs to its end: " + ids[0] + "."
		case len(ids) > 1:
			text += " These leases are left alone and run to their end: " + strings.Join(ids, "; ") + "."
		}
		// Budget owners named by group are each of its members that signed in.
		to := []string{user}
		for _, a := range b.pol().Approvers(team) {
			to = append(to, b.Svc.People(a)...)
		}
		seen := map[string]bool{}
		for _, r := range to {
			if r = qm.CanonicalUser(r); !seen[r] && strings.Contains(r, "@") {
				seen[r] = true
				says := head + strings.ReplaceAll(text, "{they}", "they")
				if r == user {
					says = yours + strings.ReplaceAll(text, "{they}", "you")
				}
				out = append(out, bot.Reply{To: r, Text: says, Ref: "left-team:" + team + ":" + user})
			}
		}
	}
	if after != nil {
		// A revoked sign-in says nothing of their groups: their copies wait for them to sign in.
		former := b.formerApprovers(ctx, user)
		out = append(out, former...)
		b.handOverUnreached(ctx, former)
	} else {
		b.handOverStranded(ctx)
	}
	return out
}

// handOverUnreached sends the requests whose copies former retires (edits of approval messages
// held by someone who no longer decides them) to the fallback approvers where none of their
// team's approvers reaches anyone now: the one who left was the last of a group signed in.
// Whoever holds a copy already is not sent another.
func (b *Bot) handOverUnreached(ctx context.Context, former []bot.Reply) {
	for _, e := range former {
		if id, err := qm.ParseLeaseID(strings.TrimPrefix(e.Ref, "approval:")); err == nil {
			b.handOver(ctx, id)
		}
	}
}

// handOverStranded sends every request that waits for approval, none of whose team's approvers
// reaches anyone now, to the fallback approvers: someone signed out, was unlinked or had their
// sign-in revoked, and was the last of a group of approvers signed in.
func (b *Bot) handOverStranded(ctx context.Context) {
	pending, err := b.Svc.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, States: []qm.State{qm.PendingApproval}})
	if err != nil {
		b.log().Error("list the requests that wait, for those nobody can be told of", "err", err)
		return
	}
	for _, l := range pending {
		if !b.Svc.DecidersReach(l.Team, l.User) {
			b.handOver(ctx, l.ID)
		}
	}
}

// handOver sends request id to the fallback approvers where none of its team's approvers
// reaches anyone now (qm.HandOverUnreached); whoever holds a copy already is not sent another.
func (b *Bot) handOver(ctx context.Context, id qm.LeaseID) { b.handOverAs(ctx, id, false) }

// sendToNewApprovers sends request l, which waits for approval, to those who decide it now and
// hold no copy of it (holders, canonical, hold one) nor wait for one to be delivered (Queued), once (qm.SendToNewApproversOf): with Approve
// and Deny, as those it was first sent to.
func (b *Bot) sendToNewApprovers(ctx context.Context, l *qm.Lease, holders []string) {
	if b.Queued != nil && b.Svc.DecidersWithoutCopy(l, holders) {
		// A message still waiting to be delivered is as good as a copy.
		queued, err := b.Queued(ctx, l.ID)
		if err != nil {
			b.log().Error("read to whom notices about a request wait to be delivered", "lease", l.ID, "err", err)
			return // tried again at the next start
		}
		for _, q := range queued {
			holders = append(holders, qm.CanonicalUser(q))
		}
	}
	if len(holders) == 0 && b.Posted != nil {
		// No copy was ever posted, not even one retired since: the request never reached a
		// chat (it was made in the console, whose output reaches no one, or while no chat was
		// on). Its approvers get it now, once, and the message says why.
		posted, err := b.Posted(ctx, "approval:"+l.ID.String())
		if err != nil {
			b.log().Error("read whether an approval message was ever posted", "lease", l.ID, "err", err)
			return // tried again at the next start
		}
		if !posted {
			if ok, err := b.Svc.SendUndelivered(ctx, l); err != nil {
				b.log().Error("send a request that no chat delivered to its approvers", "lease", l.ID, "err", err)
			} else if ok {
				b.log().Info("sent a request no chat had delivered to its approvers (made in the console, or while no chat was on)", "lease", l.ID)
			}
			return
		}
	}
	if ok, err := b.Svc.SendToNewApproversOf(ctx, l, holders); err != nil {
		b.log().Error("send a request whose approvers the policy changed to its new approvers", "lease", l.ID, "err", err)
	} else if ok {
		b.log().Info("sent a request to the approvers a new policy names", "lease", l.ID)
	}
}

// handOverAs is handOver, for a request whose approvers the policy changed where changed is set
// (qm.HandOverChangedApprovers says so).
func (b *Bot) handOverAs(ctx context.Context, id qm.LeaseID, changed bool) {
	var holders []string
	if b.Copies != nil {
		var err error
		if holders, err = b.Copies(ctx, "approval:"+id.String()); err != nil {
			b.log().Error("read who holds copies of an approval message", "lease", id, "err", err)
			return
		}
	}
	for i, h := range holders {
		holders[i] = qm.CanonicalUser(h)
	}
	hand := b.Svc.HandOverUnreached
	if changed {
		hand = b.Svc.HandOverChangedApprovers
	}
	if ok, err := hand(ctx, id, holders); err != nil {
		b.log().Error("send a request nobody of its team's approvers can be told of to the fallback approvers", "lease", id, "err", err)
	} else if ok {
		b.log().Info("sent a request to the fallback approvers: nobody of its team's approvers can be told of it any more", "lease", id)
	}
}

// platformLabel names a chat platform in a sentence.
func platformLabel(p string) string {
	switch p {
	case "slack":
		return "Slack"
	case "discord":
		return "Discord"
	case "":
		return "chat"
	}
	return p
}
