package commands

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Notices renders domain notices as chat messages and hands them to a sender.
type Notices struct {
	Bot    *Bot
	Sender bot.Sender
}

// Notify implements qm.Notifier.
func (n *Notices) Notify(ctx context.Context, no qm.Notice) {
	if err := n.NotifyChecked(ctx, no); err != nil {
		n.Bot.log().Error("send notice", "to", no.To, "kind", no.Kind, "err", err)
	}
}

// NotifyChecked implements qm.CheckedNotifier: it renders the notice and sends each message,
// and says whether they all went out.
func (n *Notices) NotifyChecked(ctx context.Context, no qm.Notice) error {
	var errs []error
	for _, r := range n.Bot.RenderNotice(ctx, no) {
		if err := n.Sender.Send(ctx, r); err != nil {
			errs = append(errs, fmt.Errorf("to %s: %w", r.To, err))
		}
	}
	return errors.Join(errs...)
}

// askText says what a request asks for, by kind.
func (b *Bot) askText(l *qm.Lease) string {
	switch l.Kind {
	case qm.KindQuota:
		return fmt.Sprintf("for +%s for %s because %s", qm.GPUCount(l.GPUs, l.Class), policy.FormatDuration(l.Duration), l.Because)
	case qm.KindExtension:
		return fmt.Sprintf("to extend %s by %s", l.Parent, policy.FormatDuration(l.Duration))
	}
	if l.CPUOnly() {
		return fmt.Sprintf("for a CPU-only job (no GPU) in %s for %s", l.Class, policy.FormatDuration(l.Duration))
	}
	if r := b.roundedText(l); r != "" { // as /gpu estimate says it
		return fmt.Sprintf("for %s for %s, which %s", b.gpusExclusive(l), policy.FormatDuration(l.Duration), r)
	}
	if l.Exclusive {
		return fmt.Sprintf("for %d × %s (whole nodes, exclusive) for %s", l.GPUs, l.Class, policy.FormatDuration(l.Duration))
	}
	if b.wholeNodes(l) {
		return fmt.Sprintf("for %d × %s (whole nodes) for %s", l.GPUs, l.Class, policy.FormatDuration(l.Duration))
	}
	return fmt.Sprintf("for %d × %s for %s", l.GPUs, l.Class, policy.FormatDuration(l.Duration))
}

// gpusExclusive is what a lease whose GPUs were rounded up to whole nodes asked for, as /gpu
// estimate writes it: "6 × train", "6 × train exclusive".
func (b *Bot) gpusExclusive(l *qm.Lease) string {
	s := fmt.Sprintf("%d × %s", l.AskedGPUs, l.Class)
	if l.Exclusive {
		s += " exclusive"
	}
	return s
}

// askDetails says what else a lease asks that rules may read and its approvers decide on: its
// data class and, for a job, its template ("data class phi, template cuda-smoke"); empty for
// other kinds of request.
func askDetails(l *qm.Lease) string {
	if l.Kind != qm.KindWorkspace {
		return ""
	}
	var parts []string
	if l.DataClass != "" {
		parts = append(parts, "data class "+l.DataClass)
	}
	if l.Template != "" {
		parts = append(parts, "template "+l.Template)
	}
	return strings.Join(parts, ", ")
}

// askQuotaAgain is the quota request that asks for the increase l again, as it was asked: its
// GPUs, class, duration and reason, and its team where the asker has several.
func (b *Bot) askQuotaAgain(ctx context.Context, l *qm.Lease) (string, bool) {
	if _, ok := b.pol().Class(l.Class); !ok || strings.TrimSpace(l.Because) == "" {
		return "", false
	}
	cmd := fmt.Sprintf("/gpu quota request +%d %s for %s", l.GPUs, l.Class, policy.FormatDuration(l.Duration))
	if who, err := b.Svc.Resolve(ctx, l.User); l.Team != "" && (err != nil || len(who.Teams) != 1) {
		cmd += " team " + l.Team
	}
	return cmd + " because " + l.Because, true
}

// askWithDetails is askText with askDetails after it in brackets, where there are any: "for 1 ×
// jupyter for 2h (data class phi)".
func (b *Bot) askWithDetails(l *qm.Lease) string {
	if d := askDetails(l); d != "" {
		return b.askText(l) + " (" + d + ")"
	}
	return b.askText(l)
}

// expiryExtension is the extension an expiry warning offers: an hour, or what is left of the
// class's max_duration, or of the 30 days no lease goes past, when that is less (at least a minute). When nothing is left it offers the
// hour and names the max_duration it goes past (past is empty otherwise).
func (b *Bot) expiryExtension(l *qm.Lease) (by time.Duration, past string) {
	by = time.Hour
	c, ok := b.pol().Class(l.Class)
	if !ok || c.MaxDuration.Duration <= 0 {
		return by, ""
	}
	switch left := (c.MaxDuration.Duration - l.Duration).Truncate(time.Minute); {
	case left >= by:
	case left >= time.Minute:
		by = left
	default:
		past = policy.FormatDuration(c.MaxDuration.Duration)
	}
	if room := qm.ExtensionRoom(l); room >= time.Minute {
		by = min(by, room) // no lease goes past 30 days, approved or not
	}
	return by, past
}

