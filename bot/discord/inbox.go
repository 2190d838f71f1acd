package discord

import (
	"context"
	"encoding/json"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/internal/inflight"
)

// DefaultReplayWithin is how old a deferred command may be and still be run by Recover: an
// interaction's token, with which its answer replaces the deferral, works for 15 minutes.
const DefaultReplayWithin = 14 * time.Minute

// kept is what the inbox keeps of a deferred command: who asked, the interaction whose deferral
// its answer replaces, and its text.
type kept struct {
	Person  string `json:"person"`            // as the directory names them
	User    string `json:"user"`              // their Discord user id
	Channel string `json:"channel,omitempty"` // where it was typed
	App     string `json:"app"`
	ID      string `json:"id"`    // the interaction's id
	Token   string `json:"token"` // the interaction's token: answers it for 15 minutes
	Text    string `json:"text"`
	Click   string `json:"click,omitempty"` // the button's key, for a click
	// DM says it is a message sent to the app in a DM (ID is the message's, Channel the DM's, and
	// there is no interaction): its answer is posted in the DM.
	DM bool `json:"dm,omitempty"`
	// Claim says it is only a replica's claim on something the gateway delivered to every
	// replica (claimDelivery): nothing to run. Recover forgets it once its claim has run out.
	Claim bool `json:"claim,omitempty"`
}

// claimDelivery claims what the gateway delivered (id: an interaction's, or "message:" and a
// DM's) for this replica, in the inbox (when there is one): the gateway delivers it to every
// replica, and only the one whose claim is kept first answers it; false for the others, and for
// this one when the gateway delivers it again. The claim is kept until it runs out, not only
// while the answer is made, so that a copy delivered late (a slow replica, a session resumed)
// still finds it; it holds nothing to run, and Recover forgets it then. What is to run is kept
// beside it under its own key, as a command over HTTP is. It is true only when the inbox said,
// within gatewayClaimWait, that this replica's claim was kept.
func (a *Adapter) claimDelivery(id string) bool {
	if a.inbox == nil {
		return true
	}
	payload, _ := json.Marshal(kept{ID: id, Claim: true})
	return a.inbox.Own(bot.Accepted{Key: "discord:gateway:" + id, Payload: payload, Received: time.Now()}, gatewayClaimWait)
}

// gatewayClaimWait is how long a replica waits for the inbox to say whether its claim on what the
// gateway delivered was kept: Discord gives an interaction 3 seconds to be answered or deferred,
// and this leaves one of them to do it. A replica that does not know by then (the database is
// slow or down) does nothing, for it cannot tell whether another replica has it: a command is
// answered once, or, when no replica could claim it, not at all (Discord then tells the person the
// application did not respond).
const gatewayClaimWait = 2 * time.Second

// claim is how long a process keeps a command it deferred or recovered to itself: long enough
// to wait for a free worker and run it.
func (a *Adapter) claim() time.Duration {
	if a.cfg.InboxClaim > 0 {
		return a.cfg.InboxClaim
	}
	return a.cfg.WorkTimeout + time.Minute
}

// keep keeps a deferred command in the inbox (when there is one) until its answer is given,
// waiting for the inbox at most inflight.AcceptTimeout. One the inbox holds already (an
// interaction delivered to another replica too) is left to whoever has it.
func (a *Adapter) keep(i *discordgo.Interaction, person, user, text, click string) inflight.Kept {
	if a.inbox == nil {
		return inflight.Kept{}
	}
	payload, _ := json.Marshal(kept{Person: person, User: user, Channel: i.ChannelID, App: i.AppID, ID: i.ID, Token: i.Token, Text: text, Click: click})
	kt, ok := a.inbox.Keep(bot.Accepted{Key: "discord:" + i.ID, Payload: payload, Received: time.Now()})
	if !ok {
		return inflight.Kept{}
	}
	return kt
}

