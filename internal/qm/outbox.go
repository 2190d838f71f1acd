package qm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// The durable outbox. With Service.Outbox set, every notice is written, one row per recipient, in
// the same transaction as the change that causes it, and delivered from there: at once after the
// commit by the process that made the change, and by DeliverNotices (the sender loop of every
// replica) for whatever is left, after a crash, a failed delivery, or on another replica. Rows of
// one lease and recipient go out in order; a row another sender holds is left to it until its
// claim lapses. Without an Outbox (tests, the console) notices are delivered directly after the
// commit.

// Outbox hands out the notices the transactions wrote.
type Outbox interface {
	// ClaimNotices claims up to limit notices that are due at now and that no live claim holds,
	// the oldest unsent one of each lease and recipient only, for hold; with ids, only among those.
	ClaimNotices(ctx context.Context, owner string, ids []int64, now time.Time, limit int, hold time.Duration) ([]QueuedNotice, error)
	// NoticeSent marks a claimed notice delivered.
	NoticeSent(ctx context.Context, id int64, at time.Time) error
	// NoticeFailed gives a claimed notice back, to be tried again at retryAt.
	NoticeFailed(ctx context.Context, id int64, retryAt time.Time, reason string) error
}

// QueuedNotice is one claimed row of the outbox.
type QueuedNotice struct {
	ID       int64
	Notice   Notice
	Attempts int
	// Again is set when an earlier claim lapsed without the notice being marked sent or failed:
	// its sender stopped mid-delivery, so this delivery may repeat one that happened.
	Again bool
	// Queued is when the notice was written to the outbox.
	Queued time.Time
}

// Outbox defaults.
const (
	// NoticeHold is how long a claim holds a notice: longer than any delivery takes, rate-limit
	// waits included; a delivery still waiting noticeMargin before its claim lapses is given up
	// (and the notice given back), so that no other sender takes the notice while it goes out.
	NoticeHold = 2 * time.Minute
	// noticeMargin is how long before its claim lapses a delivery is given up: time to record
	// the outcome.
	noticeMargin = 15 * time.Second
	// noticeBatch is how many notices one claim takes.
	noticeBatch = 64
	// NoticeGiveUp is how long a notice that cannot be delivered is tried again before it is given
	// up (and logged): a chat platform's outage of some hours loses nothing.
	NoticeGiveUp = 24 * time.Hour
	// noticeSenders bounds how many recipients are written to at once.
	noticeSenders = 8
)

