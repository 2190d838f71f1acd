package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/reports/showback"
)

// Bot answers /gpu commands from the command table.
type Bot struct {
	Svc    *qm.Service
	Logger *slog.Logger
	// Templates offers /gpu templates, /gpu template and /gpu submit when set (AddTemplates).
	Templates *Templates
	// SSO, when set, is who asks: the chat account's link to the identity provider, not the
	// directory (and /gpu login, logout and unlink are offered).
	SSO SSO
	// Reports offers /gpu report when set (AddReport).
	Reports *showback.Service
	// Edits, when set, edits messages already posted (bot.Reply's Update and EditOnly): the
	// copy of an approval message that someone who is no longer an approver pressed a button of,
	// or holds when the approvers change (RetireFormerApprovers).
	Edits bot.Sender
	// Copies, when set, says to whom the copies of the messages about ref (e.g. "approval:L-5")
	// were posted, on every platform (people and channels, as the bot named them).
	Copies func(ctx context.Context, ref string) ([]string, error)
	// Retired, when set, remembers that the copies about ref posted to recipient (as Copies named
	// them) were edited for someone who may no longer decide it, so that Copies leaves them out
	// and RetireFormerApprovers edits each copy once, not again at every start.
	Retired func(ctx context.Context, ref, recipient string) error
	// Queued, when set, says to whom notices about lease id wait to be delivered (the outbox):
	// they are sent its approval message already, though they hold no copy yet.
	Queued func(ctx context.Context, id qm.LeaseID) ([]string, error)
	// Posted, when set, says whether any copy about ref was ever posted in a chat, retired or
	// not: a waiting request none of whose copies was is sent to its approvers at start, once
	// (qm.SendUndelivered), where one whose approvers changed goes to the new ones only.
	Posted func(ctx context.Context, ref string) (bool, error)
}

func (b *Bot) pol() *policy.Policy { return b.Svc.Policy }

func (b *Bot) log() *slog.Logger {
	if b.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Logger
}

// Handle answers one command: it parses the text with the command table, resolves who asks once
// (all but the public commands need a known person), and runs the command's handler.
func (b *Bot) Handle(ctx context.Context, req bot.Request) []bot.Reply {
	req = typedInNFC(req)
	ctx, typed := withTypedTexts(ctx)
	return typed.mark(b.handle(ctx, req))
}

func (b *Bot) handle(ctx context.Context, req bot.Request) []bot.Reply {
	req.User = qm.CanonicalUser(req.User)
	ctx = qm.WithDeliveryKey(ctx, req.Key)
	// While the service waits on the scheduler, the adapter's slot is free for other commands.
	outside := ctx
	ctx = qm.WithOutsideWait(ctx, func() func() { return bot.WaitOutside(outside) })
	c, err := b.parse(req.Text)
	showsTyped(ctx, c.Reason)
	if s, ok := Lookup(c.Verb); ok && !b.offers(s) {
		// Not offered here, whatever follows it: a refusal of its arguments would give an
		// example that is itself refused.
		return []bot.Reply{b.notOffered(ctx, s)}
	}
	if err != nil {
		user, known := b.signedIn(ctx, req)
		if known {
			if who, err := b.Svc.Resolve(ctx, user); err == nil {
				ctx = b.exampleContext(ctx, who)
				c.Who = &who
			}
		}
		err = channelNotTheirs(c, err)
		c, err = b.dataMentioned(c, req.Text, err)
		ctx = withTyped(ctx, c)
		switch {
		case c.Verb == "unlink" && takesOptions(req) && slackMention(c.Arg):
			err = discordNameTyped(c)
		case c.Verb == "unlink" && takesOptions(req) && c.Arg != "":
			err = discordNotAPerson(c)
		}
		err = b.ownLeaseExample(ctx, user, known, c.Verb, b.typedLeaseExample(ctx, user, known, c, err))
		return []bot.Reply{b.refuse(ctx, c.Verb, b.keepWorkingTeam(c, b.submitExample(c, err)))}
	}
	s, _ := Lookup(c.Verb)
	if b.SSO != nil && !s.Public {
		if rs, stop := b.door(ctx, &req, c); stop {
			return rs
		}
	}
	who, err := b.Svc.Resolve(ctx, req.User)
	switch {
	case err == nil:
		c.Who = &who
		ctx = b.exampleContext(ctx, who)
	case !s.Public:
		return []bot.Reply{b.refuse(ctx, c.Verb, err)}
	}
	return s.run(withTyped(ctx, c), b, req, c)
}

// typedInNFC is req as typed, in Unicode normal form C (nfc.Name): an accented letter written as
// the letter and a combining accent (e and U+0301, as text pasted from macOS holds it) is the one
// character (é) a keyboard types, so a reason, a channel or a name pasted so is kept, shown and
// compared as the same text typed. Every chat platform, and the console, hands its text in here.
func typedInNFC(req bot.Request) bot.Request {
	req.User = nfc.Name(req.User)
	req.Text = nfc.Name(req.Text)
	req.Channel = nfc.Name(req.Channel)
	return req
}

// parse reads text as ParseIn does, knowing the names of the templates installed, if any, and the
// commands offered here (a typo of /gpu report is answered with it where reports are on).
func (b *Bot) parse(text string) (Command, error) {
	var names []string
	if b.Templates != nil && b.Templates.Catalog != nil {
		names = b.Templates.names()
	}
	var verbs []string
	for _, s := range b.Offered() {
		if len(s.Words) > 0 && !slices.Contains(verbs, s.Words[0]) {
			verbs = append(verbs, s.Words[0])
		}
	}
	return parseKnowing(text, b.pol(), names, verbs)
}

// Open says whether anyone may run the command line text, even someone Quartermaster does not
// know (bot.Opener): a command of the table marked Public that this installation offers, its
// arguments right or not (a refusal of them is as public as the command).
func (b *Bot) Open(text string) bool {
	c, _ := ParseIn(nfc.Name(text), b.pol())
	s, ok := Lookup(c.Verb)
	return ok && s.Public && b.offers(s)
}

// notOffered is the refusal of a command this installation does not offer.
func (b *Bot) notOffered(ctx context.Context, s *Spec) bot.Reply {
	if s.unoffered != "" {
		return b.refuse(ctx, "", qm.Invalid("/gpu help", "/gpu %s is not offered here: %s.", strings.Join(s.Words, " "), s.unoffered))
	}
	return b.refuse(ctx, "", qm.Invalid("/gpu help", "/gpu %s is not offered here; /gpu help lists what is.", strings.Join(s.Words, " ")))
}

// Check is what a decision's form checks before it asks for more (the reason for a denial):
// the refusal that "/gpu deny LEASE" or "/gpu approve LEASE" would get from someone who may not
// decide it, or who decides a request that no longer waits, or nil. Signing in is left to the
// command itself (its login link carries the reason given), as is anything Check cannot tell
// (a database that fails): those get the form. It changes no lease; the copy of the approval
// message that a former approver pressed Deny on is edited (formerApprover).
func (b *Bot) Check(ctx context.Context, req bot.Request) *bot.Reply {
	req = typedInNFC(req)
	c, err := Parse(req.Text)
	if err != nil || (c.Verb != "deny" && c.Verb != "approve") {
		return nil
	}
	user, ok := b.signedIn(ctx, req)
	if !ok {
		// Who asks is not known until they sign in, but a request that does not wait is
		// refused whoever asks.
		if err := b.Svc.WaitsForDecision(ctx, c.Lease); qm.ErrorCode(err) == qm.EFORBIDDEN {
			return &bot.Reply{Error: true, Ephemeral: true, Text: qm.ErrorMessage(err) + " Example: " + b.expandFor(ctx, "/gpu approvals")}
		}
		return nil
	}
	r := b.decisionRefusal(ctx, user, c)
	if r == nil {
		return nil
	}
	// The form is asked for from a button (Deny): a former approver's copy loses its buttons.
	// The edit waits its turn behind the recipient's other messages, so it goes on its own: the
	// refusal is due at once (Discord wants an answer to a click within 3 seconds).
	if e := b.formerApprover(ctx, user, c.Lease, b.Svc.CheckDecide(ctx, user, c.Lease, false)); e != nil {
		go b.edit(context.WithoutCancel(ctx), *e)
	}
	return r
}

// decisionRefusal is the refusal user would get deciding c's request (someone who may not
// decide it, a request that no longer waits, or an approval whose requester must sign in
// again first), or nil when they may, or when it cannot be told
// now (the command judges).
func (b *Bot) decisionRefusal(ctx context.Context, user string, c Command) *bot.Reply {
	_, err := b.Svc.Resolve(ctx, user)
	if err == nil {
		err = b.Svc.CheckDecide(ctx, user, c.Lease, c.Verb == "approve")
	}
	var e *qm.Error
	if !errors.As(err, &e) || e.Code == qm.EINTERNAL || e.Code == qm.EUNAVAILABLE {
		return nil // decidable, or not known now: the form, and the command judges
	}
	// The sentence alone (who decides, or what the request is now), with an example only where
	// the refusal has one of its own: the command's would be another denial.
	text := e.Message
	if e.Example != "" {
		text += " Example: " + b.expandFor(ctx, e.Example)
	}
	return &bot.Reply{Error: true, Ephemeral: true, Text: text}
}

// signedIn is who req's person is, as a command would know them, without asking them anything:
// with single sign-on, the email their linked account proved (false when it is not linked or
// its groups are not current); without, the user the adapter names.
func (b *Bot) signedIn(ctx context.Context, req bot.Request) (string, bool) {
	if b.SSO == nil {
		return qm.CanonicalUser(req.User), true
	}
	acct := accountOf(req)
	if acct.IsZero() {
		return "", false
	}
	link, current, err := b.SSO.Link(ctx, acct)
	if err != nil || !current {
		return "", false
	}
	return qm.CanonicalUser(link.Email), true
}

// DefaultClass is the class that "/gpu request" naming no class would give req's person now:
// the first class, in the policy's order, in which their team has quota and room (the rule
// the request itself applies). ok is false when none has room, or the person is not known
// (not signed in, in no team): a request form then starts on the catalog's first class.
func (b *Bot) DefaultClass(ctx context.Context, req bot.Request) (class string, ok bool) {
	user, known := b.signedIn(ctx, req)
	if !known {
		return "", false
	}
	who, err := b.Svc.Resolve(ctx, user)
	if err != nil {
		return "", false
	}
	class, ok, err = b.Svc.DefaultClass(ctx, who, "")
	if err != nil {
		if qm.ErrorCode(err) == qm.EINTERNAL && ctx.Err() == nil {
			b.log().Error("the class a request form starts on could not be chosen", "user", user, "err", err)
		}
		return "", false
	}
	return class, ok
}

// refuse turns an error into one sentence and an example that works on this installation: the
// error's own example, else the command's. An internal error is logged and apologised for.
func (b *Bot) refuse(ctx context.Context, verb string, err error) bot.Reply {
	var e *qm.Error
	if !errors.As(err, &e) || e.Code == qm.EINTERNAL {
		b.log().Error("command failed", "verb", verb, "err", err)
		return bot.Reply{Error: true, Ephemeral: true, Text: qm.ErrorMessage(err)}
	}
	ex := e.Example
	if ex == "" && e.Code != qm.EUNAVAILABLE {
		if s, ok := Lookup(verb); ok && len(s.Examples) > 0 {
			ex = s.Examples[0]
		}
	}
	text := e.Message
	typed, near := b.dataClassTypo(ctx)
	if near != "" {
		text += " " + dataTypoText(typed, near)
	}
	if ex != "" {
		ex = b.expandFor(ctx, b.typedExample(ctx, ex))
		if near != "" {
			ex = withDataClass(ex, typed, near)
		}
		ex = b.askersTeamsOnly(ctx, ex)
		text += " Example: " + ex
	}
	return bot.Reply{Error: true, Ephemeral: true, Text: text}
}

