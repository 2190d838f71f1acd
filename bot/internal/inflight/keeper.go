package inflight

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/acme/quartermaster/bot"
)

// AcceptTimeout bounds the inbox write an acknowledgement waits for (Slack and Discord allow 3 s;
// the write takes about a millisecond on a healthy database).
const AcceptTimeout = 500 * time.Millisecond

// Keeper writes to a bot.Inbox from two goroutines, one for what is accepted and one for what is
// finished: whatever arrives while a write is in flight goes in the next, as one statement, so
// that a busy service pays one database commit for many commands.
type Keeper struct {
	in    bot.Inbox
	claim time.Duration
	log   *slog.Logger
	base  context.Context
	// sleep waits between tries to forget what is finished (Sleep; tests record it instead).
	sleep func(ctx context.Context, d time.Duration) error

	mu       sync.Mutex
	accepts  []acceptWait
	finishes []string
	acceptCh chan struct{} // a nudge: accepts are waiting
	finishCh chan struct{} // a nudge: finishes are waiting
}

type acceptWait struct {
	cmd bot.Accepted
	res chan acceptResult
}

type acceptResult struct {
	kept bool
	err  error
}

// NewKeeper starts writing to in until base ends; claim is how long this process keeps a command
// it accepted or recovered to itself.
func NewKeeper(base context.Context, in bot.Inbox, claim time.Duration, log *slog.Logger) *Keeper {
	return newKeeper(base, in, claim, log, Sleep)
}

func newKeeper(base context.Context, in bot.Inbox, claim time.Duration, log *slog.Logger, sleep func(context.Context, time.Duration) error) *Keeper {
	k := &Keeper{in: in, claim: claim, log: log, base: base, sleep: sleep, acceptCh: make(chan struct{}, 1), finishCh: make(chan struct{}, 1)}
	go k.acceptLoop(base)
	go k.finishLoop(base)
	return k
}

// Kept is a command Keep took: pass it to Finish once its work is done.
type Kept struct {
	key  string
	late chan bool // the inbox's answer when it came too late to wait for: kept or not
}

// Keep keeps c, waiting for the inbox at most AcceptTimeout: a database that does not answer
// delays no command longer than that, and the command then runs unkept (it is lost only if the
// process also stops). It reports false when the inbox holds a command with c's key already
// (another replica, or this process, took it): nothing is to be run then.
func (k *Keeper) Keep(c bot.Accepted) (Kept, bool) {
	kt := Kept{key: c.Key}
	res := k.accept(c)
	wait := time.NewTimer(AcceptTimeout)
	defer wait.Stop()
	select {
	case r := <-res:
		switch {
		case r.err != nil:
			// The command still runs; only a crash before it is done would lose it.
			k.log.Warn("could not keep a command in the inbox", "key", c.Key, "err", r.err)
		case !r.kept:
			k.log.Info("dropped a command another process has", "key", c.Key)
			return kt, false
		}
	case <-wait.C:
		k.log.Warn("the inbox did not answer in time; the command runs without waiting for it", "key", c.Key)
		kt.late = make(chan bool, 1)
		go func() { r := <-res; kt.late <- r.err == nil && r.kept }()
	}
	return kt, true
}

// Own keeps c only when the inbox says, within wait, that it kept it: it reports true only then.
// It is for what is delivered to every replica at once (Discord's gateway), where keeping is how
// one replica is chosen: an inbox that fails, or does not answer in time, chooses none, and a
// replica that ran it anyway could be one of several (Keep's fallback, to run unkept, is for a
// delivery made to one process only). A claim the inbox keeps after wait is forgotten as any
// other once it runs out.
func (k *Keeper) Own(c bot.Accepted, wait time.Duration) bool {
	res := k.accept(c)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case r := <-res:
		switch {
		case r.err != nil:
			k.log.Warn("could not claim a delivery in the inbox; left alone, as another replica may have it", "key", c.Key, "err", r.err)
			return false
		case !r.kept:
			k.log.Info("dropped a delivery another process has", "key", c.Key)
			return false
		}
		return true
	case <-t.C:
		k.log.Warn("the inbox did not answer a claim in time; left alone, as another replica may have it", "key", c.Key, "waited", wait)
		return false
	}
}