// noticeJSON is a notice as the outbox keeps it.
type noticeJSON struct {
	Kind      NoticeKind `json:"kind"`
	To        []string   `json:"to"`
	Lease     *Lease     `json:"lease"`
	Actor     string     `json:"actor,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Matches   []match    `json:"matches,omitempty"`
	Approvers []string   `json:"approvers,omitempty"`
	Detail    string     `json:"detail,omitempty"`
	Held      string     `json:"held,omitempty"`
	Message   []byte     `json:"message,omitempty"`
}

type match struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

// EncodeNotice writes a notice (with a copy of its lease as it was) for the outbox.
func EncodeNotice(n Notice) ([]byte, error) {
	j := noticeJSON{Kind: n.Kind, To: n.To, Lease: n.Lease, Actor: n.Actor, Reason: n.Reason, Approvers: n.Approvers, Detail: n.Detail, Held: n.Held, Message: n.Message}
	for _, m := range n.Matches {
		j.Matches = append(j.Matches, match{m.Rule, m.Why})
	}
	return json.Marshal(j)
}

// DecodeNotice reads a notice EncodeNotice wrote.
func DecodeNotice(b []byte) (Notice, error) {
	var j noticeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return Notice{}, fmt.Errorf("qm: a notice in the outbox cannot be read: %w", err)
	}
	if j.Lease == nil && j.Kind != NoticeMessage {
		return Notice{}, fmt.Errorf("qm: a notice in the outbox has no lease")
	}
	n := Notice{Kind: j.Kind, To: j.To, Lease: j.Lease, Actor: j.Actor, Reason: j.Reason, Approvers: j.Approvers, Detail: j.Detail, Held: j.Held, Message: j.Message}
	for _, m := range j.Matches {
		n.Matches = append(n.Matches, policyMatch(m.Rule, m.Why))
	}
	return n, nil
}

func policyMatch(rule, why string) policy.Match { return policy.Match{Rule: rule, Why: why} }

// extensionChanges is ns with, after each notice that an extension waits for a decision or no
// longer does (its approvers' request, or the edit of their copies once it is decided,
// withdrawn or expired), a NoticeExtensionChanged to the owner of the lease it extends, while
// that lease runs: every way an extension starts or stops waiting passes here, so the lease's
// earlier messages follow each of them.
func (s *Service) extensionChanges(ctx context.Context, tx Tx, ns []Notice) ([]Notice, error) {
	out := make([]Notice, 0, len(ns))
	for _, n := range ns {
		out = append(out, n)
		if n.Lease == nil || n.Lease.Kind != KindExtension || (n.Kind != NoticeApprovalRequest && n.Kind != NoticeDecided) {
			continue
		}
		p, err := tx.GetLease(ctx, n.Lease.Parent)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if p.State.Running() {
			out = append(out, Notice{Kind: NoticeExtensionChanged, To: []string{p.User}, Lease: p})
		}
	}
	return out, nil
}

// batch is what one transaction staged: outbox rows, or (without an outbox) the notices
// themselves. A transaction that is run again starts a new batch.
type batch struct {
	ids    []int64
	direct []Notice
}

// stage writes notices into the outbox inside tx (one row per recipient), or keeps them for
// delivery after the commit when there is no outbox.
func (s *Service) stage(ctx context.Context, tx Tx, b *batch, ns ...Notice) error {
	if s.Notifier == nil {
		return nil
	}
	ns, err := s.extensionChanges(ctx, tx, ns)
	if err != nil {
		return err
	}
	if s.Outbox == nil {
		b.direct = append(b.direct, ns...)
		return nil
	}
	var rows []Notice
	for _, n := range ns {
		for _, to := range n.To {
			one := n
			one.To = []string{to}
			rows = append(rows, one)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	ids, err := tx.AddNotices(ctx, rows, s.Clock.Now())
	if err != nil {
		return err
	}
	b.ids = append(b.ids, ids...)
	return nil
}

// send delivers what a committed transaction staged: its outbox rows now (whatever cannot go now
// is left to the sender loop), or the notices directly.
func (s *Service) send(ctx context.Context, b *batch) {
	if len(b.direct) > 0 {
		s.notify(ctx, b.direct)
	}
	if len(b.ids) == 0 {
		return
	}
	if !s.DeliverInBackground {
		s.deliverAll(ctx, b.ids)
		return
	}
	ids := b.ids
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		// The command may be answered and its context ended before the notices go; the claim's
		// hold bounds the delivery, after which the sender loop takes over.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), NoticeHold)
		defer cancel()
		s.deliverAll(ctx, ids)
	}()
}

// deliverAll delivers the outbox rows ids: a pass takes only the oldest unsent row of each lease
// and recipient, so that they go out in order, and passes follow while one sends something, so
// that several notices to one recipient written together all go out now. What cannot go now (a
// delivery failed, and the rows behind it) is left to the sender loop.
func (s *Service) deliverAll(ctx context.Context, ids []int64) {
	for {
		n, err := s.deliver(ctx, ids)
		if err != nil {
			s.log().Warn("notices left for the sender loop", "err", err)
			return
		}
		if n == 0 || ctx.Err() != nil {
			return
		}
	}
}

// SendQueued delivers the outbox rows ids, written and committed outside the service's own
// transactions (what a change of someone's groups means, queued as it is marked told), as the
// service delivers those of its own: at once, in the background where DeliverInBackground is set;
// whatever cannot go now is left to the sender loop.
func (s *Service) SendQueued(ctx context.Context, ids []int64) {
	s.send(ctx, &batch{ids: ids})
}

// Tell queues notices made outside the service's own transactions (the replies of a command a
// login link resumed, to others than who ran it) in the outbox, in a transaction of their own,
// and delivers them as the service delivers its own: a chat platform that is down delays them,
// retried by the sender loop, instead of losing them. Without an outbox they are delivered at
// once.
func (s *Service) Tell(ctx context.Context, ns ...Notice) error {
	if len(ns) == 0 || s.Notifier == nil {
		return nil
	}
	if s.Outbox == nil {
		s.notify(ctx, ns)
		return nil
	}
	var b batch
	if err := s.Store.Update(ctx, nil, func(tx Tx) error {
		b = batch{}
		return s.stage(ctx, tx, &b, ns...)
	}); err != nil {
		return err
	}
	s.send(ctx, &b)
	return nil
}

// WaitNotices waits until the notices being delivered in the background are delivered or left
// to the sender loop, or until ctx ends.
func (s *Service) WaitNotices(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// noticeStats counts what the outbox sender saw.
type noticeStats struct {
	sent, failed, repeats atomic.Int64
}

// NoticeRepeats is how many notices this process delivered again after an earlier sender's
// claim lapsed mid-delivery (each may have reached its recipient twice).
func (s *Service) NoticeRepeats() int64 { return s.stats.repeats.Load() }

// NoticesSent is how many notices this process delivered from the outbox.
func (s *Service) NoticesSent() int64 { return s.stats.sent.Load() }

// DeliverNotices sends what is due in the outbox, in order per lease and recipient, until nothing
// is left that this sender may take now, and says how many it sent. The sender loop of every
// replica calls it; several replicas never send one notice twice while their claims hold.
func (s *Service) DeliverNotices(ctx context.Context) (int, error) {
	if s.Outbox == nil {
		return 0, nil
	}
	total := 0
	for {
		n, err := s.deliver(ctx, nil)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// deliver claims one batch (among ids when given) and delivers it; it returns how many it sent.
func (s *Service) deliver(ctx context.Context, ids []int64) (int, error) {
	if s.Outbox == nil || s.Notifier == nil {
		return 0, nil
	}
	now := s.Clock.Now()
	// The deliveries end before the claim lapses (it is taken after this, so it ends after
	// NoticeHold from here): a notice is never with two senders at once.
	sendCtx, cancel := context.WithTimeout(ctx, NoticeHold-noticeMargin)
	defer cancel()
	claimed, err := s.Outbox.ClaimNotices(ctx, s.senderName(), ids, now, noticeBatch, NoticeHold)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	// One goroutine per lease and recipient keeps their order; different ones go out at once.
	groups := map[string][]QueuedNotice{}
	var order []string
	for _, q := range claimed {
		k := fmt.Sprintf("%d/%v", q.Notice.LeaseID(), q.Notice.To)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], q)
	}
	var sent atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, noticeSenders)
	for _, k := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func(qs []QueuedNotice) {
			defer wg.Done()
			defer func() { <-sem }()
			for _, q := range qs {
				if s.deliverOne(ctx, sendCtx, q) {
					sent.Add(1)
				}
			}
		}(groups[k])
	}
	wg.Wait()
	return int(sent.Load()), nil
}

// deliverOne sends one claimed notice, within sendCtx, and records the outcome.
func (s *Service) deliverOne(ctx, sendCtx context.Context, q QueuedNotice) bool {
	if q.Again {
		s.stats.repeats.Add(1)
		s.log().Warn("delivering a notice again after its sender stopped mid-delivery", "outbox", q.ID, "lease", q.Notice.LeaseID(), "kind", q.Notice.Kind)
	}
	err := s.notifyErr(sendCtx, q.Notice)
	now := s.Clock.Now()
	if err == nil {
		s.markSent(ctx, q.ID, now)
		s.stats.sent.Add(1)
		return true
	}
	s.stats.failed.Add(1)
	if !q.Queued.IsZero() && now.Sub(q.Queued) >= NoticeGiveUp {
		s.log().Error("giving up on a notice", "outbox", q.ID, "lease", q.Notice.LeaseID(), "to", q.Notice.To, "attempts", q.Attempts, "err", err)
		if err := s.Outbox.NoticeSent(ctx, q.ID, now); err != nil {
			s.log().Error("mark a notice given up", "outbox", q.ID, "err", err)
		}
		return false
	}
	retry := now.Add(min(time.Duration(1<<min(q.Attempts, 9))*time.Second, 10*time.Minute))
	s.log().Warn("a notice could not be delivered; it will be tried again", "outbox", q.ID, "to", q.Notice.To, "attempt", q.Attempts, "retry_at", retry, "err", err)
	msg := err.Error()
	s.untilStored(ctx, "give a notice back; it will be tried again when its claim lapses", q.ID, func(ctx context.Context) error {
		return s.Outbox.NoticeFailed(ctx, q.ID, retry, msg)
	})
	return false
}

// senderName names this process's claims.
func (s *Service) senderName() string {
	if s.SenderName != "" {
		return s.SenderName
	}
	return "quartermaster"
}

// markSent records a delivered notice as sent (see untilStored): a notice left unmarked would be
// sent again once its claim lapsed.
func (s *Service) markSent(ctx context.Context, id int64, at time.Time) {
	s.untilStored(ctx, "mark a notice sent; it will be sent again when its claim lapses", id, func(ctx context.Context) error {
		return s.Outbox.NoticeSent(ctx, id, at)
	})
}

// untilStored records the outcome of notice id's delivery with store. While the database cannot
// take it (down, or restarting) it tries again in the background, for as long as the claim holds
// with room to spare, without holding up the caller; failing that, the claim lapses and the
// sender loop takes the notice again (failed says what that means, for the log).
func (s *Service) untilStored(ctx context.Context, failed string, id int64, store func(context.Context) error) {
	if err := store(ctx); err == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		start := time.Now()
		pause := 250 * time.Millisecond
		for {
			time.Sleep(pause)
			err := store(ctx)
			if err == nil {
				return
			}
			if time.Since(start)+pause > NoticeHold/2 {
				s.log().Error(failed, "outbox", id, "err", err)
				return
			}
			pause = min(2*pause, 5*time.Second)
		}
	}()
}