// expiryOffer is the expiry warning of l: when it ends, and the extension expiryExtension offers
// as /gpu extend would judge it now (qm.JudgeExtension): granted at once; waiting for a budget
// owner, and why (past the class's max_duration, past the team's quota, another rule); or
// refused, and why, with no Extend button. Where only a shorter extension fits the team's
// weekly GPU-hours, that one is offered instead.
func (b *Bot) expiryOffer(ctx context.Context, l *qm.Lease) bot.Reply {
	id := l.ID.String()
	by, past := b.expiryExtension(l)
	extend := fmt.Sprintf("/gpu extend %s %s", id, policy.FormatDuration(by))
	release := bot.Action{Label: "Release", Command: "/gpu release " + id, Style: "danger"}
	ends := fmt.Sprintf("%s ends at %s", id, b.when(l.ExpiresAt))
	if w, deciders, err := b.Svc.WaitingExtension(ctx, l.ID); err == nil && w != nil {
		return bot.Reply{Text: fmt.Sprintf("%s; %s", ends, b.waitingExtensionText(l, w, deciders)), Actions: []bot.Action{release}}
	}
	v, err := b.Svc.JudgeExtension(ctx, l, by)
	if err != nil {
		// Not known now: offered as max_duration alone judges it.
		b.log().Error("judging the extension an expiry warning offers", "lease", id, "err", err)
		v = qm.ExtensionVerdict{}
		if past != "" {
			v.Matches = []policy.Match{{Rule: "max_duration"}}
		}
	}
	if v.Refused != nil && v.Fits >= time.Minute && v.Fits < by {
		// Only a shorter extension fits what the team's week has left: that one is offered,
		// where /gpu extend would take it.
		if w, err := b.Svc.JudgeExtension(ctx, l, v.Fits); err == nil && w.Refused == nil {
			by, v = v.Fits, w
			extend = fmt.Sprintf("/gpu extend %s %s", id, policy.FormatDuration(by))
		}
	}
	if v.Refused != nil {
		return bot.Reply{Text: fmt.Sprintf("%s; %s would be refused now: %s", ends, extend, qm.ErrorMessage(v.Refused)), Actions: []bot.Action{release}}
	}
	text := fmt.Sprintf("%s; extend it with %s.", ends, extend)
	if len(v.Matches) > 0 {
		var why, quota, other []string
		for _, m := range v.Matches {
			switch {
			case b.Svc.AboutQuota(m.Rule):
				quota = append(quota, m.Named())
			case m.Rule != "max_duration":
				other = append(other, m.Named())
			}
		}
		meets := func(rules []string) string {
			if len(rules) > 1 {
				return "meets the published " + policy.JoinList(rules, "and") + " rules"
			}
			return "meets the published " + rules[0] + " rule"
		}
		// The rules it meets are named in one clause, as a request's reply names them.
		var named []string
		if past != "" {
			why = append(why, fmt.Sprintf("goes past the %s class %s gives without approval", past, l.Class))
		} else {
			named = append(named, other...)
		}
		if v.PastQuota == "" {
			named = append(named, quota...)
		}
		if len(named) > 0 {
			why = append(why, meets(named))
		}
		if v.PastQuota != "" {
			why = append(why, "takes "+v.PastQuota)
		}
		if len(why) == 1 && past != "" {
			text = fmt.Sprintf("%s; extend it with %s, which %s.", ends, extend, why[0])
		} else {
			text = fmt.Sprintf("%s; extend it with %s, which will wait for a budget owner because it %s.", ends, extend, strings.Join(why, " and "))
		}
	}
	return bot.Reply{Text: text, Actions: []bot.Action{
		{Label: "Extend " + policy.FormatDuration(by), Command: extend, Style: "primary"}, release}}
}

// grantedRef and expiringRef name the messages of a running lease that offer an Extend button
// (its grant, its expiry warnings), so that they can be edited when what they offer changes.
func grantedRef(id qm.LeaseID) string  { return "granted:" + id.String() }
func expiringRef(id qm.LeaseID) string { return "expiring:" + id.String() }

// idleRef names the copies of one idle warning of a lease (with their Keep and Release buttons),
// so that once it is answered or overtaken (kept, released, reclaimed, busy again, ended) they
// say so and lose their buttons. Each warning of a lease has its own: the edit that says what
// became of a later one leaves an earlier one saying what became of it (kept, busy again). The
// first keeps the name every warning of a lease once shared ("idle:L-3"), later ones are
// numbered ("idle:L-3#2"); n is the warning's number, 0 where it is not known (the first's name).
func idleRef(id qm.LeaseID, n int) string {
	if n <= 1 {
		return "idle:" + id.String()
	}
	return fmt.Sprintf("idle:%s#%d", id, n)
}

