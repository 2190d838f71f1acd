package slack

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/internal/inflight"
)

// DefaultReplayWithin is how old an acknowledged command may be and still be run by Recover:
// Slack's response_url, where its answer goes, works for 30 minutes.
const DefaultReplayWithin = 30 * time.Minute

// kept is what the inbox keeps of a command: where it came from and its text.
type kept struct {
	User        string `json:"user"`
	Team        string `json:"team,omitempty"`
	Channel     string `json:"channel,omitempty"`
	ResponseURL string `json:"response_url,omitempty"`
	Text        string `json:"text"`
	Click       string `json:"click,omitempty"` // the button's key, for a click
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
// replica, or this process, took it): nothing is started then. The acknowledgement waits for
// the inbox at most inflight.AcceptTimeout (see inflight.Keeper.Keep).
func (a *Adapter) runKept(o origin, text, key string) bool {
	var kt inflight.Kept
	if a.inbox != nil && key != "" {
		payload, _ := json.Marshal(kept{User: o.user, Team: o.team, Channel: o.channel, ResponseURL: o.responseURL, Text: text, Click: o.click})
		var ok bool
		if kt, ok = a.inbox.Keep(bot.Accepted{Key: key, Payload: payload, Received: time.Now()}); !ok {
			return false
		}
	}
	a.goWork(func(ctx context.Context) {
		a.run(ctx, o, text, key)
		a.inbox.Finish(kt)
	})
	return true
}

// Recover runs the commands that were acknowledged but never finished (the process that took
// them stopped first), once their claim has run out; one older than ReplayWithin is not run,
// and its sender is told so. It returns how many it took. Call it at start and then regularly
// (the service does every 30 s).
func (a *Adapter) Recover(ctx context.Context) (int, error) {
	ds, err := a.inbox.Claim(ctx, time.Now())
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
			a.inbox.Finish(inflight.Taken(d.Key))
			continue
		}
		o := origin{user: k.User, team: k.Team, channel: k.Channel, responseURL: k.ResponseURL, click: k.Click}
		key := d.Key
		if age := time.Since(d.Received); age > within {
			a.log.Warn("an acknowledged command is too old to run", "key", key, "received", d.Received)
			// The reply's text is escaped where it is rendered, like every reply's.
			msg := bot.TooLateToRun(k.Text, d.Received)
			a.goWork(func(ctx context.Context) {
				a.answer(ctx, o, "", bot.Reply{Error: true, Ephemeral: true, Text: msg})
				a.inbox.Finish(inflight.Taken(key))
			})
			continue
		}
		a.log.Info("running a command acknowledged before a stop", "key", key, "received", d.Received)
		a.goWork(func(ctx context.Context) {
			a.run(ctx, o, k.Text, key)
			a.inbox.Finish(inflight.Taken(key))
		})
	}
	return len(ds), nil
}