// askersTeamsOnly is ex, a refusal's example, without the team it names (team T in a request or a
// quota request, team=T in a job, by the team's name or its channel) where the asker is known and
// not in that team: the command would be refused, as only a team's members charge it. A command
// naming none is charged to the asker's first team, as the sentences that leave a team out say.
func (b *Bot) askersTeamsOnly(ctx context.Context, ex string) string {
	c, ok := ctx.Value(typedKey{}).(Command)
	if !ok || c.Who == nil || len(c.Who.Teams) == 0 || b.pol() == nil {
		return ex
	}
	if !strings.HasPrefix(ex, "/gpu request ") && !strings.HasPrefix(ex, "/gpu quota request ") && !strings.HasPrefix(ex, "/gpu submit ") {
		return ex
	}
	channels := teamChannels(b.pol())
	notTheirs := func(w string) bool {
		t := policy.NameKey(unquoted(w))
		if channelWord(unquoted(w)) {
			t = policy.ChannelKey(unquoted(w))
			if t = channels[t]; t == "" {
				return false
			}
		}
		if _, ok := b.pol().Team(t); !ok {
			return false
		}
		return !slices.ContainsFunc(c.Who.Teams, func(m string) bool { return policy.SameName(m, t) })
	}
	ws := words(ex)
	out := make([]string, 0, len(ws))
	submit := strings.HasPrefix(ex, "/gpu submit ")
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if k, v, kv := strings.Cut(w, "="); submit && kv && strings.EqualFold(k, "team") && notTheirs(v) {
			continue
		}
		if !submit && strings.EqualFold(w, "team") && i+1 < len(ws) && notTheirs(ws[i+1]) {
			i++
			continue
		}
		out = append(out, w)
	}
	if len(out) == len(ws) {
		return ex
	}
	return typedWords(out)
}

// fail is refuse for a command's own failure.
func (b *Bot) fail(ctx context.Context, verb string, err error) bot.Reply {
	return b.refuse(ctx, verb, err)
}

func (b *Bot) extend(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	out, err := b.Svc.Extend(ctx, req.User, c.Lease, c.Duration)
	if err != nil {
		return []bot.Reply{b.fail(ctx, c.Verb, b.endedAskAgain(ctx, req.User, c.Lease, err))}
	}
	l := out.Lease
	if out.Duplicate && req.Click && l.Kind != qm.KindExtension && l.State.Ended() {
		// Pressed again after the lease ended: it runs no more, and typing the extension would
		// be refused; say so, as a first press now would.
		ended := qm.Errorf(qm.ECONFLICT, "%s is %s and cannot be extended; ask for a new lease instead.", l.ID, l.State).WithExample("/gpu list")
		return []bot.Reply{b.fail(ctx, c.Verb, b.endedAskAgain(ctx, req.User, l.ID, ended))}
	}
	if out.Duplicate && req.Click {
		return []bot.Reply{b.extendedAgain(l, c.Duration, out.Approvers)}
	}
	if l.Kind == qm.KindExtension && out.Duplicate {
		return []bot.Reply{{Text: fmt.Sprintf("(already done) Extending %s by %s waits for approval as %s; %s will decide.",
			l.Parent, policy.FormatDuration(l.Duration), l.ID, b.whoDecides(out.Approvers, l.User)),
			Actions: []bot.Action{cancelAction(l.ID.String())}}}
	}
	if l.Kind == qm.KindExtension {
		return []bot.Reply{{Text: fmt.Sprintf("Extending %s by %s waits for approval as %s: %s, so %s will decide.%s",
			l.Parent, policy.FormatDuration(l.Duration), l.ID, matchesText(out.Matches), b.whoDecides(out.Approvers, l.User), b.extensionQuotaText(ctx, l, out)),
			Actions: b.leaseActions(ctx, l)}}
	}
	return []bot.Reply{{Text: b.newLength(l) + " " + b.extensionCost(l, c.Duration), Sections: []bot.Section{b.card(ctx, l)}}}
}

// endedAskAgain is err, the refusal to extend lease id of user, with the request that asks for
// the lease again as it was asked (askAgain: its length before any extension, template and
// parameters, team, data class and whole nodes), where the lease has ended and was refused for that; for no longer than its class
// grants at once, so that typed it starts.
func (b *Bot) endedAskAgain(ctx context.Context, user string, id qm.LeaseID, err error) error {
	var qe *qm.Error
	if !errors.As(err, &qe) || qe.Code != qm.ECONFLICT || qe.Example == "" {
		return err
	}
	l, gerr := b.Svc.Get(ctx, id)
	if gerr != nil || !l.State.Ended() || !qm.SameUser(l.User, user) {
		return err
	}
	again := *l
	again.Duration, again.Extended = l.AskedDuration(), 0 // as asked, not as its extensions made it
	if c, ok := b.pol().Class(l.Class); ok && c.MaxDuration.Duration > 0 && again.Duration > c.MaxDuration.Duration {
		again.Duration = c.MaxDuration.Duration
	}
	if cmd, ok := b.askAgain(ctx, &again); ok {
		return qe.WithExample(cmd)
	}
	return err
}

// extensionCost says what extending l by d costs, as a request's reply says what it costs: l's
// GPUs for d at the price l was granted at (a later change of the catalog's price re-prices no
// lease), in the currency's decimals.
func (b *Bot) extensionCost(l *qm.Lease, d time.Duration) string {
	if l.CPUOnly() {
		return noGPUBilled
	}
	base := heldToEnd(l, l.Duration-d) // l is extended already: its time to its old end
	return fmt.Sprintf("Estimated cost of the %s added: %s (%s per GPU-hour).",
		policy.FormatDuration(d), b.money(qm.BillBetween(b.pol(), l, base, base+d)), b.price(qm.PricePerGPUHour(b.pol(), l)))
}

// heldToEnd is how long l will have held its GPUs at the end of a lease of length (its own
// Duration: at its end), as a cost estimate counts it: its time back in the scheduler's queue (or
// suspended, its GPUs given back) so far is not, nor, for a pause that lasts, the rest of it. A
// lease not started yet holds its GPUs for all of length.
func heldToEnd(l *qm.Lease, length time.Duration) time.Duration {
	if l.StartedAt.IsZero() || l.ExpiresAt.IsZero() {
		return length
	}
	return max(0, length-qm.UnbilledFor(l, l.StartedAt, l.ExpiresAt.Add(length-l.Duration)))
}

// extendedAgain answers an Extend button pressed again: it extends once (a double click, or a
// press a minute later on the same message), and says how to extend again; an extension it sent
// to the budget owners is named with what became of it (waiting, approved, denied, withdrawn).
func (b *Bot) extendedAgain(l *qm.Lease, by time.Duration, approvers []string) bot.Reply {
	if l.Kind == qm.KindExtension {
		asked := fmt.Sprintf("This button already asked to extend %s by %s, as %s", l.Parent, policy.FormatDuration(l.Duration), l.ID)
		switch {
		case l.State == qm.PendingApproval:
			return bot.Reply{Text: fmt.Sprintf("%s; %s will decide. /gpu status %s shows it.", asked, b.whoDecides(approvers, l.User), l.ID)}
		case l.DecidedBy != "" && l.State.Live():
			// Decided since the first press: say what became of it, not who will decide.
			return bot.Reply{Text: fmt.Sprintf("%s, which %s approved, so it was not asked again. /gpu status %s shows it.", asked, l.DecidedBy, l.ID)}
		case l.DecidedBy != "" && l.State == qm.Denied:
			return bot.Reply{Text: fmt.Sprintf("%s, which %s denied, so it was not asked again. /gpu status %s shows it.", asked, l.DecidedBy, l.ID)}
		default:
			return bot.Reply{Text: fmt.Sprintf("%s, which is %s now, so it was not asked again. /gpu status %s shows it.", asked, l.State, l.ID)}
		}
	}
	return bot.Reply{Text: fmt.Sprintf("%s was already extended from this button, so it was not extended again. %s To extend it once more, type /gpu extend %s %s or use the Extend button of /gpu status %s.",
		l.ID, b.newLength(l), l.ID, policy.FormatDuration(by), l.ID)}
}

// whoDecides names the approvers of a request of requester, joined by "or", as qm.WhoDecides does.
func (b *Bot) whoDecides(approvers []string, requester string) string {
	return b.Svc.WhoDecides(approvers, requester)
}

// requestedAgain answers a button that requests a lease pressed again: the lease its first press
// made, and nothing new.
func requestedAgain(l *qm.Lease) bot.Reply {
	return bot.Reply{Text: fmt.Sprintf("%s was already requested from this button; /gpu status %s", l.ID, l.ID)}
}

// newLength says how long an extended lease runs now: until when, or, while it waits to start,
// for how long once it does.
func (b *Bot) newLength(l *qm.Lease) string {
	if l.ExpiresAt.IsZero() {
		return fmt.Sprintf("%s now lasts %s in all, from when it starts.", l.ID, policy.FormatDuration(l.Duration))
	}
	if qm.Halted(l) {
		// Its job does not run now (back in the queue, suspended): its end moved, nothing runs.
		return fmt.Sprintf("%s now ends %s, %s in all; it does not run until its job runs again.", l.ID, b.when(l.ExpiresAt), policy.FormatDuration(l.Duration))
	}
	return fmt.Sprintf("%s now runs until %s, %s in all.", l.ID, b.when(l.ExpiresAt), policy.FormatDuration(l.Duration))
}

func (b *Bot) keep(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	l, err := b.Svc.Keep(ctx, req.User, c.Lease)
	if err == nil && req.Key != "" && (l.State == qm.IdleWarned || !l.State.Running()) {
		// The answer of an earlier press of this button (or delivery of this command): the
		// lease has been warned again since, or has ended, so that press does not answer now.
		// Keep it now, once for this warning, or say why it cannot be kept.
		again := fmt.Sprintf("%s|keep|%s|%d", req.Key, l.State, l.WarnedAt.UnixNano())
		l, err = b.Svc.Keep(qm.WithDeliveryKey(ctx, again), req.User, c.Lease)
	}
	if err != nil {
		return []bot.Reply{b.fail(ctx, c.Verb, err)}
	}
	if ws, answered := b.idleWarnings(ctx, l); answered {
		// It answered the lease's latest idle warning: that one says so (not an earlier one,
		// which says what became of it, nor any where no warning was open).
		b.warningsAnswered(ctx, []bot.Reply{warningOver(l, idleRef(l.ID, len(ws)), fmt.Sprintf("%s was kept at %s after this idle warning: it stays for another idle period.", l.ID, b.when(l.KeptAt)))})
	}
	return []bot.Reply{{Text: fmt.Sprintf("Kept: %s stays for another idle period; it still ends %s.", l.ID, b.when(l.ExpiresAt))}}
}

// warningsAnswered edits, through Edits, the warnings a command answered (edits, of the owner's
// copies). The edits go on their own: the command's answer is due at once (Discord wants an
// answer to a click within 3 seconds), and an edit waits its turn behind the owner's messages.
func (b *Bot) warningsAnswered(ctx context.Context, edits []bot.Reply) {
	if b.Edits == nil || len(edits) == 0 {
		return
	}
	go func() {
		for _, e := range edits {
			b.edit(context.WithoutCancel(ctx), e)
		}
	}()
}

func (b *Bot) release(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	l, err := b.Svc.Release(ctx, req.User, c.Lease)
	if err != nil {
		return []bot.Reply{b.fail(ctx, c.Verb, err)}
	}
	b.warningsAnswered(ctx, b.endedWarnings(ctx, l))
	return []bot.Reply{{Text: fmt.Sprintf("%s is %s. %s", l.ID, l.State, b.releasedLine(ctx, l)) + b.stopDeferredLine(l)}}
}

