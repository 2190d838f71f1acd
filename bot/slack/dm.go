package slack

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/acme/quartermaster/bot"
)

// onDM answers a message someone wrote to the app in its Messages tab (a message.im event): one
// whose text is a /gpu command runs as that command for them, answered in the DM; any other is
// told, in one sentence, how to ask. Messages of bots (the app's own among them), and edits,
// deletions and other changes (a subtype), are not answered, so no two bots answer each other.
func (a *Adapter) onDM(team string, self []string, e *slackevents.MessageEvent) {
	if e.ChannelType != "im" || e.User == "" || e.BotID != "" || e.SubType != "" || e.Channel == "" {
		return
	}
	o := origin{user: e.User, team: team, channel: e.Channel}
	line, ok := a.dmCommand(typed(e.Text), self)
	if !ok {
		received := time.Now()
		a.goWork(func(ctx context.Context) { a.answer(ctx, o, "", bot.Reply{Text: a.dmHint(ctx, e.User, received)}) })
		return
	}
	a.runKept(o, line, "slack:im:"+e.Channel+":"+e.TimeStamp)
}

// dmCommand reads the text of a DM as a /gpu command line (bot.ReadDM): one of Config.Verbs
// first, with or without "/gpu", "gpu" or a mention of the app (self: the bot users the event
// was delivered for) before it ("request 1 interactive for 4h", "gpu list"); "gpu" alone is help.
// False when it begins with no verb.
func (a *Adapter) dmCommand(text string, self []string) (string, bool) {
	names := []string{"/gpu", "gpu"}
	for _, id := range append(slices.Clip(self), a.botID()) {
		if id != "" {
			names = append(names, "@"+id)
		}
	}
	if n, ok := a.bot.Load().(string); ok && n != "" {
		names = append(names, "@"+strings.TrimPrefix(n, "@"))
	}
	verb, args, ok := bot.ReadDM(text, names, a.isVerb)
	if !ok {
		return "", false
	}
	return strings.Join(append([]string{"/gpu", verb}, args...), " "), true
}

// isVerb says whether w is one of Config.Verbs, upper and lower case aside.
func (a *Adapter) isVerb(w string) bool {
	return slices.ContainsFunc(a.cfg.Verbs, func(v string) bool { return strings.EqualFold(v, w) })
}

// botID is the app's bot user id, as auth.test said it at start; "" before.
func (a *Adapter) botID() string {
	id, _ := a.botUserID.Load().(string)
	return id
}

// dmHint is the one sentence that answers a DM that is no command (bot.DMHint): how to ask, with
// a request that works for user (the request form's starting point, as they would type it).
func (a *Adapter) dmHint(ctx context.Context, user string, received time.Time) string {
	example := strings.TrimPrefix(a.startingForm(ctx, user, received).command(), "/gpu ")
	return bot.DMHint("gpu", example, a.isVerb("help"))
}