// Taken is a command Claim returned, to pass to Finish once its work is done.
func Taken(key string) Kept { return Kept{key: key} }

// Finish forgets a command whose work is done, unless the adapter is stopping: work cut short by
// a shutdown is left for the next process to recover. One whose keeping answered late is
// forgotten once it is kept (or it would stay kept and run again), without holding up the caller.
// A nil Keeper (an adapter without an inbox) forgets nothing.
func (k *Keeper) Finish(kt Kept) {
	if k == nil || kt.key == "" || k.base.Err() != nil {
		return
	}
	if kt.late == nil {
		k.finish(kt.key)
		return
	}
	go func() {
		if <-kt.late && k.base.Err() == nil {
			k.finish(kt.key)
		}
	}()
}

// Claim takes, until now plus the claim, the kept commands whose claim ran out before now: those
// of a process that stopped before their work was done. A nil Keeper has none.
func (k *Keeper) Claim(ctx context.Context, now time.Time) ([]bot.Accepted, error) {
	if k == nil {
		return nil, nil
	}
	return k.in.Claim(ctx, now, k.claim)
}

func nudge(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// accept queues a command to keep; its result arrives on the channel returned.
func (k *Keeper) accept(c bot.Accepted) <-chan acceptResult {
	res := make(chan acceptResult, 1)
	k.mu.Lock()
	k.accepts = append(k.accepts, acceptWait{c, res})
	k.mu.Unlock()
	nudge(k.acceptCh)
	return res
}

// finish queues a key to forget.
func (k *Keeper) finish(key string) {
	k.mu.Lock()
	k.finishes = append(k.finishes, key)
	k.mu.Unlock()
	nudge(k.finishCh)
}

func (k *Keeper) acceptLoop(ctx context.Context) {
	for {
		select {
		case <-k.acceptCh:
		case <-ctx.Done():
			k.mu.Lock()
			left := k.accepts
			k.accepts = nil
			k.mu.Unlock()
			for _, a := range left {
				a.res <- acceptResult{err: ctx.Err()}
			}
			return
		}
		k.mu.Lock()
		batch := k.accepts
		k.accepts = nil
		k.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		cmds := make([]bot.Accepted, len(batch))
		for i, a := range batch {
			cmds[i] = a.cmd
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		kept, err := k.in.Accept(wctx, cmds, k.claim)
		cancel()
		for i, a := range batch {
			r := acceptResult{err: err}
			if err == nil && i < len(kept) {
				r.kept = kept[i]
			}
			a.res <- r
		}
	}
}

// Pauses between tries to forget finished commands while the inbox fails.
const (
	firstFinishPause = 250 * time.Millisecond
	maxFinishPause   = 5 * time.Second
)

// finishLoop forgets what is finished; when the adapter stops, it forgets what was finished
// before the stop and ends. While the inbox cannot forget (the database is down) it tries again,
// with growing pauses, until the claim has run out: a finished command left kept would be run
// again once its claim lapsed, and answered twice (its sender may have been told that it failed
// because the database could not be reached, and sent it again meanwhile).
func (k *Keeper) finishLoop(ctx context.Context) {
	var retry []string              // finished, not yet forgotten
	var pause, waited time.Duration // the next pause, and the pauses so far, while retry is not empty
	for {
		stopping := false
		if len(retry) == 0 {
			select {
			case <-k.finishCh:
			case <-ctx.Done():
				stopping = true
			}
		} else if k.sleep(ctx, pause) != nil {
			stopping = true
		}
		k.mu.Lock()
		batch := append(retry, k.finishes...)
		k.finishes = nil
		k.mu.Unlock()
		retry = nil
		if len(batch) > 0 {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err := k.in.Finish(wctx, batch)
			cancel()
			switch {
			case err == nil:
				pause, waited = 0, 0
			case stopping || waited >= k.claim:
				k.log.Warn("could not forget finished commands; they may run again", "commands", len(batch), "err", err)
				pause, waited = 0, 0
			default:
				if pause == 0 {
					k.log.Warn("could not forget finished commands; trying again", "commands", len(batch), "err", err)
				}
				retry = batch
				pause = min(max(2*pause, firstFinishPause), maxFinishPause)
				waited += pause
			}
		}
		if stopping {
			return
		}
	}
}