// stopDeferredLine says, after a release or a cancel whose job the scheduler could not be told
// to stop (qm.Lease.StopDeferred), that the lease and its bill ended all the same, why the job may
// still run, and when it is stopped; "" when it was stopped.
func (b *Bot) stopDeferredLine(l *qm.Lease) string {
	if !l.StopDeferred {
		return ""
	}
	what := "workspace"
	if b.batch(l) {
		what = "job"
	}
	_, watched := qm.BackendAs[qm.Watcher](b.Svc.Backend)
	switch {
	case l.StopDeferredWhy != "" && watched:
		return fmt.Sprintf(" Its %s could not be stopped now, so it may still run: %s. It is stopped as soon as the scheduler accepts the service's credentials again, and nothing more is billed.",
			what, strings.TrimSuffix(l.StopDeferredWhy, "."))
	case l.StopDeferredWhy != "":
		return fmt.Sprintf(" Its %s could not be stopped, so it may still run: %s. Nothing more is billed.", what, strings.TrimSuffix(l.StopDeferredWhy, "."))
	case watched:
		return fmt.Sprintf(" The scheduler could not be reached to stop it, so its %s may still run: it is cancelled as soon as the scheduler answers, and nothing more is billed.", what)
	}
	return fmt.Sprintf(" The scheduler could not be told to stop its %s, which may still run; nothing more is billed.", what)
}

// cancel is /gpu cancel, what a Cancel button runs: it withdraws what still waits and leaves a
// lease that started since alone (Service.Cancel).
func (b *Bot) cancel(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	l, err := b.Svc.Cancel(ctx, req.User, c.Lease)
	if err != nil {
		return []bot.Reply{b.fail(ctx, c.Verb, err)}
	}
	return []bot.Reply{{Text: fmt.Sprintf("%s is %s. %s", l.ID, l.State, b.releasedLine(ctx, l)) + b.stopDeferredLine(l)}}
}

// releasedLine says what releasing (or cancelling) l changed: a workspace's GPU-hours and cost, a
// quota increase's quota, an extension's lease.
func (b *Bot) releasedLine(ctx context.Context, l *qm.Lease) string {
	switch l.Kind {
	case qm.KindQuota:
		now := b.Svc.QuotaFor(ctx, l.Team).GPUs[l.Class]
		if l.State == qm.Cancelled {
			return fmt.Sprintf("The %s quota of team %s stays at %s.", l.Class, l.Team, qm.GPUCount(now, ""))
		}
		return fmt.Sprintf("The %s, and its quota is back to %s.", extraGone(l), qm.GPUCount(now, l.Class))
	case qm.KindExtension:
		if p, err := b.Svc.Get(ctx, l.Parent); err == nil && p.State.Running() && !p.ExpiresAt.IsZero() {
			return fmt.Sprintf("%s still ends at %s.", p.ID, b.when(p.ExpiresAt))
		}
		return fmt.Sprintf("%s is not extended.", l.Parent)
	}
	return b.costLine(l)
}

func (b *Bot) decide(ctx context.Context, req bot.Request, c Command, approve bool) []bot.Reply {
	out, err := b.Svc.Decide(ctx, req.User, c.Lease, approve, c.Reason)
	if err != nil {
		if e := b.formerApprover(ctx, req.User, c.Lease, err); e != nil && req.Click {
			b.edit(ctx, *e)
		}
		return []bot.Reply{b.fail(ctx, c.Verb, err)}
	}
	l := out.Lease
	verb := "Approved"
	if l.State == qm.Denied {
		verb = "Denied"
	}
	now := "it is now " + string(l.State)
	if l.State == qm.Provisioning {
		now = "it is being started" // as its requester is told
	}
	text := fmt.Sprintf("%s %s (%s %s); %s.", verb, l.ID, l.User, b.askText(l), now)
	if ext := b.extendedText(ctx, l); ext != "" {
		text = fmt.Sprintf("%s %s (%s %s): %s", verb, l.ID, l.User, b.askText(l), ext)
	}
	if out.Duplicate && !l.DecidedAt.IsZero() {
		// The same press or command again (a double click, a press after the lease ended): it
		// decided nothing now; say when it did, and how the lease stands since.
		text = fmt.Sprintf("You %s %s (%s %s) at %s; %s.", strings.ToLower(verb), l.ID, l.User, b.askText(l), l.DecidedAt.In(b.pol().Location).Format("Mon 2 Jan 15:04 MST"), now)
	}
	for _, m := range out.Matches {
		text += " " + m.Why
	}
	return []bot.Reply{{Text: text}}
}

// formerApprover is the edit of user's copy of the approval message of id, whose button they
// pressed and were refused (err) because they no longer decide its team's requests (the policy
// or their groups changed since it was sent): noLongerDeciding. Nil when that is not why, or
// without Edits.
func (b *Bot) formerApprover(ctx context.Context, user string, id qm.LeaseID, err error) *bot.Reply {
	if b.Edits == nil || qm.ErrorCode(err) != qm.EFORBIDDEN {
		return nil
	}
	return b.noLongerDeciding(ctx, user, id)
}

// noLongerDeciding is the edit of user's copy of the approval message of id when they may no
// longer decide it (the policy or their groups changed since it was sent): it says so and who
// decides now, and has no buttons. Only copies posted to user are edited, and nothing is posted
// where there are none (the button was on a channel's copy, or they never were sent one). Nil
// when id no longer waits, user asked for it, or they still approve its team's requests.
func (b *Bot) noLongerDeciding(ctx context.Context, user string, id qm.LeaseID) *bot.Reply {
	l, gerr := b.Svc.Get(ctx, id)
	if gerr != nil || l.State != qm.PendingApproval || qm.SameUser(l.User, user) || b.Svc.MayApprove(ctx, user, l.Team) {
		return nil
	}
	who := b.Svc.Deciders(l.Team, l.User)
	if len(who) == 0 {
		return nil
	}
	named := policy.JoinList(who, "or")
	if !b.Svc.DecidersReach(l.Team, l.User) {
		// Nobody of theirs can be told (a group none of whose members is signed in): the
		// fallback approvers are sent it (HandOverUnreached), and named after them.
		named = b.Svc.WhoDecides(who, l.User)
	}
	sec := b.card(ctx, l)
	sec.Text = fmt.Sprintf("%s (team %s) asked %s.", l.User, l.Team, b.askText(l))
	return &bot.Reply{To: user, Ref: "approval:" + id.String(), Update: true, EditOnly: true, Sections: []bot.Section{sec},
		Text: fmt.Sprintf("%s is no longer yours to decide: you are no longer an approver of team %s; %s decides.", id, l.Team, named)}
}

// formerApprovers are the edits of the copies of approval messages of requests still waiting
// that are held by people who may no longer decide them (noLongerDeciding), so that nobody
// keeps Approve and Deny buttons they may not use. With only set, just that person's copies
// (their groups changed): an edit of a copy they do not hold posts nothing. Otherwise whoever
// Copies says holds a copy; none without Copies.
func (b *Bot) formerApprovers(ctx context.Context, only string) []bot.Reply {
	var out []bot.Reply
	for _, e := range b.formerApproverEdits(ctx, only) {
		out = append(out, e.reply)
	}
	return out
}

// formerEdit is the edit of a former approver's copies, with the names Copies gave them by.
type formerEdit struct {
	reply bot.Reply
	named []string
}

func (b *Bot) formerApproverEdits(ctx context.Context, only string) []formerEdit {
	out, _ := b.waitingCopies(ctx, only)
	return out
}

// heldCopies is a request that waits for approval, with who holds a copy of its approval message.
type heldCopies struct {
	lease   *qm.Lease
	holders []string // canonical
}

// waitingCopies is formerApproverEdits, with each request that waits and who holds its copies
// as Copies read them (none with only set), read once for both.
func (b *Bot) waitingCopies(ctx context.Context, only string) ([]formerEdit, []heldCopies) {
	if only == "" && b.Copies == nil {
		return nil, nil
	}
	pending, err := b.Svc.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, States: []qm.State{qm.PendingApproval}})
	if err != nil {
		b.log().Error("list the requests that wait, for their former approvers' copies", "err", err)
		return nil, nil
	}
	var out []formerEdit
	var held []heldCopies
	for _, l := range pending {
		holders := []string{only}
		if only == "" {
			if holders, err = b.Copies(ctx, "approval:"+l.ID.String()); err != nil {
				b.log().Error("read who holds copies of an approval message", "lease", l.ID, "err", err)
				continue
			}
			hc := heldCopies{lease: l}
			for _, h := range holders {
				hc.holders = append(hc.holders, qm.CanonicalUser(h))
			}
			held = append(held, hc)
		}
		// The names each person's copies were saved by (one person may be written in two cases).
		named := map[string][]string{}
		var order []string
		for _, h := range holders {
			c := qm.CanonicalUser(h)
			if !strings.Contains(c, "@") {
				continue // a channel's copy stays for whoever decides there
			}
			if _, ok := named[c]; !ok {
				order = append(order, c)
			}
			named[c] = append(named[c], h)
		}
		for _, h := range order {
			if err := b.Svc.CheckDecide(ctx, h, l.ID, false); err == nil || qm.ErrorCode(err) == qm.EINTERNAL || qm.ErrorCode(err) == qm.EUNAVAILABLE {
				continue // they may decide it, or that is not known now
			}
			if e := b.noLongerDeciding(ctx, h, l.ID); e != nil {
				out = append(out, formerEdit{reply: *e, named: named[h]})
			}
		}
	}
	return out, held
}

// RetireFormerApprovers edits, through Edits, the copies of approval messages held by people who
// may no longer decide them (formerApprovers), as the policy or the directory now has it (at
// start: the policy may have changed since they were sent). Each copy is edited once: one
// edited, Retired remembers, and Copies no longer names it at the next start. It says how many
// it edited. A request none of whose approvers now reaches anyone is sent to the fallback
// approvers, once (qm.HandOverChangedApprovers). Every request that waits is sent to each
// person who decides it now and holds no copy, once (qm.SendToNewApproversOf): a policy that
// adds a budget owner, or a start that ended after retiring a copy and before sending the new.
func (b *Bot) RetireFormerApprovers(ctx context.Context) int {
	if b.Edits == nil {
		return 0
	}
	n := 0
	edits, held := b.waitingCopies(ctx, "")
	for _, e := range edits {
		if err := b.edit(ctx, e.reply); err != nil {
			continue // tried again at the next start
		}
		n++
		if b.Retired == nil {
			continue
		}
		for _, name := range e.named {
			if err := b.Retired(ctx, e.reply.Ref, name); err != nil {
				b.log().Error("remember an edited copy of an approval message", "ref", e.reply.Ref, "to", name, "err", err)
			}
		}
	}
	// A request whose approvers the policy changed, none of whom reaches anyone now (a group
	// nobody signed in is in, or that nobody is in any more), goes to the fallback approvers,
	// once, as when the last budget owner signed in signs out; its retired copies name them.
	handed := map[string]bool{}
	for _, e := range edits {
		if handed[e.reply.Ref] {
			continue
		}
		handed[e.reply.Ref] = true
		if id, err := qm.ParseLeaseID(strings.TrimPrefix(e.reply.Ref, "approval:")); err == nil {
			b.handOverAs(ctx, id, true)
		}
	}
	for _, h := range held {
		b.sendToNewApprovers(ctx, h.lease, h.holders)
	}
	return n
}

// edit sends an edit of a posted message through Edits, within editTimeout.
func (b *Bot) edit(ctx context.Context, r bot.Reply) error {
	ctx, cancel := context.WithTimeout(ctx, editTimeout)
	defer cancel()
	err := b.Edits.Send(ctx, r)
	if err != nil {
		b.log().Error("edit a posted message", "ref", r.Ref, "to", r.To, "err", err)
	}
	return err
}

// editTimeout bounds an edit of a posted message, which waits behind the recipient's others.
const editTimeout = time.Minute

