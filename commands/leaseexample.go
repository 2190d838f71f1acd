package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/quartermaster/internal/qm"
)

// leasePlaceholder stands, in the example of a refusal for a missing or malformed lease id, for a
// lease of the asker's own: Handle fills it in (ownLeaseExample), as it knows who asks.
const leasePlaceholder = "{lease}"

// leaseExamples are the examples of the commands that take a lease id, for refusals.
var leaseExamples = map[string]string{
	"status":  "/gpu status " + leasePlaceholder,
	"extend":  "/gpu extend " + leasePlaceholder + " 2h",
	"keep":    "/gpu keep " + leasePlaceholder,
	"release": "/gpu release " + leasePlaceholder,
	"cancel":  "/gpu cancel " + leasePlaceholder,
	"approve": "/gpu approve " + leasePlaceholder,
	"deny":    "/gpu deny " + leasePlaceholder + " use the {class} class",
}

// leaseExample is the example of a refusal of verb for its lease id.
func leaseExample(verb string) string {
	if ex, ok := leaseExamples[verb]; ok {
		return ex
	}
	if s, ok := Lookup(verb); ok && len(s.Examples) > 0 {
		return s.Examples[0]
	}
	return "/gpu list"
}

// decides reports whether verb decides a request waiting for a budget owner.
func decides(verb string) bool { return verb == "approve" || verb == "deny" }

// leaseList is the command that lists the leases verb may name: one's own, or, for a decision,
// the requests waiting for one's decision.
func leaseList(verb string) string {
	if decides(verb) {
		return "/gpu approvals"
	}
	return "/gpu list"
}

// missingLease is the refusal of a command that lacks its lease id: the sentence format says,
// where to find one, and an example naming a lease of the asker's (ownLeaseExample).
func missingLease(verb, format string, args ...any) *qm.Error {
	where := "/gpu list shows yours."
	if decides(verb) {
		where = "/gpu approvals shows those waiting for your decision."
	}
	return qm.Invalid(leaseExample(verb), "%s; %s", fmt.Sprintf(format, args...), where)
}

// ownLeaseExample fills the lease placeholder of err's example with a lease user may name in
// verb (exampleLease); with none, or with user unknown (known false), the example is the list
// of such leases instead (/gpu list, /gpu approvals).
func (b *Bot) ownLeaseExample(ctx context.Context, user string, known bool, verb string, err error) error {
	var e *qm.Error
	if !errors.As(err, &e) || !strings.Contains(e.Example, leasePlaceholder) {
		return err
	}
	if known {
		if id := b.exampleLease(ctx, user, verb); id != 0 {
			return e.WithExample(strings.ReplaceAll(e.Example, leasePlaceholder, id.String()))
		}
	}
	return e.WithExample(leaseList(verb))
}

// typedLeaseExample is err with an example that names no lease user may not name in c's verb:
// where the example repeats the lease typed (a malformed duration or reason after it) and that
// lease is another's, does not exist, or no longer fits the command, the example names one of
// user's own instead (ownLeaseExample fills it in), so that, typed back, it works; another's
// lease is answered as one that does not exist.
func (b *Bot) typedLeaseExample(ctx context.Context, user string, known bool, c Command, err error) error {
	var e *qm.Error
	if c.Lease == 0 || !errors.As(err, &e) {
		return err
	}
	typed := "/gpu " + c.Verb + " " + c.Lease.String()
	if e.Example != typed && !strings.HasPrefix(e.Example, typed+" ") {
		return err
	}
	if known && b.mayName(ctx, user, c.Verb, c.Lease) {
		return err
	}
	return e.WithExample("/gpu " + c.Verb + " " + leasePlaceholder + strings.TrimPrefix(e.Example, typed))
}

// mayName reports whether id is a lease user may name in verb: one of the leases exampleLease
// chooses from.
func (b *Bot) mayName(ctx context.Context, user, verb string, id qm.LeaseID) bool {
	var ls []*qm.Lease
	var err error
	if decides(verb) {
		ls, err = b.Svc.Pending(ctx, user)
	} else {
		ls, err = b.Svc.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, User: user})
	}
	if err != nil {
		return true // not known now: the lease typed stays, and the command judges it
	}
	fits := leaseFits(verb, ls)
	for _, l := range ls {
		if l.ID == id {
			return decides(verb) || verb == "status" || fits(l)
		}
	}
	return false
}

// leaseFits is what a lease of one's own (of ls, all of them) must be for verb to act on it
// (approvals aside): to be extended, a live workspace none of whose extensions still waits for
// a decision.
func leaseFits(verb string, ls []*qm.Lease) func(*qm.Lease) bool {
	switch verb {
	case "keep":
		return func(l *qm.Lease) bool { return l.Kind == qm.KindWorkspace && l.State == qm.IdleWarned }
	case "extend":
		waiting := map[qm.LeaseID]bool{}
		for _, e := range ls {
			if e.Kind == qm.KindExtension && e.State == qm.PendingApproval {
				waiting[e.Parent] = true
			}
		}
		return func(l *qm.Lease) bool { return l.Kind == qm.KindWorkspace && l.State.Live() && !waiting[l.ID] }
	case "cancel":
		return func(l *qm.Lease) bool { return l.State == qm.PendingApproval || l.State == qm.Queued }
	}
	return func(l *qm.Lease) bool { return l.State.Live() && l.Kind != qm.KindExtension }
}

// exampleLease is the lease user would most likely mean in verb, or 0: for approve and deny, the
// latest request waiting for user's decision; for keep, user's latest workspace warned as idle; for
// extend, user's latest live workspace; for cancel, user's latest lease that still waits; for the others, user's latest live lease, and for status, else user's latest lease of any state (the
// others cannot act on a lease that has ended).
func (b *Bot) exampleLease(ctx context.Context, user, verb string) qm.LeaseID {
	if decides(verb) {
		ls, err := b.Svc.Pending(ctx, user)
		if err != nil {
			return 0
		}
		return latest(ls, func(*qm.Lease) bool { return true })
	}
	ls, err := b.Svc.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, User: user})
	if err != nil {
		return 0
	}
	if id := latest(ls, leaseFits(verb, ls)); id != 0 || verb != "status" {
		return id
	}
	return latest(ls, func(*qm.Lease) bool { return true })
}

// latest is the id of the newest lease of ls that ok accepts, or 0.
func latest(ls []*qm.Lease, ok func(*qm.Lease) bool) qm.LeaseID {
	var id qm.LeaseID
	for _, l := range ls {
		if ok(l) && l.ID > id {
			id = l.ID
		}
	}
	return id
}
