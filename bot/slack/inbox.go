package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/bot"
)

// Inbox keeps the commands the adapter acknowledged until their work is done, so that one
// acknowledged by a process that then stopped (a crash, a kill, a shutdown that ran out of
// time) is not lost: Slack does not send an acknowledged command again. The service keeps it in
// its database (store.DB's AcceptDeliveries, ClaimDeliveries and FinishDeliveries). The adapter
// writes what arrives while a write is in flight together, in the next one.
type Inbox interface {
	// Accept keeps commands that are being acknowledged, each claimed by this process until
	// its Received + claim; kept[i] is false when a command with cmds[i]'s key is kept already.
	Accept(ctx context.Context, cmds []Accepted, claim time.Duration) (kept []bool, err error)
	// Finish forgets commands whose work is done.
	Finish(ctx context.Context, keys []string) error
	// Claim takes, until now + claim, the kept commands whose claim ran out before now.
	Claim(ctx context.Context, now time.Time, claim time.Duration) ([]Accepted, error)
}

// Accepted is a command an Inbox keeps.
type Accepted struct {
	Key      string
	Payload  []byte
	Received time.Time
}

// DefaultReplayWithin is how old an acknowledged command may be and still be run by Recover:
// Slack's response_url, where its answer goes, works for 30 minutes.
const DefaultReplayWithin = 30 * time.Minute

// acceptTimeout bounds the inbox write an acknowledgement waits for (Slack allows 3 s; the
// write takes about a millisecond on a healthy database).
const acceptTimeout = 500 * time.Millisecond

// kept is what an Inbox keeps of a command: where it came from and its text.
type kept struct {
	User        string `json:"user"`
	Team        string `json:"team,omitempty"`
	Channel     string `json:"channel,omitempty"`
	ResponseURL string `json:"response_url,omitempty"`
	Text        string `json:"text"`
}

// claim is how long a process keeps a command it accepted or recovered to itself: long enough
// to wait for a free worker and run it.
func (a *Adapter) claim() time.Duration {
	if a.cfg.InboxClaim > 0 {
		return a.cfg.InboxClaim
	}
	return a.cfg.WorkTimeout + time.Minute
}

// runKept keeps a command in the inbox (when there is one) and starts its work, which forgets
// it once done. It reports false when the inbox holds the same command already (another
// replica, or this process, took it): nothing is started then. The acknowledgement waits for the
// inbox at most acceptTimeout: a database that does not answer delays no command longer than
// that, and the command then runs unkept (it is lost only if the process also stops).
func (a *Adapter) runKept(o origin, text, key string) bool {
	var late chan bool // the inbox's answer, when it came too late to wait for: kept or not
	if a.inbox != nil && key != "" {
		payload, _ := json.Marshal(kept{User: o.user, Team: o.team, Channel: o.channel, ResponseURL: o.responseURL, Text: text})
		res := a.inbox.accept(Accepted{Key: key, Payload: payload, Received: time.Now()})
		wait := time.NewTimer(acceptTimeout)
		defer wait.Stop()
		select {
		case r := <-res:
			switch {
			case r.err != nil:
				// The command still runs; only a crash before it is done would lose it.
				a.log.Warn("could not keep a command in the inbox", "key", key, "err", r.err)
			case !r.kept:
				a.log.Info("dropped a command another process has", "key", key)
				return false
			}
		case <-wait.C:
			a.log.Warn("the inbox did not answer in time; the command runs without waiting for it", "key", key)
			late = make(chan bool, 1)
			go func() { r := <-res; late <- r.err == nil && r.kept }()
		}
	}
	a.goWork(func(ctx context.Context) {
		a.run(ctx, o, text, key)
		if late == nil {
			a.finish(key)
			return
		}
		// Forget it once it is kept, or it would stay kept and run again; the wait for a
		// database that does not answer holds up neither this worker nor a shutdown.
		go func() {
			if <-late {
				a.finish(key)
			}
		}()
	})
	return true
}

// finish forgets a command whose work is done, unless the process is stopping: work cut short
// by a shutdown is left for the next process to recover.
func (a *Adapter) finish(key string) {
	if a.inbox == nil || key == "" || a.base.Err() != nil {
		return
	}
	a.inbox.finish(key)
}

// inboxWriter writes to an Inbox from two goroutines, one for what is accepted and one for what
// is finished: whatever arrives while a write is in flight goes in the next, as one statement,
// so that a busy service pays one database commit for many commands.
type inboxWriter struct {
	in    Inbox
	claim time.Duration
	log   *slog.Logger

	mu       sync.Mutex
	accepts  []acceptWait
	finishes []string
	acceptCh chan struct{} // a nudge: accepts are waiting
	finishCh chan struct{} // a nudge: finishes are waiting
}