// idleWarning is one idle warning of a lease, as its history tells it.
type idleWarning struct {
	ref string // idleRef
	// over says what became of it, as its copies say once it is answered or overtaken (kept,
	// busy again, extended, ended); empty while it is open.
	over string
}

// idleWarnings are lease l's idle warnings, oldest first, each with what became of it; answered
// says l's latest change of state answered the latest, from idle_warned to active at l.KeptAt
// (Keep, or an extension). While l is warned, only the history up to its warning (l.WarnedAt)
// counts: a notice rendered late names the warning it is about, not a later one. None where its
// history cannot be read.
func (b *Bot) idleWarnings(ctx context.Context, l *qm.Lease) (ws []idleWarning, answered bool) {
	evs, err := b.Svc.History(ctx, l.ID)
	if err != nil {
		b.log().Error("read a lease's history, for its idle warnings", "lease", l.ID, "err", err)
		return nil, false
	}
	id := l.ID.String()
	var last *qm.Event
	for _, e := range evs {
		if l.State == qm.IdleWarned && !l.WarnedAt.IsZero() && e.At.After(l.WarnedAt.Add(time.Second)) {
			break // after the warning open in l (the stored times may be rounded)
		}
		if e.From == e.To {
			continue // a note, such as a reclaim moved: the same warning
		}
		last = e
		if e.To == qm.IdleWarned {
			ws = append(ws, idleWarning{ref: idleRef(l.ID, len(ws)+1)})
			continue
		}
		if len(ws) == 0 || e.From != qm.IdleWarned {
			continue
		}
		w := &ws[len(ws)-1]
		at := b.when(e.At)
		switch {
		case e.To.Ended():
			w.over = fmt.Sprintf("%s %s.", id, b.endedWords(l))
		case e.Actor != qm.SystemActor && strings.HasPrefix(e.Reason, "kept by "):
			w.over = fmt.Sprintf("%s was kept at %s after this idle warning: it stays for another idle period.", id, at)
		case e.Actor == qm.SystemActor && e.Reason == "GPUs busy again":
			w.over = fmt.Sprintf("%s was idle, then busy again, so it was not reclaimed.", id)
		default: // extended, or its job stopped running: nothing is idle to reclaim
			w.over = fmt.Sprintf("%s was not reclaimed after this idle warning: %s at %s.", id, strings.TrimRight(e.Reason, "."), at)
		}
	}
	answered = len(ws) > 0 && last != nil && last.From == qm.IdleWarned && last.To == qm.Active && !l.KeptAt.IsZero() &&
		last.At.Sub(l.KeptAt).Abs() < time.Second
	return ws, answered
}

// latestIdleRef names the copies of lease l's latest idle warning (idleRef).
func (b *Bot) latestIdleRef(ctx context.Context, l *qm.Lease) string {
	ws, _ := b.idleWarnings(ctx, l)
	return idleRef(l.ID, len(ws))
}

// latestWarningOver is the edit of the copies its owner holds of lease l's latest idle warning to
// what, without buttons: that warning is over. Only copies posted to the owner are edited, and
// nothing is posted where there are none. An earlier idle warning, answered or overtaken
// already, keeps what it says of that.
func (b *Bot) latestWarningOver(ctx context.Context, l *qm.Lease, what string) bot.Reply {
	return warningOver(l, b.latestIdleRef(ctx, l), what)
}

// warningOver is the edit of the copies its owner holds of lease l's idle warning named ref
// (idleRef) to what, without buttons.
func warningOver(l *qm.Lease, ref, what string) bot.Reply {
	return bot.Reply{To: l.User, Ref: ref, Update: true, EditOnly: true, Text: what}
}

// endedWords says how lease l ended, after its id: "was released at Mon 30 Nov 10:00 CET".
func (b *Bot) endedWords(l *qm.Lease) string {
	at := b.when(l.EndedAt)
	switch l.State {
	case qm.Released:
		return "was released at " + at
	case qm.Reclaimed:
		return "was reclaimed at " + at
	case qm.Expired:
		return "expired at " + at
	}
	return fmt.Sprintf("ended at %s (%s)", at, l.State)
}