// Recover runs the commands that were deferred but never answered (the process that took them
// stopped first), once their claim has run out, and their answers replace the deferrals; one
// older than ReplayWithin is not run, and its sender is told so by DM. A DM to the app left
// unanswered is answered in the DM (a command in it, by the same rule). It returns how many it
// took (the gateway's claims whose time is past are forgotten, and not counted). Call it at
// start and then regularly (the service does every 30 s).
func (a *Adapter) Recover(ctx context.Context) (int, error) {
	total := 0
	// On a busy install the gateway's claims run out by the hundred: while a round forgets
	// some, another follows, so that they neither pile up nor hold back a command to run.
	for range maxRecoverRounds {
		ds, err := a.inbox.Claim(ctx, time.Now())
		if err != nil {
			return total, err
		}
		n, forgotten := a.recover(ds)
		total += n
		if forgotten == 0 {
			break
		}
	}
	return total, nil
}

// maxRecoverRounds bounds the rounds of one Recover.
const maxRecoverRounds = 100

// recover runs what Recover claimed: n commands taken, and the gateway's claims forgotten.
func (a *Adapter) recover(ds []bot.Accepted) (n, forgotten int) {
	for _, d := range ds {
		var k kept
		if err := json.Unmarshal(d.Payload, &k); err == nil && k.Claim {
			// A gateway delivery's claim whose time is past: it did its work (one replica
			// answered), and there is nothing to run.
			a.inbox.Finish(inflight.Taken(d.Key))
			forgotten++
			continue
		}
		n++
		if err := json.Unmarshal(d.Payload, &k); err != nil || (k.Person == "" && !k.DM) || k.ID == "" || (k.DM && (k.User == "" || k.Channel == "")) {
			a.log.Error("dropped an unreadable command from the inbox", "key", d.Key, "err", err)
			a.inbox.Finish(inflight.Taken(d.Key))
			continue
		}
		kt := inflight.Taken(d.Key)
		line, command := k.Text, true
		if k.DM {
			// A DM is named by the command it was read as, not as it was pasted.
			line, command = a.dmCommand(k.Text)
		}
		if !command {
			// Not a command: what it is answered with is no less true late, and runs nothing.
			a.log.Info("answering a direct message received before a stop", "key", d.Key, "received", d.Received)
			a.goWork(func(ctx context.Context) {
				a.answerDM(ctx, k.User, k.Channel, k.ID, k.Text)
				a.inbox.Finish(kt)
			})
			continue
		}
		if time.Since(d.Received) > a.cfg.ReplayWithin {
			a.log.Warn("a deferred command is too old to run", "key", d.Key, "received", d.Received)
			text := bot.TooLateToRun(line, d.Received)
			a.goWork(func(ctx context.Context) {
				ch, err := a.dm(ctx, k.User)
				if err == nil {
					err = a.post(ctx, k.Person, ch, bot.Reply{Error: true, Text: text})
				}
				if err != nil {
					a.log.Error("cannot tell a sender their command was not run", "user", k.User, "err", err)
				}
				a.inbox.Finish(kt)
			})
			continue
		}
		if k.DM {
			a.log.Info("running a command sent by direct message before a stop", "key", d.Key, "received", d.Received)
			a.goWork(func(ctx context.Context) {
				a.answerDM(ctx, k.User, k.Channel, k.ID, k.Text)
				a.inbox.Finish(kt)
			})
			continue
		}
		a.log.Info("running a command deferred before a stop", "key", d.Key, "received", d.Received)
		req := request(k.Channel, d.Key, k.Click, k.Person, k.User, k.Text)
		i := &discordgo.Interaction{ID: k.ID, AppID: k.App, Token: k.Token, ChannelID: k.Channel}
		a.goWork(func(ctx context.Context) {
			a.followUp(i, k.Person, k.User, k.Text, a.reply(ctx, k.Person, req))
			a.inbox.Finish(kt)
		})
	}
	return n, forgotten
}