type acceptWait struct {
	cmd Accepted
	res chan acceptResult
}

type acceptResult struct {
	kept bool
	err  error
}

func newInboxWriter(ctx context.Context, in Inbox, claim time.Duration, log *slog.Logger) *inboxWriter {
	w := &inboxWriter{in: in, claim: claim, log: log, acceptCh: make(chan struct{}, 1), finishCh: make(chan struct{}, 1)}
	go w.acceptLoop(ctx)
	go w.finishLoop(ctx)
	return w
}

func nudge(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// accept queues a command to keep; its result arrives on the channel returned.
func (w *inboxWriter) accept(c Accepted) <-chan acceptResult {
	res := make(chan acceptResult, 1)
	w.mu.Lock()
	w.accepts = append(w.accepts, acceptWait{c, res})
	w.mu.Unlock()
	nudge(w.acceptCh)
	return res
}

// finish queues a key to forget.
func (w *inboxWriter) finish(key string) {
	w.mu.Lock()
	w.finishes = append(w.finishes, key)
	w.mu.Unlock()
	nudge(w.finishCh)
}

func (w *inboxWriter) acceptLoop(ctx context.Context) {
	for {
		select {
		case <-w.acceptCh:
		case <-ctx.Done():
			w.mu.Lock()
			left := w.accepts
			w.accepts = nil
			w.mu.Unlock()
			for _, a := range left {
				a.res <- acceptResult{err: ctx.Err()}
			}
			return
		}
		w.mu.Lock()
		batch := w.accepts
		w.accepts = nil
		w.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		cmds := make([]Accepted, len(batch))
		for i, a := range batch {
			cmds[i] = a.cmd
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		kept, err := w.in.Accept(wctx, cmds, w.claim)
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

// finishLoop forgets what is finished; when the adapter stops, it forgets what was finished
// before the stop and ends.
func (w *inboxWriter) finishLoop(ctx context.Context) {
	for {
		stopping := false
		select {
		case <-w.finishCh:
		case <-ctx.Done():
			stopping = true
		}
		w.mu.Lock()
		batch := w.finishes
		w.finishes = nil
		w.mu.Unlock()
		if len(batch) > 0 {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := w.in.Finish(wctx, batch); err != nil {
				w.log.Warn("could not forget finished commands; they may run again", "commands", len(batch), "err", err)
			}
			cancel()
		}
		if stopping {
			return
		}
	}
}

// Recover runs the commands that were acknowledged but never finished (the process that took
// them stopped first), once their claim has run out; one older than ReplayWithin is not run,
// and its sender is told so. It returns how many it took. Call it at start and then regularly
// (the service does every 30 s).
func (a *Adapter) Recover(ctx context.Context) (int, error) {
	if a.inbox == nil {
		return 0, nil
	}
	ds, err := a.inbox.in.Claim(ctx, time.Now(), a.claim())
	if err != nil {
		return 0, err
	}
	within := a.cfg.ReplayWithin
	if within <= 0 {
		within = DefaultReplayWithin
	}
	for _, d := range ds {
		var k kept
		if err := json.Unmarshal(d.Payload, &k); err != nil || k.User == "" {
			a.log.Error("dropped an unreadable command from the inbox", "key", d.Key, "err", err)
			a.finish(d.Key)
			continue
		}
		o := origin{user: k.User, team: k.Team, channel: k.Channel, responseURL: k.ResponseURL}
		key := d.Key
		if age := time.Since(d.Received); age > within {
			a.log.Warn("an acknowledged command is too old to run", "key", key, "received", d.Received)
			msg := fmt.Sprintf("Quartermaster stopped before it ran your command `%s` (sent %s UTC), and it is too late to run it now; send it again if you still want it.",
				escape(strings.ReplaceAll(k.Text, "`", "'")), d.Received.UTC().Format("2 Jan 15:04"))
			a.goWork(func(ctx context.Context) {
				a.answer(ctx, o, "", bot.Reply{Error: true, Ephemeral: true, Text: msg})
				a.finish(key)
			})
			continue
		}
		a.log.Info("running a command acknowledged before a stop", "key", key, "received", d.Received)
		a.goWork(func(ctx context.Context) {
			a.run(ctx, o, k.Text, key)
			a.finish(key)
		})
	}
	return len(ds), nil
}