// endedWarnings are the edits of the messages workspace l offered buttons in when it ended (its
// grant, with Extend and Release; its idle warnings; an expiry warning): they say so and offer
// nothing more, each idle warning answered or overtaken before keeping what became of it. None
// for other kinds of lease, or a lease with no such message.
func (b *Bot) endedWarnings(ctx context.Context, l *qm.Lease) []bot.Reply {
	if l.Kind != qm.KindWorkspace || !l.State.Ended() {
		return nil
	}
	what := fmt.Sprintf("%s %s.", l.ID, b.endedWords(l))
	var out []bot.Reply
	if !l.StartedAt.IsZero() {
		out = append(out, bot.Reply{To: l.User, Ref: grantedRef(l.ID), Update: true, EditOnly: true, Text: what})
	}
	// Each idle warning, the latest first: the one still open says how the lease ended; each
	// earlier one keeps what became of it (kept, busy again) and adds how the lease ended later.
	ws, _ := b.idleWarnings(ctx, l)
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		text := w.over
		switch {
		case text == "" || text == what:
			text = what
		default:
			text += fmt.Sprintf(" Later, %s %s.", l.ID, b.endedWords(l))
		}
		out = append(out, bot.Reply{To: l.User, Ref: w.ref, Update: true, EditOnly: true, Text: text})
	}
	if !l.ExpiryWarnedFor.IsZero() {
		out = append(out, bot.Reply{To: l.User, Ref: expiringRef(l.ID), Update: true, EditOnly: true, Text: what})
	}
	return out
}

// grantedReply is the message that says a lease runs (prefix before it, e.g. who approved it):
// how to reach it, its card, and its buttons. While an extension of it waits for a budget
// owner it says so and who decides, and offers no Extend (leaseActions).
func (b *Bot) grantedReply(ctx context.Context, l *qm.Lease, prefix string) bot.Reply {
	text := prefix + b.grantedText(l)
	if l.Kind == qm.KindWorkspace && l.State.Running() {
		if w, deciders, err := b.Svc.WaitingExtension(ctx, l.ID); err == nil && w != nil {
			waits := b.waitingExtensionText(l, w, deciders)
			text += " " + strings.ToUpper(waits[:1]) + waits[1:]
		}
	}
	return bot.Reply{Ref: grantedRef(l.ID), Text: text, Sections: []bot.Section{b.card(ctx, l)}, Actions: b.leaseActions(ctx, l)}
}

// offersChanged edits the messages of lease l that offer to extend it (its grant, its expiry
// warning), posted to its owner (to), after an extension of it began or stopped waiting for a
// budget owner: while one waits, Extend gives way to who decides it; once it is decided, they
// offer Extend again, as the lease stands then. Only copies the owner holds are edited; nothing
// is posted. The lease is read anew: the edit says what holds when it goes out.
func (b *Bot) offersChanged(ctx context.Context, l *qm.Lease, to []string) []bot.Reply {
	if cur, err := b.Svc.Get(ctx, l.ID); err == nil {
		l = cur
	}
	if l.Kind != qm.KindWorkspace || !l.State.Running() {
		return nil
	}
	prefix := ""
	if l.DecidedBy != "" && l.DecidedBy != qm.SystemActor {
		prefix = "Approved by " + l.DecidedBy + ": "
	}
	edits := []bot.Reply{b.grantedReply(ctx, l, prefix)}
	if !l.ExpiryWarnedFor.IsZero() {
		w := b.expiryOffer(ctx, l)
		w.Ref = expiringRef(l.ID)
		edits = append(edits, w)
	}
	var out []bot.Reply
	for _, who := range to {
		for _, e := range edits {
			e.To, e.Update, e.EditOnly = who, true, true
			out = append(out, e)
		}
	}
	return out
}

// outputLine says where the output of batch job l is, as its submit reply did.
func (b *Bot) outputLine(l *qm.Lease) string {
	return "Its output is in " + outputPlace(l) + "."
}

// withOutput is the end notice text of l, followed, for a batch job that ran, by where its
// output is (a job that never started, refused by the scheduler or ended in its queue, wrote none).
func (b *Bot) withOutput(l *qm.Lease, text string) string {
	if !b.batch(l) || l.StartedAt.IsZero() {
		return text
	}
	return strings.TrimRight(text, " ") + " " + b.outputLine(l)
}

// heldLine is what l's team holds now of its quota of l's class (qm.Service.HeldNow), for l's
// approval card, after a space: " Team speech holds 2 of its 2 slice GPUs now: L-1 (2,
// suspended)." Each rendering reads it afresh, so an edited card says what holds then. Empty
// where the card says nothing of it; where it cannot be read now, asked is said (what the
// team held when it was asked, or nothing). weekSaid leaves out the week's GPU-hours, which the
// card says already (the note of an approval that takes the team past its quota).
func (b *Bot) heldLine(ctx context.Context, l *qm.Lease, asked string, weekSaid bool) string {
	q, err := b.Svc.HeldNow(ctx, l)
	if err != nil {
		b.log().Error("read what a team holds, for an approval card", "lease", l.ID, "err", err)
		if asked == "" {
			return ""
		}
		return " " + asked
	}
	if q == nil || weekSaid && q.WeekOnly {
		return ""
	}
	if weekSaid {
		q.WeekLimit = 0
	}
	return " " + q.Text()
}