// extendedText says what an approved extension did to its lease and what it costs: "L-1 now runs
// until Mon 30 Nov 19:00 CST (in 10h), 10h in all. Estimated cost of the 8h added: $7.20 ($0.90
// per GPU-hour)."; empty for anything else.
func (b *Bot) extendedText(ctx context.Context, l *qm.Lease) string {
	if l.Kind != qm.KindExtension || l.State == qm.Denied || l.State == qm.Cancelled || l.State == qm.PendingApproval {
		return ""
	}
	p, err := b.Svc.Get(ctx, l.Parent)
	if err != nil {
		return ""
	}
	return b.newLength(p) + " " + b.extensionCost(p, l.Duration)
}

func (b *Bot) quotaRequest(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	if b.unknownClass(c) {
		return []bot.Reply{b.refuse(ctx, c.Verb, b.noClass(ctx, c))}
	}
	out, err := b.Svc.QuotaIncrease(ctx, req.User, c.Team, c.Class, c.GPUs, c.Duration, c.Reason)
	if err != nil {
		return []bot.Reply{b.fail(ctx, c.Verb, err)}
	}
	l := out.Lease
	if out.AskedBefore {
		return []bot.Reply{b.askedBefore(ctx, out)}
	}
	prefix := ""
	if out.Duplicate {
		prefix = "(already done) "
	}
	return []bot.Reply{{Text: fmt.Sprintf(prefix+"%s asks for +%s for team %s for %s; %s will decide. You will hear back here.",
		l.ID, qm.GPUCount(l.GPUs, l.Class), l.Team, policy.FormatDuration(l.Duration), b.whoDecides(out.Approvers, l.User)),
		Actions: b.leaseActions(ctx, l)}}
}

func (b *Bot) money(v float64) string { return policy.Money(b.pol().Currency, v) }

// price writes a price per GPU-hour, with every decimal it has.
func (b *Bot) price(v float64) string { return policy.Price(b.pol().Currency, v) }

// when writes an instant in the policy's time zone, with how far away it is.
func (b *Bot) when(t time.Time) string {
	if t.IsZero() {
		return "when it starts"
	}
	now := b.Svc.Clock.Now()
	s := t.In(b.pol().Location).Format("Mon 2 Jan 15:04 MST")
	if d := t.Sub(now); d > 0 {
		return s + " (in " + policy.FormatDuration(d) + ")"
	}
	return s
}

// noNodesText says why a class has no GPU at all now, as the catalog and the waits say it.
const noNodesText = "no node of this class takes jobs now (the scheduler reports them drained, down or reserved)"

// freeText says a class's free GPUs now. While the scheduler does not answer they are what it
// said when it last answered, and the text says so and how long ago, not shown as if current.
func (b *Bot) freeText(s qm.ClassStatus) string {
	if s.SchedulerAway {
		if s.AsOf.IsZero() {
			return "unknown: the scheduler has not answered since the service started"
		}
		figures := fmt.Sprintf("%d of %d", s.Free, s.Capacity)
		switch {
		case s.NoNodes:
			figures = "none (no node of this class took jobs)"
		case s.Capacity == 0:
			figures = "the scheduler's to say (it places leases itself)"
		}
		ago := "less than a minute ago"
		if d := b.Svc.Clock.Now().Sub(s.AsOf); d >= time.Minute {
			ago = policy.FormatDuration(d) + " ago"
		}
		return fmt.Sprintf("%s as of %s, when the scheduler last answered; it does not answer now", figures, ago)
	}
	if s.NoNodes {
		return "none: " + noNodesText
	}
	if s.Capacity == 0 {
		return "the scheduler's to say (it places leases itself)"
	}
	if s.FreeUpTo > s.Free {
		return fmt.Sprintf("%d of %d (up to %d: leases of a class that takes GPUs of any type run on these nodes, counted as holding this class's, and the scheduler picks which they get)", s.Free, s.Capacity, s.FreeUpTo)
	}
	if s.CapText != "" {
		// Fewer than the class has idle: the capacity share holds the rest back.
		return fmt.Sprintf("%d of %d: %s", s.Free, s.Capacity, s.CapText)
	}
	return fmt.Sprintf("%d of %d", s.Free, s.Capacity)
}

func waitText(w qm.WaitEstimate) string {
	if w.SchedulerAway {
		return "unknown while the scheduler does not answer; nothing is handed to it until it does"
	}
	if w.NoNodes {
		return "no estimate: " + noNodesText + "; a request starts when one is back"
	}
	if w.Unknown {
		return "no estimate; the scheduler decides when it starts"
	}
	if w.MayNotStart {
		return fmt.Sprintf("%s, but similar requests often never started: it may not start within %s", medianText(w.Median), policy.FormatDuration(w.Horizon))
	}
	if w.Median == 0 && w.P90 == 0 {
		return "none, GPUs are free now"
	}
	if w.Median < time.Minute && w.P90 <= time.Minute {
		return "none expected (90%: within a minute)"
	}
	return fmt.Sprintf("%s (90%%: under %s)", medianText(w.Median), policy.FormatDuration(w.P90))
}

// medianText says a predicted median wait: "about 2h", or for less than a minute "probably none".
func medianText(d time.Duration) string {
	if d < time.Minute {
		return "probably none"
	}
	return "about " + policy.FormatDuration(d)
}

func (b *Bot) catalog(ctx context.Context, req bot.Request) []bot.Reply {
	st, err := b.Svc.Catalog(ctx, req.User)
	if err != nil {
		return []bot.Reply{b.fail(ctx, "catalog", err)}
	}
	r := bot.Reply{Text: fmt.Sprintf("%s GPU catalog (%s):", b.pol().Organization, policy.Count(len(st), "class", "classes"))}
	team, who := b.askerTeam(ctx, req.User), b.askerOf(ctx, req.User)
	for _, s := range st {
		c := s.Class
		title := c.Name
		if c.Description != "" {
			title += " — " + c.Description
		}
		r.Sections = append(r.Sections, bot.Section{
			Title: title,
			Fields: []bot.Field{
				{Label: "GPU", Value: gpuText(c)},
				{Label: "Price", Value: b.price(c.PricePerGPUHour) + " per GPU-hour"},
				{Label: "Without approval", Value: b.withoutApprovalText(c, team, who, false)},
				{Label: "Free now", Value: b.freeText(s)},
				{Label: "Predicted wait", Value: waitText(s.Wait)},
			},
		})
	}
	r.Actions = []bot.Action{{Label: b.expandFor(ctx, "Request 1 {class}"), Command: b.expandFor(ctx, "/gpu request 1 {class} for {short}"), Style: "primary"}}
	return []bot.Reply{r}
}

func (b *Bot) request(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	if c.Template != "" && b.Templates != nil {
		tp, err := b.Templates.Catalog.Get(c.templateAsTyped())
		if err != nil {
			ctx, err := b.Templates.requestMeant(ctx, c, err)
			return []bot.Reply{b.refuse(ctx, c.Verb, err)}
		}
		return b.Templates.launch(ctx, req, c, tp)
	}
	if r := b.templateAsClass(c); r != nil {
		return []bot.Reply{*r}
	}
	if b.unknownClass(c) {
		return []bot.Reply{b.refuse(ctx, c.Verb, b.noClass(ctx, c))}
	}
	out, err := b.Svc.Request(ctx, qm.LeaseRequest{User: req.User, Who: c.Who, GPUs: c.GPUs, Class: c.Class, Duration: c.Duration,
		Template: c.Template, Team: c.Team, DataClass: c.DataClass, Exclusive: c.Exclusive, RequestKey: req.Key})
	if err != nil && out == nil {
		return []bot.Reply{b.fail(ctx, "request", err)}
	}
	if out.Duplicate && req.Click {
		return []bot.Reply{requestedAgain(out.Lease)}
	}
	return []bot.Reply{b.outcome(ctx, out, err)}
}

// templateAsClass refuses a request whose class is no class of the policy but a template's name
// (request 1 JupyterLab for 2h): it says so, quoting the word as typed and naming the template as
// the catalog writes it, with the request put right as the example (the class the template would
// run on, then template NAME); nil when the class is not such a name.
func (b *Bot) templateAsClass(c Command) *bot.Reply {
	if c.Template != "" || c.Class == "" || b.Templates == nil {
		return nil
	}
	if _, ok := b.pol().Class(c.Class); ok {
		return nil
	}
	tp, err := b.Templates.Catalog.Get(c.Class)
	if err != nil {
		return nil
	}
	typed := c.Class
	if c.classTyped != "" {
		typed = c.classTyped
	}
	class := ""
	if cs := b.Templates.candidates(tp, nil, c.GPUs); len(cs) > 0 {
		class = cs[0].Class
	} else if names := b.pol().ClassNames(); len(names) > 0 {
		class = names[0]
	}
	ex := fmt.Sprintf("/gpu request %d %s", max(c.GPUs, 1), class)
	if c.Duration > 0 {
		ex += " for " + policy.FormatDuration(c.Duration)
	}
	ex += " template " + tp.Name
	if c.Team != "" {
		ex += " team " + c.Team
	}
	if c.DataClass != "" {
		ex += " data " + c.DataClass
	}
	return &bot.Reply{Error: true, Ephemeral: true, Text: fmt.Sprintf("%s is a template, not a class; a request names a class, then template %s. Example: %s", policy.Quoted(typed, 40), tp.Name, ex)}
}

// outcome describes what became of a request.
func (b *Bot) outcome(ctx context.Context, out *qm.Outcome, err error) bot.Reply {
	l := out.Lease
	if err == nil && out.AskedBefore {
		return b.askedBefore(ctx, out)
	}
	cost := "Estimated cost " + b.money(qm.Bill(b.pol(), l, l.Duration)) + "."
	if r := b.roundedText(l); r != "" {
		// What it is billed for, as /gpu estimate says it: more GPUs than were asked.
		cost = fmt.Sprintf("Estimated cost %s: %s for %s %s.", b.money(qm.Bill(b.pol(), l, l.Duration)), b.gpusExclusive(l), policy.FormatDuration(l.Duration), r)
	}
	if l.CPUOnly() {
		cost = noGPUBilled
	}
	r := b.outcomeReply(ctx, out, err, cost)
	if !r.Error {
		r.Text += b.dataTypoOutcome(ctx, l)
	}
	return r
}

func (b *Bot) outcomeReply(ctx context.Context, out *qm.Outcome, err error, cost string) bot.Reply {
	l := out.Lease
	prefix := ""
	if out.Duplicate {
		prefix = "(already done) " // a delivery again of one request: what its first one did
	}
	switch {
	case err != nil:
		return b.fail(ctx, "request", err)
	case l.State == qm.PendingApproval:
		return bot.Reply{Text: fmt.Sprintf(prefix+"%s waits for approval: %s, so %s will decide.%s %s You will hear back here.",
			l.ID, matchesText(out.Matches), b.whoDecides(out.Approvers, l.User), b.quotaHeldText(l, out), cost),
			Sections: []bot.Section{b.card(ctx, l)}, Actions: b.leaseActions(ctx, l)}
	case l.State == qm.Queued:
		return bot.Reply{Text: fmt.Sprintf(prefix+"%s is queued: %s.%s Predicted wait: %s. %s You will get a message when it starts.",
			l.ID, l.Reason, b.queuePlaceSentence(ctx, l), waitText(out.Wait), cost), Sections: []bot.Section{b.card(ctx, l)},
			Actions: b.leaseActions(ctx, l)}
	default:
		return b.grantedReply(ctx, l, prefix)
	}
}

// askedBefore answers a request asked again, the same, while the first still waits for a
// decision (out.AskedBefore): that one, who decides it and since when, with its Cancel button.
// Nothing new was asked, and nobody was sent anything.
func (b *Bot) askedBefore(ctx context.Context, out *qm.Outcome) bot.Reply {
	l := out.Lease
	id := l.ID.String()
	since := l.CreatedAt.In(b.pol().Location).Format("Mon 2 Jan 15:04 MST")
	return bot.Reply{Text: fmt.Sprintf("You already asked for this: %s is waiting for %s since %s, so it was not asked again; /gpu cancel %s withdraws it.",
		id, b.whoDecides(out.Approvers, l.User), since, id),
		Sections: []bot.Section{b.card(ctx, l)}, Actions: b.leaseActions(ctx, l)}
}

