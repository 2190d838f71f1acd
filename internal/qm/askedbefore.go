package qm

import (
	"context"
	"maps"
)

// A request that waits for a budget owner may be asked again the same while it waits: a quota
// increase typed twice, a long lease asked again as no answer came. Approving both would give
// twice what was meant, so the second is answered with the first and makes nothing. A retried
// delivery of one command (its request or delivery key) is told apart before this, and answers
// as the first delivery did.

// sameAsk reports whether a and b ask for the same thing: the same kind, requester, team, class,
// GPUs (as asked and as counted), length, template and its parameters, data class, whole nodes,
// lease extended (an extension) and reason given (a quota increase). A request differing in any
// of these is another request: a quota increase asked again with another reason is asked anew.
func sameAsk(a, b *Lease) bool {
	return a.Kind == b.Kind && SameUser(a.User, b.User) && a.Team == b.Team && a.Class == b.Class &&
		a.GPUs == b.GPUs && a.AskedGPUs == b.AskedGPUs && a.Duration == b.Duration &&
		a.Template == b.Template && maps.Equal(a.Params, b.Params) && a.DataClass == b.DataClass &&
		a.Exclusive == b.Exclusive && a.Parent == b.Parent && a.Because == b.Because
}

// waitingTwin is the request that waits for a decision and asks for what l, not yet made, asks
// (sameAsk), read inside tx; nil when none does.
func waitingTwin(ctx context.Context, tx Tx, l *Lease) (*Lease, error) {
	ls, err := tx.ListLeases(ctx, LeaseFilter{Kind: l.Kind, User: l.User, Team: l.Team, Class: l.Class, States: []State{PendingApproval}})
	if err != nil {
		return nil, err
	}
	for _, w := range ls {
		if sameAsk(w, l) {
			return w, nil
		}
	}
	return nil, nil
}
