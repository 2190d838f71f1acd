package slack

import (
	"context"
	"errors"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// SocketOption adjusts the Socket Mode client (tests shorten or lengthen its ping interval).
type SocketOption = socketmode.Option

// SocketPingInterval sets how long the client waits for Slack's ping before reconnecting.
func SocketPingInterval(d time.Duration) SocketOption { return socketmode.OptionPingInterval(d) }

// RunSocketMode serves Slack's deliveries over a Socket Mode WebSocket until ctx ends: the same
// work as the HTTP endpoints, for workspaces with no public URL. Socket Mode needs no signature
// (the app token authenticates the connection); every envelope is acknowledged at once.
func (a *Adapter) RunSocketMode(ctx context.Context, opts ...SocketOption) error {
	if a.cfg.AppToken == "" {
		return errors.New("slack: Socket Mode needs an app-level token (SLACK_APP_TOKEN)")
	}
	api := slack.New(a.cfg.BotToken, append(a.clientOptions(), slack.OptionAppLevelToken(a.cfg.AppToken))...)
	sm := socketmode.New(api, opts...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case evt, ok := <-sm.Events:
				if !ok {
					return
				}
				a.onSocketEvent(ctx, sm, evt)
			}
		}
	}()
	err := sm.RunContext(ctx)
	<-done
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

func (a *Adapter) onSocketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	start := time.Now()
	ack := func(payload any) {
		if evt.Request == nil {
			return
		}
		defer a.acked("socket", string(evt.Type), start)
		var err error
		if payload == nil {
			err = sm.AckCtx(ctx, evt.Request.EnvelopeID, nil)
		} else {
			err = sm.AckCtx(ctx, evt.Request.EnvelopeID, payload)
		}
		if err != nil {
			a.log.Warn("socket mode ack failed", "envelope", evt.Request.EnvelopeID, "err", err)
		}
	}
	retry := evt.Request != nil && evt.Request.RetryAttempt > 0
	switch evt.Type {
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok {
			ack(nil)
			return
		}
		ack(a.onCommand(cmd, retry))
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slack.InteractionCallback)
		if !ok {
			ack(nil)
			return
		}
		ack(a.onInteraction(cb, retry))
	case socketmode.EventTypeEventsAPI:
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		ack(nil)
		if ok {
			a.onEvent(ev, retry)
		}
	case socketmode.EventTypeConnected:
		a.log.Info("socket mode connected")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth, socketmode.EventTypeIncomingError:
		a.log.Warn("socket mode trouble", "type", evt.Type, "data", evt.Data)
	}
}