// quotaHeldText says, for a request that waits because it would take its team past its quota of
// the class or its weekly GPU-hours, what the team holds now and by which leases, or what it has
// used of the week, and what would do without a decision: the request that fits (fewer GPUs,
// or a shorter time), or the quota request that would let this one fit. Empty otherwise.
func (b *Bot) quotaHeldText(l *qm.Lease, out *qm.Outcome) string {
	q, s, team := heldLead(out)
	if q == nil {
		return ""
	}
	asked := l.GPUs
	if l.AskedGPUs > 0 {
		asked = l.AskedGPUs // as it was asked: the whole nodes it takes are counted as the quota counts them
	}
	if gpus, d, ok := b.Svc.WithinQuota(q, q.Class, asked, l.Duration, l.Exclusive, nil); ok && (!l.Exclusive || q.WeekOnly) && len(out.Matches) == 1 {
		// Only the quota stopped it: what fits in the quota needs no decision.
		ex := fmt.Sprintf("/gpu request %d %s for %s", gpus, q.Class, policy.FormatDuration(d))
		if l.Exclusive {
			ex += " exclusive"
		}
		if team != "" {
			ex += " team " + team
		}
		return s + " A request within the quota needs no decision: " + ex + "."
	}
	return s + b.quotaAskText(q, out.Matches, team)
}

// heldLead is what a request's quota note starts with: the quota that held it (nil: none), what
// that quota says of the team (" " first), and the team to name in an example ("" where the
// asker's own team is meant).
func heldLead(out *qm.Outcome) (q *qm.QuotaHeld, s, team string) {
	q = out.Quota
	if q == nil {
		return nil, "", ""
	}
	if q.NameTeam {
		team = q.Team
	}
	return q, " " + q.Text(), team
}

// extensionQuotaText says, for an extension l that waits and would take its team past the
// week's GPU-hours (out.Quota), what the week holds and what the extension adds, as the
// approvers' card says it, and what would do without a decision: where only the quota stopped
// it, the shorter extension that fits the week, once this one is withdrawn (one extension of a
// lease waits at a time); else the quota request that makes room. Empty otherwise.
func (b *Bot) extensionQuotaText(ctx context.Context, l *qm.Lease, out *qm.Outcome) string {
	q, s, team := heldLead(out)
	if q == nil {
		return ""
	}
	onlyQuota := true
	for _, m := range out.Matches {
		if !b.Svc.AboutQuota(m.Rule) {
			onlyQuota = false
		}
	}
	if parent, err := b.Svc.Get(ctx, l.Parent); err == nil && onlyQuota {
		if _, d, ok := q.Within(parent.GPUs, l.Duration); ok {
			return s + fmt.Sprintf(" An extension within the quota needs no decision: withdraw this one with /gpu cancel %s, then /gpu extend %s %s.",
				l.ID, l.Parent, policy.FormatDuration(d))
		}
	}
	return s + b.quotaAskText(q, out.Matches, team)
}

// quotaAskText is the quota request that makes room for a request (or an extension) past the
// quota q, said as what another rule among matches would still need, where one would.
func (b *Bot) quotaAskText(q *qm.QuotaHeld, matches []policy.Match, team string) string {
	ask := qm.QuotaRequestExample(q.Increase, q.Class, team)
	var other []string
	for _, m := range matches {
		if !b.Svc.AboutQuota(m.Rule) {
			other = append(other, m.Rule)
		}
	}
	if len(other) > 0 {
		// A larger quota makes room, but another rule would still send such a request to a
		// budget owner: no promise of room without a decision.
		rules := "rule " + other[0]
		if len(other) > 1 {
			rules = "rules " + policy.JoinList(other, "and")
		}
		return " A larger quota would make room, though the published " + rules + " would still need a decision: " + ask + "."
	}
	return " For room without a decision next time, ask for a larger quota: " + ask + "."
}

// matchesText says which published rules a request met: "the published rule big (Too many
// GPUs) applies", or "the published rules big (…) and lengthy (…) apply".
func matchesText(ms []policy.Match) string {
	var rules []string
	for _, m := range ms {
		rules = append(rules, m.Named())
	}
	switch len(rules) {
	case 0:
		return "a published rule applies"
	case 1:
		return "the published rule " + rules[0] + " applies"
	}
	return "the published rules " + policy.JoinList(rules, "and") + " apply"
}

// gpuText says what a class's GPUs are: the SKU and memory where the policy gives them, and the
// isolation.
func gpuText(c *policy.Class) string {
	var parts []string
	if c.SKU != "" {
		parts = append(parts, c.SKU)
	}
	if c.GPUMemoryGiB > 0 {
		parts = append(parts, fmt.Sprintf("%d GiB", c.GPUMemoryGiB))
	}
	return strings.Join(append(parts, c.Isolation), ", ")
}

// wholeNodes reports whether a workspace lease is larger than a node of its class, and so holds
// whole nodes (its GPUs were rounded up to them when it was asked for).
func (b *Bot) wholeNodes(l *qm.Lease) bool {
	size := b.Svc.NodeSize(l.Class)
	return l.Kind == qm.KindWorkspace && size > 0 && l.GPUs > size && b.Svc.WholeNodeGPUs(l.Class, l.GPUs) == l.GPUs
}

// roundedText says, in the words of /gpu estimate, that the GPUs asked for in l were rounded up
// to whole nodes: "takes 2 whole nodes of 4 GPUs = 8 GPUs"; "" where they were not.
func (b *Bot) roundedText(l *qm.Lease) string {
	if l.Kind != qm.KindWorkspace || l.AskedGPUs <= 0 || l.AskedGPUs >= l.GPUs {
		return ""
	}
	return "takes " + b.Svc.WholeNodesText(l.Class, l.GPUs)
}

// gpusText is a lease's GPUs: "2 × train", or where they were rounded up to whole nodes what
// was asked and what it takes, as /gpu estimate says it: "6 × train takes 2 whole nodes of 4
// GPUs = 8 GPUs".
func (b *Bot) gpusText(l *qm.Lease) string {
	if r := b.roundedText(l); r != "" {
		return fmt.Sprintf("%d × %s %s", l.AskedGPUs, l.Class, r)
	}
	return fmt.Sprintf("%d × %s", l.GPUs, l.Class)
}

func (b *Bot) grantedText(l *qm.Lease) string {
	cls, _ := b.pol().Class(l.Class)
	what, r := fmt.Sprintf("%d × %s", l.GPUs, l.Class), b.roundedText(l)
	if r != "" { // what was asked, then the whole nodes it takes
		what = fmt.Sprintf("%d × %s", l.AskedGPUs, l.Class)
	}
	if cls != nil && cls.SKU != "" {
		what += " (" + cls.SKU + ")"
	}
	switch {
	case r != "" && l.Exclusive:
		what += ", which " + r + " for this lease alone,"
	case r != "":
		what += ", which " + r + ","
	case l.Exclusive:
		what += ", whole nodes for this lease alone"
	case b.wholeNodes(l):
		what += ", whole nodes"
	}
	// What it will be billed to its end: its time back in the scheduler's queue (or suspended,
	// its GPUs given back) is not.
	cost := fmt.Sprintf("Estimated cost %s (%s per GPU-hour).", b.money(qm.Bill(b.pol(), l, heldToEnd(l, l.Duration))), b.price(qm.PricePerGPUHour(b.pol(), l)))
	if l.CPUOnly() {
		what, cost = "a CPU-only job in class "+l.Class, noGPUBilled
	}
	if !l.State.Running() || l.State == qm.Provisioning || l.ExpiresAt.IsZero() {
		// Not running yet: say so, and how the owner will hear of it; no node, end or address
		// that is not known yet.
		s := fmt.Sprintf("%s is being started: %s for %s; the scheduler is placing it, and %s. %s",
			l.ID, what, policy.FormatDuration(l.Duration), b.comingMessage(l), cost)
		if l.State == qm.Queued && l.Reason != "" {
			s = fmt.Sprintf("%s waits in the scheduler's queue (%s): %s for %s; %s. %s",
				l.ID, strings.TrimPrefix(l.Reason, "waiting in the scheduler's queue: "), what, policy.FormatDuration(l.Duration), b.comingMessage(l), cost)
		}
		return s
	}
	s := fmt.Sprintf("%s is %s: %s on %s until %s. %s", l.ID, l.State, what, b.whereText(l), b.when(l.ExpiresAt), cost)
	if l.Connect != "" && !strings.Contains(l.Connect, qm.NodePlaceholder) {
		s += " Connect: " + l.Connect
	}
	return s
}

// comingMessage says what message the owner of l, which does not run yet, will get: how to
// connect for a workspace; for a batch job, which has nothing to connect to, one when it starts
// and one when it ends, and where its output goes (its job directory in the team storage).
func (b *Bot) comingMessage(l *qm.Lease) string {
	if b.batch(l) {
		return "you will get a message when it starts and another when it ends, saying how it ended; its output goes to " + outputPlace(l)
	}
	return "you will get a message with how to connect as soon as it runs"
}

// batch reports whether l runs a batch template of the catalog: a job with nothing to connect
// to, whose output goes to its job directory in the team storage.
func (b *Bot) batch(l *qm.Lease) bool {
	if b.Templates == nil || l.Template == "" {
		return false
	}
	tp, err := b.Templates.Catalog.Get(l.Template)
	return err == nil && tp.Kind == templates.KindBatch
}

// outputPlace is where the output of batch job l goes: its job directory in its team's storage.
func outputPlace(l *qm.Lease) string {
	return fmt.Sprintf(".quartermaster/%s in the storage of team %s", l.ID, l.Team)
}

// whereText says where a lease runs: "h100-01 GPU 0,1", "all GPUs of h100-01 and h100-02". GPU
// indexes are named only where they are the devices the lease holds (not on Kubernetes, where the
// device plugin picks them): its node alone otherwise, its count being said beside.
func (b *Bot) whereText(l *qm.Lease) string {
	nodes := strings.Split(l.Node, ",")
	switch {
	case l.Node == "":
		return "the cluster"
	case len(l.GPUIndex) > 0 && len(nodes) == 1 && b.Svc.GPUIndexesKnown(l):
		return l.Node + " GPU " + qm.FormatGPUs(l.GPUIndex)
	case len(nodes) == 1 && l.Exclusive:
		return "all of " + l.Node
	case len(nodes) == 1:
		return l.Node
	default:
		return "all GPUs of " + policy.JoinList(nodes, "and")
	}
}

// leaseActions are the buttons of a lease's message: Cancel while nothing runs yet; Extend 1h
// and Release while it runs, without Extend while an extension of it waits for a budget owner
// (a click could only be refused; the message says who decides instead), and Keep first while
// an idle warning stands, as the warning itself offers. A quota increase or an extension in
// effect offers none: it is no workspace, so Extend would be refused, and Release would end no
// workspace (an extension's lease runs on, extended, with buttons of its own).
func (b *Bot) leaseActions(ctx context.Context, l *qm.Lease) []bot.Action {
	id := l.ID.String()
	if l.State == qm.Queued || l.State == qm.PendingApproval {
		// Nothing runs yet (or, for a quota increase or an extension, nothing is in effect yet):
		// cancelling is what releasing it does.
		return []bot.Action{cancelAction(id)}
	}
	if !l.State.Live() || l.Kind != qm.KindWorkspace {
		return nil
	}
	var out []bot.Action
	if l.Kind == qm.KindWorkspace && l.State == qm.IdleWarned {
		out = append(out, keepAction(id))
	}
	release := bot.Action{Label: "Release", Command: "/gpu release " + id, Style: "danger"}
	if w, _, err := b.Svc.WaitingExtension(ctx, l.ID); err != nil {
		b.log().Error("look for a waiting extension", "lease", id, "err", err)
	} else if w != nil {
		return append(out, release)
	}
	return append(out, bot.Action{Label: "Extend 1h", Command: "/gpu extend " + id + " 1h"}, release)
}