// RenderNotice is a notice as one message per recipient.
func (b *Bot) RenderNotice(ctx context.Context, n qm.Notice) []bot.Reply {
	ctx, typed := withTypedTexts(ctx)
	showsLease(ctx, n.Lease)
	if n.Lease != nil && n.Lease.State == qm.Denied && (n.Kind == qm.NoticeDenied || n.Kind == qm.NoticeDecided) && n.Actor != qm.SystemActor {
		showsTyped(ctx, n.Reason) // the denial's reason, as its approver typed it
	}
	return typed.mark(b.renderNotice(ctx, n))
}

func (b *Bot) renderNotice(ctx context.Context, n qm.Notice) []bot.Reply {
	if n.Kind == qm.NoticeMessage {
		return b.messageReply(n)
	}
	l := n.Lease
	id := l.ID.String()
	var base bot.Reply
	switch n.Kind {
	case qm.NoticeGranted:
		base = b.grantedReply(ctx, l, "")
	case qm.NoticeQueued:
		if n.Reason == "" {
			return nil // queued at its request: the request's own reply already says so
		}
		// Its reply said the scheduler was placing it; the scheduler now says it cannot yet
		// (Kubernetes: Unschedulable): once, why it waits.
		billed := "Nothing is billed until it runs"
		if l.CPUOnly() {
			billed = "It holds no GPU, so nothing is billed"
		}
		base = bot.Reply{Text: fmt.Sprintf("%s is %s. %s, and %s.", id, strings.TrimRight(n.Reason, "."), billed, b.comingMessage(l)),
			Actions: []bot.Action{cancelAction(id)}}
	case qm.NoticeRequeued:
		// It holds no GPU until it runs again: that time is not billed, but its GPUs stay the
		// lease's in the team's quota, since its job takes them back when it runs.
		what, next := "its workspace", "You will get a message with how to connect when it runs again."
		if b.batch(l) { // a batch job has nothing to connect to
			what, next = "its job", "You will get a message when it starts again."
		}
		held := fmt.Sprintf(" and is not billed until it runs again; the quota of team %s still counts its %s, which it takes back when it runs",
			l.Team, qm.GPUCount(l.GPUs, ""))
		if l.CPUOnly() {
			held = ""
		}
		base = bot.Reply{Text: fmt.Sprintf("%s: %s, so %s does not run now%s. %s The lease still ends %s.",
			id, n.Reason, what, held, next, b.when(l.ExpiresAt)), Actions: []bot.Action{{Label: "Release", Command: "/gpu release " + id, Style: "danger"}}}
	case qm.NoticeRestarted:
		what := "its workspace"
		if b.batch(l) {
			what = "its job"
		}
		text := fmt.Sprintf("%s: %s. What %s had not saved to storage is gone; it runs again on %s until %s.", id, n.Reason, what, b.whereText(l), b.when(l.ExpiresAt))
		if !b.batch(l) && l.Connect != "" && !strings.Contains(l.Connect, qm.NodePlaceholder) { // a batch job has nothing to connect to
			text += " Connect: " + l.Connect
		}
		base = bot.Reply{Text: text, Actions: b.leaseActions(ctx, l)}
	case qm.NoticeSuspended:
		what := "its workspace is paused: it keeps its GPUs and is billed as before"
		switch {
		case b.batch(l) && l.CPUOnly():
			what = "its job is paused"
		case b.batch(l):
			what = "its job is paused: it keeps its GPUs and is billed as before"
		}
		base = bot.Reply{Text: fmt.Sprintf("%s: %s, so %s, and you will get a message when it runs again. The lease still ends %s.",
			id, n.Reason, what, b.when(l.ExpiresAt)), Actions: []bot.Action{{Label: "Release", Command: "/gpu release " + id, Style: "danger"}}}
	case qm.NoticeApprovalRequest:
		var rules []string
		for _, m := range n.Matches {
			rules = append(rules, m.Labeled())
		}
		sec := b.card(ctx, l)
		if d := askDetails(l); d != "" {
			sec.Text = strings.ToUpper(d[:1]) + d[1:] + "."
		}
		label := "Rule"
		if len(rules) > 1 {
			label = "Rules"
		}
		held := b.heldLine(ctx, l, n.Held, false)
		if n.Reason != "" {
			// Why it comes to them now: handed over when its team left the policy.
			held += " " + strings.ToUpper(n.Reason[:1]) + n.Reason[1:] + "."
		}
		if _, near := b.dataClassNearMiss(l.DataClass, l.Team); near != "" && l.Kind != qm.KindQuota {
			// The approver can deny it with the class likely meant.
			held += " " + dataTypoText(policy.NameKey(l.DataClass), near)
		}
		ask := b.askText(l)
		if l.Kind == qm.KindQuota || strings.Contains(ask, ", which ") {
			// What is asked ends in a clause (a reason, the rounding up to whole nodes): a comma
			// sets the lease apart from it.
			ask += ","
		}
		base = bot.Reply{Ref: "approval:" + id,
			Text: fmt.Sprintf("Approval needed: %s (team %s) asks %s as %s. %s: %s.%s Decide with the buttons or /gpu approve %s, /gpu deny %s REASON.",
				l.User, l.Team, ask, id, label, strings.Join(rules, "; "), held, id, id),
			Sections: []bot.Section{sec}, Actions: approvalActions(l)}
	case qm.NoticeApproved:
		base = bot.Reply{Text: fmt.Sprintf("%s (%s) was approved by %s; it is %s.", id, b.askText(l), n.Actor, l.State)}
		if ext := b.extendedText(ctx, l); ext != "" {
			base = bot.Reply{Text: fmt.Sprintf("%s (%s) was approved by %s: %s", id, b.askText(l), n.Actor, ext)}
		}
		if l.Kind == qm.KindWorkspace && l.State == qm.Queued {
			// Approved, but the GPUs are taken: when it may start, as a queued reply says.
			wait := "unknown"
			if w, err := b.Svc.LeaseWait(ctx, l); err == nil {
				wait = waitText(w)
			}
			base = bot.Reply{Text: fmt.Sprintf("%s (%s) was approved by %s and is queued: %s.%s Predicted wait: %s. You will get a message when it starts.",
				id, b.askText(l), n.Actor, l.Reason, b.queuePlaceSentence(ctx, l), wait), Sections: []bot.Section{b.card(ctx, l)},
				Actions: []bot.Action{cancelAction(id)}}
		}
		if l.Kind == qm.KindWorkspace && l.State.Running() {
			base = b.grantedReply(ctx, l, "Approved by "+n.Actor+": ")
		}
		if l.Kind == qm.KindQuota {
			base.Text += fmt.Sprintf(" Team %s may hold %s until %s.", l.Team, qm.GPUCount(l.GPUs, "more "+l.Class), b.when(l.ExpiresAt))
		}
	case qm.NoticeDenied:
		who := n.Actor
		if who == qm.SystemActor {
			base = bot.Reply{Text: fmt.Sprintf("%s was denied: %s.", id, l.Reason)}
			if again, ok := b.askAgain(ctx, l); ok {
				base = bot.Reply{Text: fmt.Sprintf("%s was denied: %s; ask again with %s.", id, l.Reason, shownToRead(again)),
					Actions: []bot.Action{{Label: "Request again", Command: again}}}
			}
		} else {
			base = bot.Reply{Text: fmt.Sprintf("%s was denied by %s: %s.", id, who, n.Reason)}
		}
		if l.Kind == qm.KindExtension {
			// The lease it would have lengthened goes on as it was: say until when.
			if p, err := b.Svc.Get(ctx, l.Parent); err == nil && p.State.Running() {
				base.Text += fmt.Sprintf(" %s still runs until %s, as before.", p.ID, b.when(p.ExpiresAt))
			}
		}
	case qm.NoticeDecided:
		if cur, err := b.Svc.Get(ctx, l.ID); err == nil && cur.State != l.State && l.State == qm.Provisioning {
			// Approved and handed to the scheduler as the decision was written: the card says
			// what became of it (running, waiting in the scheduler's queue), as the approver's
			// reply and the requester do, not that it is still being started.
			l = cur
		}
		var what string
		noted := false // the approval's note names each limit of the quota it passes
		switch {
		case l.State == qm.Cancelled:
			what = fmt.Sprintf("%s was withdrawn (%s); nothing is left to decide.", id, l.Reason)
		case n.Actor == qm.SystemActor:
			what = fmt.Sprintf("%s expired undecided (%s) and was denied; %s was told.", id, l.Reason, l.User)
		case l.State == qm.Denied:
			what = fmt.Sprintf("%s was denied by %s at %s: %s.", id, n.Actor, l.DecidedAt.In(b.pol().Location).Format("Mon 2 Jan 15:04 MST"), n.Reason)
		default:
			what = fmt.Sprintf("%s was approved by %s at %s.", id, n.Actor, l.DecidedAt.In(b.pol().Location).Format("Mon 2 Jan 15:04 MST"))
			if n.Reason != "" { // quotaAtApproval's note
				what += " " + n.Reason
				noted = true
			}
		}
		// What the team holds now, where the card said it: as of the edit, not of the asking.
		// The note of an approval that takes the team past its quota names each limit passed,
		// the week's GPU-hours with their numbers: they are not said twice.
		what += b.heldLine(ctx, l, "", noted)
		// The edited copies keep what was asked, with the decision on top.
		sec := b.card(ctx, l)
		sec.Text = fmt.Sprintf("%s (team %s) asked %s.", l.User, l.Team, b.askWithDetails(l))
		base = bot.Reply{Ref: "approval:" + id, Update: true, Text: what, Sections: []bot.Section{sec}}
	case qm.NoticeWithdrawn:
		base = bot.Reply{Text: fmt.Sprintf("%s, your request %s, was withdrawn: %s.", id, b.askText(l), n.Reason)}
	case qm.NoticeExpired:
		if l.Kind == qm.KindQuota {
			base = bot.Reply{Text: fmt.Sprintf("%s ended: the %s, and its quota is back to %s.", id, extraGone(l), qm.GPUCount(b.Svc.QuotaFor(ctx, l.Team).GPUs[l.Class], l.Class))}
			break
		}
		if l.Kind == qm.KindExtension {
			return nil
		}
		ended := "its workspace was ended."
		if b.batch(l) {
			ended = "its job was ended. " + b.outputLine(l)
		}
		base = bot.Reply{Text: fmt.Sprintf("%s expired at %s and %s %s", id, b.when(l.EndedAt), ended, b.costLine(l))}
		if l.StartedAt.IsZero() {
			// It never ran: nothing was ended, and why it waited is what its owner needs.
			base.Text = fmt.Sprintf("%s never ran and expired at %s: %s. %s", id, b.when(l.EndedAt), strings.TrimRight(l.Reason, "."), b.costLine(l))
		}
		if again, ok := b.askAgain(ctx, l); ok {
			base.Actions = []bot.Action{{Label: "Request again", Command: again}}
		}
	case qm.NoticeExpiringSoon:
		base = b.expiryOffer(ctx, l)
		base.Ref = expiringRef(l.ID)
	case qm.NoticeExtensionChanged:
		return b.offersChanged(ctx, l, n.To)
	case qm.NoticeIdleWarning:
		grace := qm.DefaultIdleGrace
		if cls, ok := b.pol().Class(l.Class); ok {
			grace = qm.IdleGrace(cls)
		}
		idle := "no GPU activity"
		if strings.HasPrefix(l.Reason, idle) {
			idle = l.Reason // "no GPU activity for 30m"
		}
		warned := l.WarnedAt
		if warned.IsZero() {
			warned = b.Svc.Clock.Now()
		}
		base = bot.Reply{Ref: b.latestIdleRef(ctx, l), Text: fmt.Sprintf("%s has shown %s; it will be reclaimed at %s unless you keep it with /gpu keep %s.", id, idle, b.when(warned.Add(grace)), id),
			Actions: []bot.Action{keepAction(id), {Label: "Release", Command: "/gpu release " + id, Style: "danger"}}}
	case qm.NoticeReclaimMoved:
		grace := qm.DefaultIdleGrace
		if cls, ok := b.pol().Class(l.Class); ok {
			grace = qm.IdleGrace(cls)
		}
		at := l.WarnedAt.Add(grace)
		what := fmt.Sprintf("The GPUs of %s went unwatched for a while after its idle warning (their node agent stopped reporting), so it was not reclaimed at the time the warning named.", id)
		release := bot.Action{Label: "Release", Command: "/gpu release " + id, Style: "danger"}
		if !l.ExpiresAt.IsZero() && !at.Before(l.ExpiresAt) {
			base = bot.Reply{Ref: b.latestIdleRef(ctx, l), Text: fmt.Sprintf("%s Its GPUs are watched again and still idle, but a new grace would outlast the lease: it is not reclaimed, and runs until %s.", what, b.when(l.ExpiresAt)),
				Actions: []bot.Action{release}}
			break
		}
		base = bot.Reply{Ref: b.latestIdleRef(ctx, l), Text: fmt.Sprintf("%s Its GPUs are watched again and still idle; it will now be reclaimed at %s unless you keep it with /gpu keep %s.", what, b.when(at), id),
			Actions: []bot.Action{keepAction(id), release}}
	case qm.NoticeBusyAgain:
		base = bot.Reply{Text: fmt.Sprintf("%s is busy again, so it will not be reclaimed; it runs until %s.", id, b.when(l.ExpiresAt))}
	case qm.NoticeReclaimed:
		base = bot.Reply{Text: fmt.Sprintf("%s was reclaimed: %s. %.2f GPU-hours went back to the pool. %s", id, n.Reason, policy.Round(l.Reclaimed, 2), b.costLine(l))}
		base.Text = b.withOutput(l, base.Text)
	case qm.NoticeFailed:
		text := fmt.Sprintf("%s failed: %s. %s", id, l.Reason, b.costLine(l))
		if qm.RefusedByCluster(l.Reason) {
			// As the reply to a request the cluster refused at once says.
			text += " If asking again gets the same answer, send this message to your platform admins."
		}
		base = bot.Reply{Text: b.withOutput(l, text)}
		if n.Detail != "" {
			base.Sections = []bot.Section{{Title: "The last lines of its output", Text: "```\n" + strings.TrimRight(n.Detail, "\n") + "\n```"}}
		}
	case qm.NoticeFinished:
		base = bot.Reply{Text: b.withOutput(l, fmt.Sprintf("%s ended: %s. %s", id, l.Reason, b.costLine(l)))}
	case qm.NoticeTelemetryMissing:
		// Its node's agent reports, but its newest report could not judge the lease: nothing is
		// missing but what idleness is judged by, and the notice says what.
		switch n.Reason {
		case qm.UnjudgedNoUtilization:
			// A GPU it works on gives no utilization (NVML does not support it there, or its
			// reading failed).
			base = bot.Reply{Text: fmt.Sprintf("A GPU of %s (%s on %s) reports no utilization, so its idleness cannot be judged; it will not be reclaimed for idleness while that lasts.", id, l.User, l.Node)}
		case qm.UnjudgedGPUMissing:
			base = bot.Reply{Text: fmt.Sprintf("A GPU of %s (%s on %s) is missing from its node's reports (lost or unreadable), so its idleness cannot be judged; it will not be reclaimed for idleness while that lasts.", id, l.User, l.Node)}
		case qm.UnjudgedNodeGPUMissing:
			base = bot.Reply{Text: fmt.Sprintf("A GPU of %s is missing from the node's reports (lost or unreadable), and %s (%s) may work on it, so whether %s is idle cannot be judged; it will not be reclaimed for idleness while that lasts.", l.Node, id, l.User, id)}
		case qm.UnjudgedUnknownGPU:
			base = bot.Reply{Text: fmt.Sprintf("%s reports a GPU its topology does not list, and %s (%s) may work on it, so whether %s is idle cannot be judged; it will not be reclaimed for idleness until the node's agent sends a topology that lists that GPU.", l.Node, id, l.User, id)}
		case qm.UnjudgedUnplacedBusy:
			base = bot.Reply{Text: fmt.Sprintf("%s (%s on %s) has no process on any GPU, while a GPU of its node is busy with no job's process (one the node's agent could not map to its job, as when the agent is not in the host's PID namespace or /proc is mounted with hidepid; one that runs outside any job; or a graphics or MPS client on a driver that does not list them), so it cannot be told whose work that is, nor whether %s is idle; it will not be reclaimed for idleness while that lasts.", id, l.User, l.Node, id)}
		default:
			base = bot.Reply{Text: fmt.Sprintf("No GPU telemetry for %s (%s on %s), so it cannot be checked for idleness; it will not be reclaimed until telemetry returns.", id, l.User, l.Node)}
		}
	default:
		base = bot.Reply{Text: fmt.Sprintf("%s: %s", id, n.Kind)}
	}
	out := make([]bot.Reply, 0, len(n.To))
	for _, to := range n.To {
		r := base
		r.To = to
		out = append(out, r)
	}
	switch n.Kind {
	case qm.NoticeBusyAgain:
		out = append(out, b.latestWarningOver(ctx, l, fmt.Sprintf("%s was idle, then busy again, so it was not reclaimed.", id)))
	case qm.NoticeReclaimed, qm.NoticeExpired, qm.NoticeFailed, qm.NoticeFinished:
		out = append(out, b.endedWarnings(ctx, l)...)
	}
	return out
}

