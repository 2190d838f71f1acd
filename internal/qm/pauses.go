package qm

import (
	"sort"
	"time"
)

// PauseKind says why a running lease's workspace did not run for a while.
type PauseKind string

// Kinds of pause. A requeued job gave its GPUs back to the scheduler and waits in its queue: the
// lease holds no GPU meanwhile, and that time is not billed. A suspended (or stopped) job keeps
// its GPUs: the lease holds them and is billed as before.
const (
	PauseRequeued  PauseKind = "requeued"
	PauseSuspended PauseKind = "suspended"
)

// Pause is a span in which a running lease's workspace did not run because the scheduler put its
// job back in its queue or suspended it: from when the service saw it to when the job ran again
// or the lease ended. To is zero while it lasts.
type Pause struct {
	Kind     PauseKind
	From, To time.Time
}

// Unbilled reports whether the lease holds no GPU during the pause: its job waited in the
// scheduler's queue.
func (p Pause) Unbilled() bool { return p.Kind == PauseRequeued }

// openPause is the pause l is in, nil when none lasts.
func openPause(l *Lease) *Pause {
	if n := len(l.Pauses); n > 0 && l.Pauses[n-1].To.IsZero() {
		return &l.Pauses[n-1]
	}
	return nil
}

// recordedPause reports whether l is in a recorded pause of kind (not one known by its reason
// alone, which markHalted records).
func recordedPause(l *Lease, kind PauseKind) bool {
	p := openPause(l)
	return p != nil && p.Kind == kind
}

// paused is the kind of pause a running lease is in ("" when its workspace runs). A lease paused
// before pauses were recorded is known by its reason alone.
func paused(l *Lease) PauseKind {
	if l.State != Active && l.State != IdleWarned {
		return ""
	}
	if p := openPause(l); p != nil {
		return p.Kind
	}
	return legacyPause(l)
}

// legacyPause is the kind of pause a running lease's reason says it is in, for a lease paused
// before pauses were recorded (which has no open pause).
func legacyPause(l *Lease) PauseKind {
	switch {
	case runningWith(l, reasonRequeued):
		return PauseRequeued
	case runningWith(l, reasonSuspended):
		return PauseSuspended
	}
	return ""
}

// beginPause records that l's workspace stopped running at at, for kind: a pause of another kind
// that lasts ends then.
func beginPause(l *Lease, kind PauseKind, at time.Time) {
	endPause(l, at)
	l.Pauses = append(l.Pauses, Pause{Kind: kind, From: at})
}

// endPause ends the pause l is in, if any, at at (never before it began).
func endPause(l *Lease, at time.Time) {
	if p := openPause(l); p != nil {
		if at.Before(p.From) {
			at = p.From
		}
		p.To = at
	}
}

// UnbilledFor is how much of [from, to) l's job spent back in the scheduler's queue after a
// requeue, holding no GPU; a pause that still lasts counts up to to. Each instant counts once,
// however many recorded pauses hold it: two replicas whose clocks are apart can record a requeue
// as beginning before the one before it ended, and a second not billed is not taken off twice.
// So it is never more than to - from, and grows no faster than to does.
func UnbilledFor(l *Lease, from, to time.Time) time.Duration {
	type span struct{ a, b time.Time }
	var spans []span
	for _, p := range l.Pauses {
		if !p.Unbilled() {
			continue
		}
		a, b := p.From, p.To
		if b.IsZero() || b.After(to) {
			b = to
		}
		if a.Before(from) {
			a = from
		}
		if b.After(a) {
			spans = append(spans, span{a, b})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].a.Before(spans[j].a) })
	var d time.Duration
	var upTo time.Time // the end of the spans counted so far
	for _, s := range spans {
		if s.a.Before(upTo) {
			s.a = upTo
		}
		if s.b.After(s.a) {
			d += s.b.Sub(s.a)
			upTo = s.b
		}
	}
	return d
}

// BilledUntil is the instant up to which l is billed, as of now: the earlier of now, its end and
// its expiry (a lease past its expiry that nothing has ended yet is billed up to its expiry; one
// ended later than its expiry, up to its end). Chat's cost so far and the showback both bill by it.
func BilledUntil(l *Lease, now time.Time) time.Time {
	switch {
	case !l.EndedAt.IsZero():
		return minTime(now, l.EndedAt)
	case !l.ExpiresAt.IsZero():
		return minTime(now, l.ExpiresAt)
	}
	return now
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// HeldFor is how long l held its GPUs within [from, to): the part of it after the lease started
// and before it is billed until (BilledUntil: its end, or its expiry while nothing has ended it),
// less the time its job waited in the scheduler's queue after a requeue. It is what a lease is
// billed for and counts in GPU-hours, and, for from at its start, adds up over any split of
// [from, to).
func HeldFor(l *Lease, from, to time.Time) time.Duration {
	if l.StartedAt.IsZero() {
		return 0
	}
	if from.Before(l.StartedAt) {
		from = l.StartedAt
	}
	to = BilledUntil(l, to)
	if !to.After(from) {
		return 0
	}
	return to.Sub(from) - UnbilledFor(l, from, to)
}