// cancelAction is the button that withdraws the lease id while it waits, on every message that
// shows it waiting: the request's reply, its notices and /gpu status.
func cancelAction(id string) bot.Action {
	return bot.Action{Label: "Cancel", Command: "/gpu cancel " + id, Style: "danger"}
}

// keepAction is the button that answers an idle warning of the lease id.
func keepAction(id string) bot.Action {
	return bot.Action{Label: "Keep", Command: "/gpu keep " + id, Style: "primary"}
}

// waitingExtensionText says that w, an extension of l, waits, and who decides it.
func (b *Bot) waitingExtensionText(l, w *qm.Lease, deciders []string) string {
	return fmt.Sprintf("%s; /gpu status %s shows it.", b.Svc.ExtensionWaitsText(l.ID, w, deciders), w.ID)
}

// card is a lease as a section: state, GPUs, node, time left, cost so far.
func (b *Bot) card(ctx context.Context, l *qm.Lease) bot.Section {
	showsLease(ctx, l)
	cls, _ := b.pol().Class(l.Class)
	now := b.Svc.Clock.Now()
	switch l.Kind {
	case qm.KindQuota:
		f := []bot.Field{{Label: "State", Value: string(l.State)}, {Label: "Quota increase", Value: fmt.Sprintf("+%s for team %s", qm.GPUCount(l.GPUs, l.Class), l.Team)},
			{Label: "For", Value: policy.FormatDuration(l.Duration)}, {Label: "Because", Value: l.Because}}
		if l.State == qm.Active {
			f = append(f, bot.Field{Label: "Until", Value: b.when(l.ExpiresAt)})
		}
		return bot.Section{Title: l.ID.String(), Fields: f}
	case qm.KindExtension:
		// What it lengthens, and while it waits what the time it adds would cost: what its
		// approvers decide on.
		ext := bot.Field{Label: "Extension", Value: fmt.Sprintf("%s by %s", l.Parent, policy.FormatDuration(l.Duration))}
		var cost []bot.Field
		if p, err := b.Svc.Get(ctx, l.Parent); err == nil && p.Kind == qm.KindWorkspace && !p.CPUOnly() {
			ext.Value = fmt.Sprintf("%s (%s) by %s", l.Parent, b.gpusText(p), policy.FormatDuration(l.Duration))
			if l.State == qm.PendingApproval {
				base := heldToEnd(p, p.Duration)
				cost = append(cost, bot.Field{Label: "Estimated cost", Value: b.money(qm.BillBetween(b.pol(), p, base, base+l.Duration))})
			}
		}
		return bot.Section{Title: l.ID.String(), Fields: append([]bot.Field{{Label: "State", Value: string(l.State)}, ext, {Label: "Team", Value: l.Team}}, cost...)}
	}
	f := []bot.Field{
		{Label: "State", Value: string(l.State)},
		{Label: "GPUs", Value: b.gpusText(l)},
		{Label: "Team", Value: l.Team},
	}
	if l.CPUOnly() {
		f[1].Value += ", CPU only"
	}
	if place, ok := b.Svc.QueuePlace(ctx, l); ok {
		// Where it stands in its class's queue now, as the service starts them.
		f = append(f, bot.Field{Label: "Queue", Value: queuePlaceText(place, l.Class)})
	}
	started, ended := !l.StartedAt.IsZero(), !l.EndedAt.IsZero()
	away := b.Svc.AwayWait(ctx, l)
	switch {
	case away != "":
		// Its start waits for its requester to be back, wherever it would start.
		f = append(f, bot.Field{Label: "Waiting", Value: strings.TrimPrefix(away, "waiting ")})
	case l.Node == "":
	case l.State.Live() && (!l.State.Running() || l.State == qm.Provisioning):
		// Nothing runs yet: the node the service chose is where it waits to start, not where
		// it is; and what it waits for.
		f = append(f, bot.Field{Label: "Waiting", Value: waitingText(l)})
	case qm.Halted(l):
		// Its job is back in the queue or suspended: nothing runs on that node now.
		f = append(f, bot.Field{Label: "Last ran on", Value: l.Node})
	case l.State.Live() || started:
		f = append(f, bot.Field{Label: "Node", Value: l.Node})
	}
	switch {
	case l.State.Running() && !l.ExpiresAt.IsZero():
		f = append(f, bot.Field{Label: "Time left", Value: policy.FormatDuration(l.ExpiresAt.Sub(now))})
	case started && ended && l.EndedAt.After(l.StartedAt):
		f = append(f, bot.Field{Label: "Ran", Value: policy.FormatDuration(usedFor(l, l.EndedAt)) + " of " + policy.FormatDuration(l.Duration)})
	default:
		f = append(f, bot.Field{Label: "Duration", Value: policy.FormatDuration(l.Duration)})
	}
	if b.Svc.Telemetry != nil && l.State.Running() && !l.CPUOnly() {
		if a, ok := b.Svc.Telemetry.Activity(ctx, l); ok {
			f = append(f, bot.Field{Label: "Utilization", Value: fmt.Sprintf("%.0f%%", a.Utilization)})
		}
	}
	if l.CPUOnly() {
		f = append(f, bot.Field{Label: "Cost", Value: "none (no GPU held)"})
	} else if cls != nil || l.Priced {
		// What it cost while it ran, so far or in all; before it starts, what it would cost.
		switch {
		case l.State.Running():
			f = append(f, bot.Field{Label: "Cost so far", Value: b.money(qm.BillUpTo(b.pol(), l, now))})
		case started:
			f = append(f, bot.Field{Label: "Cost", Value: b.money(qm.BillUpTo(b.pol(), l, now))})
		case l.State == qm.PendingApproval || l.State == qm.Queued:
			f = append(f, bot.Field{Label: "Estimated cost", Value: b.money(qm.Bill(b.pol(), l, l.Duration))})
		}
	}
	return bot.Section{Title: l.ID.String(), Fields: f}
}

// waitingText says where a lease that does not run yet waits to start and what for: "to start on
// mig-1, in the scheduler's queue: Kubernetes: Unschedulable: …".
func waitingText(l *qm.Lease) string {
	where := "to start on " + strings.ReplaceAll(l.Node, ",", ", ")
	why := l.Reason
	switch {
	case l.State == qm.Provisioning:
		why = "the scheduler is placing it"
	case l.State == qm.PendingApproval:
		why = "a budget owner's decision"
		return where + ", after " + why
	case strings.HasPrefix(why, "waiting: "):
		why = strings.TrimPrefix(why, "waiting: ")
	case strings.HasPrefix(why, "waiting "):
		why = strings.TrimPrefix(why, "waiting ")
	}
	if why == "" {
		return where
	}
	return where + ", " + why
}

// usedFor is how long a lease has held its GPUs up to now (or its end): the time its job waited
// in the scheduler's queue after a requeue is not billed.
func usedFor(l *qm.Lease, now time.Time) time.Duration {
	if l.StartedAt.IsZero() {
		return 0
	}
	return qm.HeldFor(l, l.StartedAt, now)
}

// noGPUBilled is what a CPU-only lease costs, as a reply says it before it ends.
const noGPUBilled = "It holds no GPU, so nothing is billed."

// costLine says what a lease used, at the price it was requested at; of one that never started
// (cancelled while it waited), that nothing was billed.
func (b *Bot) costLine(l *qm.Lease) string {
	switch {
	case l.StartedAt.IsZero():
		return "It never started, so nothing was billed."
	case l.CPUOnly():
		return "It held no GPU, so nothing was billed."
	}
	now := b.Svc.Clock.Now()
	return fmt.Sprintf("It used %s GPU-hours, %s.", gpuHoursUsed(qm.GPUHours(l.GPUs, usedFor(l, now))), b.money(qm.BillUpTo(b.pol(), l, now)))
}

// gpuHoursUsed is GPU-hours used with two decimals; "under 0.01" for some that round to none
// (a lease released after seconds), which is billed for them.
func gpuHoursUsed(h float64) string {
	if r := policy.Round(h, 2); r > 0 || h <= 0 {
		return fmt.Sprintf("%.2f", r)
	}
	return "under 0.01"
}

func (b *Bot) estimate(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	if b.unknownClass(c) {
		return []bot.Reply{b.refuse(ctx, c.Verb, b.noClass(ctx, c))}
	}
	e, err := b.Svc.EstimateRequest(ctx, req.User, c.Class, c.GPUs, c.Duration, c.Exclusive)
	if err != nil {
		return []bot.Reply{b.fail(ctx, "estimate", err)}
	}
	asked, holds, excl := e.GPUs, "", ""
	if c.Exclusive {
		excl = " exclusive"
	}
	if e.Asked > 0 { // more than a node holds, or exclusive: whole nodes, as the request would get
		asked, holds = e.Asked, fmt.Sprintf(" takes %s", e.WholeNodes)
	}
	decision := ""
	if len(e.Rules) > 0 && len(e.Approvers) > 0 {
		// The request would not start at once: a budget owner decides first, as its reply would say.
		decision = fmt.Sprintf(" Asked now, it would wait for a budget owner first: %s, so %s would decide.", matchesText(e.Rules), b.whoDecides(e.Approvers, req.User))
	}
	return []bot.Reply{{Text: fmt.Sprintf("%d × %s%s for %s%s: %s (%s per GPU-hour). Predicted wait: %s.%s Nothing was reserved.",
		asked, e.Class.Name, excl, policy.FormatDuration(e.For), holds, b.money(e.Cost), b.price(e.Class.PricePerGPUHour), waitText(e.Wait), decision),
		Actions: []bot.Action{{Label: "Request it", Command: fmt.Sprintf("/gpu request %d %s for %s%s", asked, e.Class.Name, policy.FormatDuration(e.For), excl), Style: "primary"}}}}
}

func (b *Bot) list(ctx context.Context, req bot.Request) []bot.Reply {
	ls, err := b.Svc.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, User: req.User, EndedAfter: b.Svc.Clock.Now().Add(-24 * time.Hour)})
	if err != nil {
		return []bot.Reply{b.fail(ctx, "list", err)}
	}
	if len(ls) == 0 {
		return []bot.Reply{{Text: b.expandFor(ctx, "You have no leases. Try /gpu request 1 {class} for {short}")}}
	}
	// An approved extension is part of its lease now, which the list shows at its new length.
	ls = slices.DeleteFunc(ls, func(l *qm.Lease) bool {
		return l.Kind == qm.KindExtension && l.DecidedBy != "" && l.State != qm.Denied
	})
	if len(ls) == 0 {
		return []bot.Reply{{Text: b.expandFor(ctx, "You have no leases. Try /gpu request 1 {class} for {short}")}}
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].State.Live() && !ls[j].State.Live() })
	r := bot.Reply{Text: fmt.Sprintf("Your leases (%d, ended ones from the last day included):", len(ls))}
	for _, l := range ls {
		r.Sections = append(r.Sections, b.card(ctx, l))
	}
	return []bot.Reply{r}
}

