package discord

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/bwmarrin/discordgo"
)

// gatewayRetryFirst and gatewayRetryMost bound the wait between tries to open the gateway.
const (
	gatewayRetryFirst = 500 * time.Millisecond
	gatewayRetryMost  = time.Minute
)

// RunGateway connects to Discord's gateway with the bot token and answers what it delivers until
// ctx ends: the interactions, through the same code as the HTTP endpoint, and the DMs people send
// the app, which Discord delivers over the gateway alone. Interactions come over it for installs
// with no public URL: the application must then have no Interactions Endpoint URL set, or
// Discord sends interactions there instead (and only DMs here). Until the gateway first opens it
// is tried again and again; discordgo reconnects after a dropped connection.
func (a *Adapter) RunGateway(ctx context.Context) error {
	remove := a.s.AddHandler(func(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
		if ic.Interaction != nil {
			a.onGateway(ic.Interaction)
		}
	})
	defer remove()
	removeDMs := a.s.AddHandler(func(_ *discordgo.Session, mc *discordgo.MessageCreate) {
		if mc.Message != nil {
			a.onGatewayMessage(mc.Message)
		}
	})
	defer removeDMs()
	removeReady := a.s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		if r.User != nil && r.User.ID != "" {
			a.self.Store(r.User)
		}
	})
	defer removeReady()
	// Discord out of reach at the start (the network not up yet at boot, an outage, a proxy) is
	// waited out: the gateway is tried again, a little later each time, until the service stops.
	// Once open, discordgo reconnects by itself.
	for wait := gatewayRetryFirst; ; wait = min(2*wait, gatewayRetryMost) {
		err := a.s.Open()
		if err == nil {
			break
		}
		a.log.Warn("cannot open the Discord gateway; trying again", "err", err, "in", wait.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	a.log.Info("connected to the Discord gateway")
	<-ctx.Done()
	if err := a.s.Close(); err != nil {
		return fmt.Errorf("discord: close the gateway: %w", err)
	}
	return nil
}

// onGateway answers an interaction the gateway delivered: the answer goes back over REST. The
// gateway delivers it to every replica; the one that claims it in the inbox first answers it.
func (a *Adapter) onGateway(i *discordgo.Interaction) {
	a.track.Add()
	defer a.track.Done()
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("discord gateway interaction panicked", "panic", p, "stack", string(debug.Stack()))
		}
	}()
	ctx, cancel := context.WithTimeout(a.base, discordgo.InteractionDeadline)
	defer cancel()
	resp, sent := a.respond(ctx, i, true)
	defer sent()
	if resp == nil {
		return // another replica answers it
	}
	err := a.retry(ctx, func() error { return a.s.InteractionRespond(i, resp, discordgo.WithContext(ctx)) })
	switch {
	case err == nil:
	case answeredFirst(i, err):
		a.log.Debug("another replica's suggestions were shown first", "id", i.ID)
	default:
		a.log.Error("cannot answer an interaction over REST", "id", i.ID, "err", err)
	}
}

// answeredFirst reports whether err is Discord refusing suggestions because another replica's
// answer to the same keystroke came first (code 40060, "Interaction has already been
// acknowledged"): Discord shows the first answer and refuses the rest, which is no fault.
func answeredFirst(i *discordgo.Interaction, err error) bool {
	return i.Type == discordgo.InteractionApplicationCommandAutocomplete && discordCode(err) == discordgo.ErrCodeInteractionHasAlreadyBeenAcknowledged
}

// onGatewayMessage answers a message the gateway delivered (a DM to the app), as onMessage does.
func (a *Adapter) onGatewayMessage(m *discordgo.Message) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("discord gateway message panicked", "panic", p, "stack", string(debug.Stack()))
		}
	}()
	a.onMessage(m)
}
