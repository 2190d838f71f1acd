// Package qmtest holds test doubles of the domain's ports that several packages' tests share.
package qmtest

import (
	"context"
	"sync"

	"github.com/acme/quartermaster/internal/qm"
)

// NoticeLog is a qm.Notifier that records every notice, with a copy of its lease as it was then.
type NoticeLog struct {
	mu  sync.Mutex
	got []qm.Notice
}

// Notify records n.
func (n *NoticeLog) Notify(_ context.Context, no qm.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if no.Lease != nil {
		c := *no.Lease
		no.Lease = &c
	}
	n.got = append(n.got, no)
}

// Len is how many notices were sent.
func (n *NoticeLog) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.got)
}

// Kinds lists the kinds of the notices about a lease, in order.
func (n *NoticeLog) Kinds(id qm.LeaseID) []qm.NoticeKind {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []qm.NoticeKind
	for _, no := range n.got {
		if no.Lease != nil && no.Lease.ID == id {
			out = append(out, no.Kind)
		}
	}
	return out
}

// Of lists the notices of one kind about a lease.
func (n *NoticeLog) Of(kind qm.NoticeKind, id qm.LeaseID) []qm.Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []qm.Notice
	for _, no := range n.got {
		if no.Kind == kind && no.Lease != nil && no.Lease.ID == id {
			out = append(out, no)
		}
	}
	return out
}