func (b *Bot) status(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	l, err := b.Svc.Get(ctx, c.Lease)
	if qm.ErrorCode(err) == qm.ENOTFOUND || err == nil && !qm.SameUser(l.User, req.User) && !b.Svc.MayApprove(ctx, req.User, l.Team) {
		return []bot.Reply{b.fail(ctx, "status", qm.NotYours(c.Lease))}
	}
	if err != nil {
		return []bot.Reply{b.fail(ctx, "status", err)}
	}
	ev, err := b.Svc.History(ctx, l.ID)
	if err != nil {
		return []bot.Reply{b.fail(ctx, "status", err)}
	}
	var hist []string
	for _, e := range ev {
		from := string(e.From)
		if from == "" {
			from = "new"
		}
		hist = append(hist, fmt.Sprintf("%s  %s: %s → %s (%s)", e.At.In(b.pol().Location).Format("Mon 2 Jan 15:04 MST"), e.Actor, from, e.To, e.Reason))
	}
	text := fmt.Sprintf("%s for %s: %s", l.ID, l.User, l.State)
	if away := b.Svc.AwayWait(ctx, l); away != "" {
		// Queued, but its start waits for its requester, not for GPUs. It keeps its place.
		text += " — " + away
		if place, ok := b.Svc.QueuePlace(ctx, l); ok {
			text += ". " + queuePlaceText(place, l.Class)
		}
	} else if l.Reason != "" {
		text += " — " + l.Reason
		if place, ok := b.Svc.QueuePlace(ctx, l); ok {
			// Where it stands in its class's queue, counted now.
			text += ". " + queuePlaceText(place, l.Class)
		}
		if l.Kind == qm.KindWorkspace && l.State == qm.Queued {
			// How long it still waits, counted now, as its reply said when it was queued.
			if w, err := b.Svc.LeaseWait(ctx, l); err == nil {
				text += ". Predicted wait: " + waitText(w)
			}
		}
	}
	if l.Connect != "" && l.State.Running() && !qm.Halted(l) { // nothing to connect to while its job does not run
		text += ". Connect: " + l.Connect
	}
	if l.Kind == qm.KindWorkspace && l.State.Live() {
		if w, deciders, err := b.Svc.WaitingExtension(ctx, l.ID); err == nil && w != nil {
			waits := b.waitingExtensionText(l, w, deciders)
			text += ". " + strings.ToUpper(waits[:1]) + waits[1:]
		}
	}
	r := bot.Reply{Text: text, Sections: []bot.Section{b.card(ctx, l), {Title: "History", Text: strings.Join(hist, "\n")}}}
	if strings.EqualFold(l.User, req.User) {
		r.Actions = b.leaseActions(ctx, l)
	}
	return []bot.Reply{r}
}

func (b *Bot) approvals(ctx context.Context, req bot.Request) []bot.Reply {
	ls, err := b.Svc.Pending(ctx, req.User)
	if err != nil {
		return []bot.Reply{b.fail(ctx, "approvals", err)}
	}
	// The week's figures are of the teams the viewer decides for, named: a budget owner's
	// teams, every team for a fallback approver; none for someone who decides for no team.
	footer := ""
	if teams, label := b.decidedTeams(ctx, req.User); label != "" {
		now := b.Svc.Clock.Now()
		touches, requests, leases, err := b.Svc.Touches(ctx, b.Svc.WeekStart(now), now.Add(time.Second), teams)
		if err != nil {
			return []bot.Reply{b.fail(ctx, "approvals", err)}
		}
		// Human touches per 100 leases, as the product and the weekly showback count them: the
		// decisions people made on the week's requests per 100 of the week's leases.
		footer = fmt.Sprintf(" This week in %s: %s on %s, ", label, policy.Count(touches, "human decision", "human decisions"), policy.Count(requests, "request", "requests"))
		if leases > 0 {
			footer += fmt.Sprintf("%s: %.1f human touches per 100 leases.", policy.Count(leases, "lease", "leases"), 100*float64(touches)/float64(leases))
		} else {
			footer += "no leases."
		}
	}
	if len(ls) == 0 {
		return []bot.Reply{{Text: "Nothing waits for your decision." + footer}}
	}
	waits := "wait"
	if len(ls) == 1 {
		waits = "waits"
	}
	r := bot.Reply{Text: fmt.Sprintf("%s %s for your decision.%s", policy.Count(len(ls), "request", "requests"), waits, footer)}
	for _, l := range ls {
		sec := b.card(ctx, l)
		// What the team holds now, where the approval message says it: what the owner decides on.
		sec.Text = fmt.Sprintf("%s asks %s; %s.%s", l.User, b.askWithDetails(l), strings.TrimRight(b.rulesOf(ctx, l), "."), b.heldLine(ctx, l, "", false))
		r.Sections = append(r.Sections, sec)
		r.Actions = append(r.Actions, approvalActions(l)...)
	}
	return []bot.Reply{r}
}

// rulesOf says which rules sent l to its approvers and why: "rule big: Too many GPUs", or "rules
// big: Too many GPUs; vendor: Vendor accounts need approval". The first reason is the one stored
// with the request; the others are the policy's.
func (b *Bot) rulesOf(ctx context.Context, l *qm.Lease) string {
	names := strings.Split(l.Rules, ",")
	parts := make([]string, 0, len(names))
	for i, n := range names {
		n = strings.TrimSpace(n)
		why := ""
		if n == qm.QuotaRule && l.Kind == qm.KindQuota {
			why = qm.QuotaRuleWhy // as the approval card words it
		} else if i == 0 {
			why = l.Reason
			if why == policy.DefaultWhy(n) {
				why = "" // a rule without a why is named alone, as its approval message names it
			}
		} else {
			// A published rule may be named like the quota note: its own why is the one to show.
			published := false
			for _, r := range b.pol().Exceptions {
				if r.Name == n {
					why, published = r.Why, true
				}
			}
			if !published && n == qm.QuotaLimit {
				// With its numbers, as the approval message gives them.
				why = "It would also take the team past its quota"
				if note, err := b.Svc.QuotaNote(ctx, l); err == nil {
					why = note
				}
			}
		}
		if why == "" || why == policy.DefaultWhy(n) {
			// A rule written without a why is named alone, as the approval message names it.
			parts = append(parts, n)
			continue
		}
		parts = append(parts, n+": "+why)
	}
	if len(parts) == 1 {
		return "rule " + parts[0]
	}
	return "rules " + strings.Join(parts, "; ")
}

// decidedTeams are the teams whose requests user decides, for the week's figures of /gpu
// approvals, and how to name them: nil and "all teams" for a fallback approver, who decides for
// every team; "team vision", "teams vision and speech" for a budget owner; none and "" for
// someone who decides for no team.
func (b *Bot) decidedTeams(ctx context.Context, user string) ([]string, string) {
	if b.Svc.IsPlatformAdmin(ctx, user) {
		return nil, "all teams"
	}
	teams := []string{}
	for _, t := range b.pol().Teams {
		if b.Svc.MayApprove(ctx, user, t.Name) {
			teams = append(teams, t.Name)
		}
	}
	// A budget owner of every team the policy lists still decides for those alone, not for the
	// teams it does not list (on the default quota): they are named, and only theirs counted.
	switch {
	case len(teams) == 0:
		return nil, ""
	case len(teams) == 1:
		return teams, "team " + teams[0]
	}
	return teams, "teams " + policy.JoinList(teams, "and")
}

func approvalActions(l *qm.Lease) []bot.Action {
	id := l.ID.String()
	return []bot.Action{
		{Label: "Approve " + id, Command: "/gpu approve " + id, Style: "primary"},
		{Label: "Deny " + id, Command: "/gpu deny " + id, Style: "danger"},
	}
}

func (b *Bot) quota(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	team := c.Arg
	if team == "" {
		id := *c.Who
		if owned := b.ownedInNoTeam(ctx, id, req.User); len(owned) > 0 {
			// A budget owner in no team of the policy: the teams they own, not the one their
			// directory group makes them.
			return []bot.Reply{b.ownedQuotas(ctx, owned)}
		}
		if len(id.Teams) == 0 {
			if teams := b.pol().Teams; len(teams) > 0 {
				return []bot.Reply{b.fail(ctx, "quota", qm.Errorf(qm.EFORBIDDEN,
					"you belong to no team, so there is no quota of yours to show; ask a platform admin to add your group to a team in the policy, or name a team.").
					WithExample("/gpu quota "+teams[0].Name))}
			}
			return []bot.Reply{b.fail(ctx, "quota", qm.Errorf(qm.EUNAVAILABLE, "the policy names no teams, so there are no team quotas to show; ask a platform admin."))}
		}
		team = id.Teams[0]
	} else if _, ok := b.pol().Team(team); !ok && !slices.Contains(c.Who.Teams, team) {
		// A team the policy does not list is known only to its members (their default-quota team).
		if near := nearest(team, b.pol().TeamNames()); near != "" {
			return []bot.Reply{b.fail(ctx, "quota", qm.Errorf(qm.ENOTFOUND, "there is no team %s in the policy; did you mean %s?", policy.Quoted(team, 40), near).
				WithExample("/gpu quota "+near))}
		}
		return []bot.Reply{b.fail(ctx, "quota", qm.Errorf(qm.ENOTFOUND, "there is no team %s in the policy.", policy.Quoted(team, 40)))}
	}
	u, q, err := b.Svc.TeamUsage(ctx, team)
	if err != nil {
		return []bot.Reply{b.fail(ctx, "quota", err)}
	}
	base := b.pol().QuotaFor(team)
	r := bot.Reply{Text: fmt.Sprintf("Team %s this week (since %s):", team, b.Svc.WeekStart(b.Svc.Clock.Now()).Format("Mon 2 Jan"))}
	var f []bot.Field
	var none []string // classes the team has no quota of and no GPUs in
	for _, cl := range b.pol().Classes {
		if u.GPUs[cl.Name] == 0 && q.GPUs[cl.Name] == 0 {
			none = append(none, cl.Name)
			continue
		}
		v := fmt.Sprintf("%d of %s in use", u.GPUs[cl.Name], qm.GPUCount(q.GPUs[cl.Name], ""))
		if extra := q.GPUs[cl.Name] - base.GPUs[cl.Name]; extra > 0 {
			v += fmt.Sprintf(" (%d + %d approved increase)", base.GPUs[cl.Name], extra)
		}
		if w := u.Waiting[cl.Name]; w > 0 {
			// One rule for quota and bill: a lease's GPUs count from its grant to its end, and
			// are billed only while its job holds them.
			if w == 1 {
				v += ", 1 of them by a lease waiting to run (counted here, not billed until it runs)"
			} else {
				v += fmt.Sprintf(", %d of them by leases waiting to run (counted here, not billed until they run)", w)
			}
		}
		f = append(f, bot.Field{Label: cl.Name, Value: v})
	}
	switch {
	case len(none) > 3 && len(f) == 0:
		f = append(f, bot.Field{Label: "Classes", Value: fmt.Sprintf("none in use and no quota in any of the %d classes", len(none))})
	case len(none) > 3:
		f = append(f, bot.Field{Label: "Other classes", Value: fmt.Sprintf("none in use and no quota in %d other classes", len(none))})
	case len(none) > 0 && len(f) == 0:
		f = append(f, bot.Field{Label: "Classes", Value: "none in use and no quota of " + policy.SomeNames(none, 3, "or")})
	case len(none) > 0:
		f = append(f, bot.Field{Label: "Other classes", Value: "none in use and no quota of " + policy.SomeNames(none, 3, "or")})
	}
	hours := fmt.Sprintf("%s used or committed this week, no weekly limit", qm.FormatHours(u.GPUHoursWeek))
	if q.GPUHoursPerWeek > 0 {
		left := q.GPUHoursPerWeek - u.GPUHoursWeek
		hours = fmt.Sprintf("%s of %s used or committed, %s left", qm.FormatHours(u.GPUHoursWeek), qm.FormatHours(q.GPUHoursPerWeek), qm.FormatHours(max(0, left)))
	}
	f = append(f, bot.Field{Label: "GPU-hours", Value: hours})
	f = append(f, b.weeksAheadFields(u, q)...)
	r.Sections = []bot.Section{{Title: "Quota", Fields: f}}
	if others := otherTeams(c); len(others) > 0 {
		r.Text = fmt.Sprintf("Team %s this week (since %s), the first of your %d teams:", team,
			b.Svc.WeekStart(b.Svc.Clock.Now()).Format("Mon 2 Jan"), len(others)+1)
		r.Sections = append(r.Sections, bot.Section{Title: "Your other teams",
			Text: fmt.Sprintf("%s. /gpu quota %s shows that team's quota.", policy.SomeNames(others, maxTeamsNamed, "and"), others[0])})
	}
	return []bot.Reply{r}
}

