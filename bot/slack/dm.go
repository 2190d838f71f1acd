package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/acme/quartermaster/bot"
)

// onDM answers a message someone wrote to the app in its Messages tab (a message.im event): one
// whose text is a /gpu command runs as that command for them, answered in the DM; any other is
// told, in one sentence, how to ask. Messages of bots (the app's own among them), and edits,
// deletions and other changes (a subtype), are not answered, so no two bots answer each other.
func (a *Adapter) onDM(team string, e *slackevents.MessageEvent) {
	if e.ChannelType != "im" || e.User == "" || e.BotID != "" || e.SubType != "" || e.Channel == "" {
		return
	}
	o := origin{user: e.User, team: team, channel: e.Channel}
	line, ok := a.dmCommand(typed(e.Text))
	if !ok {
		received := time.Now()
		a.goWork(func(ctx context.Context) { a.answer(ctx, o, "", bot.Reply{Text: a.dmHint(ctx, e.User, received)}) })
		return
	}
	a.runKept(o, line, "slack:im:"+e.Channel+":"+e.TimeStamp)
}

// dmCommand reads the text of a DM as a /gpu command line: one of Config.Verbs first, with or
// without "/gpu" or "gpu" before it ("request 1 interactive for 4h", "gpu list"); "gpu" alone is
// help. False when it begins with no verb.
func (a *Adapter) dmCommand(text string) (string, bool) {
	f := strings.Fields(text)
	if len(f) > 0 && (strings.EqualFold(f[0], "/gpu") || strings.EqualFold(f[0], "gpu")) {
		if len(f) == 1 {
			return "/gpu help", true
		}
		f = f[1:]
	}
	if len(f) == 0 {
		return "", false
	}
	for _, v := range a.cfg.Verbs {
		if strings.EqualFold(f[0], v) {
			return "/gpu " + strings.ToLower(f[0]) + strings.TrimPrefix(strings.Join(f, " "), f[0]), true
		}
	}
	return "", false
}

// dmHint is the one sentence that answers a DM that is no command: how to ask, with a request
// that works for user (the request form's starting point, as they would type it).
func (a *Adapter) dmHint(ctx context.Context, user string, received time.Time) string {
	example := strings.TrimPrefix(a.startingForm(ctx, user, received).command(), "/gpu ")
	return fmt.Sprintf("Quartermaster answers /gpu commands, here too without the slash: send `%s`, or `help` for the list.", strings.ReplaceAll(example, "`", "'"))
}