// askAgain is the request that asks for workspace lease l again as it was asked: its GPUs, class
// and length (as asked, without what extensions added), its template with its parameters, its
// team where its owner is in several, its data class where it is not the team's first (put right
// where it was a typo of one the policy knows, as the request's reply said), and exclusive. ok is
// false for another kind of lease, and where the class has left the catalog or the template is no
// longer installed: a Request again button would only be refused.
func (b *Bot) askAgain(ctx context.Context, l *qm.Lease) (string, bool) {
	if l.Kind == qm.KindQuota {
		return b.askQuotaAgain(ctx, l)
	}
	if l.Kind != qm.KindWorkspace {
		return "", false
	}
	if _, ok := b.pol().Class(l.Class); !ok {
		return "", false
	}
	asked := l.AskedDuration()
	cmd := fmt.Sprintf("/gpu request %d %s for %s", l.GPUs, l.Class, policy.FormatDuration(asked))
	if l.CPUOnly() { // its template says it uses no GPU: no count to give
		cmd = fmt.Sprintf("/gpu request %s for %s", l.Class, policy.FormatDuration(asked))
	}
	if l.Template != "" {
		if b.Templates == nil {
			return "", false
		}
		if _, err := b.Templates.Catalog.Get(l.Template); err != nil {
			return "", false
		}
		cmd += " template " + l.Template
		for _, k := range slices.Sorted(maps.Keys(l.Params)) {
			v := l.Params[k]
			if v == "" || strings.ContainsAny(v, " \t\"'") {
				v = strconv.Quote(v)
			}
			cmd += " " + k + "=" + v
		}
	}
	if who, err := b.Svc.Resolve(ctx, l.User); l.Team != "" && (err != nil || len(who.Teams) != 1) {
		cmd += " team " + l.Team // the team is not the one the request would fall to
	}
	dc := l.DataClass
	if _, near := b.dataClassNearMiss(dc, l.Team); near != "" {
		dc = near // the data class meant, as the request's reply put it right
	}
	if dc != "" && dc != b.Svc.DataClassesOf(l.Team)[0] {
		cmd += " data " + dc // not what a request leaving it out would get
	}
	if l.Exclusive {
		cmd += " exclusive"
	}
	return cmd, true
}