// weeksAheadFields are the GPU-hours that the team's running and granted leases already commit
// to the weeks after this one, a field for each week they reach (none where they reach none),
// counted as admission counts a request's hours in those weeks (Service.WeeksAhead).
func (b *Bot) weeksAheadFields(u qm.Usage, q policy.Quota) []bot.Field {
	var f []bot.Field
	for _, w := range b.Svc.WeeksAhead(u, q) {
		name := b.Svc.WeekName(w.Start, u)
		v := fmt.Sprintf("%s GPU-hours committed, no weekly limit", qm.FormatHours(w.Used))
		if w.Limit > 0 {
			v = fmt.Sprintf("%s of %s GPU-hours committed, %s left", qm.FormatHours(w.Used), qm.FormatHours(w.Limit), qm.FormatHours(max(0, w.Limit-w.Used)))
		}
		f = append(f, bot.Field{Label: strings.ToUpper(name[:1]) + name[1:], Value: v})
	}
	return f
}

// ownedQuotas is /gpu quota for a budget owner who is in no team of the policy: each team they
// own on a line, its GPUs in use of its quota by class and its GPU-hours of the week.
func (b *Bot) ownedQuotas(ctx context.Context, owned []string) bot.Reply {
	since := b.Svc.WeekStart(b.Svc.Clock.Now()).Format("Mon 2 Jan")
	r := bot.Reply{Text: fmt.Sprintf("You are in no team, but a budget owner of %s; this week (since %s):", policy.Count(len(owned), "team", "teams"), since)}
	// A line for each team, as many as a list of names names (policy.SomeNames: never one left
	// over to "and 1 more"); the teams after them are named as such lists name them.
	shown, rest := owned, []string(nil)
	if len(owned) > maxTeamsNamed+1 {
		shown, rest = owned[:maxTeamsNamed], owned[maxTeamsNamed:]
	}
	var lines []string
	for _, team := range shown {
		u, q, err := b.Svc.TeamUsage(ctx, team)
		if err != nil {
			return b.fail(ctx, "quota", err)
		}
		var held []string
		for _, cl := range b.pol().Classes {
			if u.GPUs[cl.Name] == 0 && q.GPUs[cl.Name] == 0 {
				continue
			}
			held = append(held, fmt.Sprintf("%s %d of %d", cl.Name, u.GPUs[cl.Name], q.GPUs[cl.Name]))
		}
		gpus := "no GPU quota and none in use"
		if len(held) > 0 {
			gpus = strings.Join(held, ", ") + " GPUs in use"
		}
		hours := fmt.Sprintf("%s GPU-hours this week, no weekly limit", qm.FormatHours(u.GPUHoursWeek))
		if q.GPUHoursPerWeek > 0 {
			hours = fmt.Sprintf("%s of %s GPU-hours this week", qm.FormatHours(u.GPUHoursWeek), qm.FormatHours(q.GPUHoursPerWeek))
		}
		lines = append(lines, fmt.Sprintf("%s: %s; %s", team, gpus, hours))
	}
	r.Sections = []bot.Section{{Title: "Your teams' quotas", Text: strings.Join(lines, "\n")}}
	if len(rest) > 0 {
		r.Sections = append(r.Sections, bot.Section{Title: "Your other teams",
			Text: fmt.Sprintf("%s. /gpu quota %s shows that team's quota.", policy.SomeNames(rest, maxTeamsNamed, "and"), rest[0])})
	}
	r.Sections = append(r.Sections, bot.Section{Title: "One team in full", Text: fmt.Sprintf("/gpu quota %s shows its quota, increases and waiting leases.", owned[0])})
	return r
}

// maxTeamsNamed is how many of someone's other teams /gpu quota names.
const maxTeamsNamed = 20

// otherTeams are the asker's teams after the first, when /gpu quota names no team: the quota
// shown is the first team's, and these are the ones it leaves out.
func otherTeams(c Command) []string {
	if c.Arg != "" || c.Who == nil || len(c.Who.Teams) < 2 {
		return nil
	}
	return c.Who.Teams[1:]
}

// capacityShareText says which classes the capacity share binds and how far: the classes that
// declare one, together, at the smallest share any of them declares (as admission enforces it),
// whatever their isolation.
func capacityShareText(p *policy.Policy) string {
	var names []string
	for _, c := range p.Classes {
		if c.CapacityShare > 0 {
			names = append(names, c.Name)
		}
	}
	share := strconv.FormatFloat(math.Round(p.CapacityShare()*1000)/10, 'f', -1, 64)
	switch {
	case len(names) == 0:
		return ""
	case len(names) == 1:
		return fmt.Sprintf("%s holds at most %s%% of the cluster's GPUs", names[0], share)
	case len(names) > 4: // named in every such class's line, a long list would fill the reply
		return fmt.Sprintf("the %d classes with a capacity share together hold at most %s%% of the cluster's GPUs", len(names), share)
	}
	who := policy.JoinList(names, "and")
	return fmt.Sprintf("%s together hold at most %s%% of the cluster's GPUs", who, share)
}

func (b *Bot) policyText(ctx context.Context, user string) bot.Reply {
	p := b.pol()
	team, who := b.askerTeam(ctx, user), b.askerOf(ctx, user)
	r := bot.Reply{Text: fmt.Sprintf("The published rules of %s. A request starts at once unless one of these rules applies; then a budget owner decides.", p.Organization)}
	var cl []string
	capped := capacityShareText(p)
	for _, c := range p.Classes {
		line := fmt.Sprintf("%s: %s, %s/GPU-hour, %s", c.Name, strings.TrimSpace(c.SKU+" "+c.Isolation), b.price(c.PricePerGPUHour), b.withoutApprovalText(c, team, who, true))
		if c.IdleTimeout.Duration > 0 {
			line += fmt.Sprintf("; idle for %s → warning, reclaimed %s later", policy.FormatDuration(c.IdleTimeout.Duration), policy.FormatDuration(qm.IdleGrace(c)))
		}
		if c.CapacityShare > 0 {
			line += "; " + capped
		}
		cl = append(cl, line)
	}
	r.Sections = append(r.Sections, bot.Section{Title: "Classes", Text: strings.Join(cl, "\n")})
	var rules []string
	for _, e := range p.Exceptions {
		if m := (policy.Match{Rule: e.Name, Why: e.Why}); m.Named() == e.Name {
			rules = append(rules, fmt.Sprintf("%s (when %s)", e.Name, e.When))
		} else {
			rules = append(rules, fmt.Sprintf("%s — %s (when %s)", e.Name, e.Why, e.When))
		}
	}
	if len(rules) == 0 {
		rules = []string{"none: a request within its team's quota starts at once, and one beyond it is refused; /gpu quota request asks the budget owners for more"}
	}
	r.Sections = append(r.Sections, bot.Section{Title: "Exceptions (a budget owner decides)", Text: strings.Join(rules, "\n")})
	dq := p.DefaultQuota
	var teams []string
	// Who decides a team's exceptions when it has no budget owners: the fallback approvers.
	fallback := "nobody decides its exceptions"
	if len(p.Approvals.FallbackApprovers) > 0 {
		fallback = "the fallback approvers decide"
	}
	for _, t := range p.Teams {
		q := p.QuotaFor(t.Name)
		owners := namedAs("budget owner", "budget owners", t.BudgetOwners, b.Svc.WithMembers)
		if len(t.BudgetOwners) == 0 {
			owners = "no budget owners, so " + fallback
		}
		teams = append(teams, fmt.Sprintf("%s: %s, %s; %s", t.Name, gpusText(p, q), weeklyHoursText(q.GPUHoursPerWeek), owners))
	}
	teams = append(teams, fmt.Sprintf("any other team: %s, %s; %s", gpusText(p, p.QuotaFor("")), weeklyHoursText(dq.GPUHoursPerWeek), fallback))
	r.Sections = append(r.Sections, bot.Section{Title: "Quotas", Text: strings.Join(teams, "\n")})
	approvals := fmt.Sprintf("undecided after %s → denied; self-approval %s; %s",
		policy.FormatDuration(p.Approvals.Timeout.Duration), map[bool]string{true: "allowed", false: "not allowed"}[p.Approvals.SelfApproval], namedAs("fallback approver", "fallback approvers", p.Approvals.FallbackApprovers, b.Svc.WithMembers))
	if p.Approvals.StepUp.Duration > 0 {
		approvals += fmt.Sprintf("; an approver signed in with single sign-on more than %s ago signs in again first", policy.FormatDuration(p.Approvals.StepUp.Duration))
	}
	r.Sections = append(r.Sections, bot.Section{Title: "Approvals", Text: approvals})
	return r
}

// weeklyHoursText is a quota's gpu_hours_per_week as /gpu policy says it; 0 is no limit.
func weeklyHoursText(h float64) string {
	if h <= 0 {
		return "no weekly GPU-hour limit"
	}
	return qm.FormatHours(h) + " GPU-hours/week"
}

// orNone is the list joined with commas, or "none".
// namedAs is who a list names, under its noun: one person in the singular ("budget owner
// dana@acme.example"); several, a group (which may hold many) or none in the plural. Each is
// written by name: a group with its members ("budget owners: the group chefs-baobab
// (aminata@baobab.example, moussa@baobab.example)").
func namedAs(one, many string, list []string, name func(string) string) string {
	if len(list) == 1 && strings.Contains(list[0], "@") {
		return one + " " + list[0]
	}
	named := make([]string, len(list))
	for i, n := range list {
		named[i] = name(n)
	}
	return many + ": " + orNone(named)
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// gpusText is a quota's GPUs at once as /gpu policy says it: the classes it has GPUs in, in the
// policy's order, each count with its own noun, and how many classes it has none in ("4 dev GPUs
// and 1 big GPU at once, none in 3 other classes"; the one other class by its name: "none in
// class big"), so that a policy of many classes stays readable and every count reads right.
func gpusText(p *policy.Policy, q policy.Quota) string {
	var s []string
	for _, c := range p.Classes {
		if n := q.GPUs[c.Name]; n > 0 {
			s = append(s, qm.GPUCount(n, c.Name))
		}
	}
	none := len(p.Classes) - len(s)
	switch {
	case len(s) == 0:
		return "no GPUs in any class"
	case none == 0:
		return policy.JoinList(s, "and") + " at once"
	}
	if none == 1 {
		// The one other class, by name: "none in class rack".
		for _, c := range p.Classes {
			if q.GPUs[c.Name] <= 0 {
				return fmt.Sprintf("%s at once, none in class %s", policy.JoinList(s, "and"), c.Name)
			}
		}
	}
	return fmt.Sprintf("%s at once, none in %d other classes", policy.JoinList(s, "and"), none)
}

// extraGone says that the extra GPUs of the quota increase l, of its team, are gone: "1 extra
// tiny GPU of team genomics is gone", "2 extra tiny GPUs of team genomics are gone".
func extraGone(l *qm.Lease) string {
	if l.GPUs == 1 {
		return qm.GPUCount(l.GPUs, "extra "+l.Class) + " of team " + l.Team + " is gone"
	}
	return qm.GPUCount(l.GPUs, "extra "+l.Class) + " of team " + l.Team + " are gone"
}

// queuePlaceSentence says, as a sentence with a leading space, where a queued lease stands in its
// class's queue, counted now: " 2nd in line for interactive." Empty where the service cannot say
// (its job waits in the scheduler's own queue, whose order only the scheduler knows).
func (b *Bot) queuePlaceSentence(ctx context.Context, l *qm.Lease) string {
	place, ok := b.Svc.QueuePlace(ctx, l)
	if !ok {
		return ""
	}
	return " " + queuePlaceText(place, l.Class) + "."
}

// queuePlaceText: "2nd in line for interactive".
func queuePlaceText(place int, class string) string {
	return ordinal(place) + " in line for " + class
}

// ordinal writes n as 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, ...
func ordinal(n int) string {
	suffix := "th"
	switch n % 100 {
	case 11, 12, 13:
	default:
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
