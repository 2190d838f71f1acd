package discord

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/internal/inflight"
)

// onMessage answers a message someone sent the app in a DM, which the gateway delivers (it asks
// for DIRECT_MESSAGES alone). A message from a bot (the app's own DMs among them), a webhook or
// the system, or one in a server's channel, is not answered, so no two bots answer each other; a
// message delivered again is answered once.
func (a *Adapter) onMessage(m *discordgo.Message) {
	if m == nil || m.Author == nil || m.Author.Bot || m.Author.System || m.WebhookID != "" || m.GuildID != "" || m.ID == "" || m.ChannelID == "" {
		return
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return
	}
	if !a.seen.First(dmKey(m.ID)) {
		a.log.Info("dropped a repeated direct message", "message", m.ID)
		return
	}
	user, channel, id, text := m.Author.ID, m.ChannelID, m.ID, m.Content
	a.dmMu.Lock()
	a.dms[user] = channel
	a.dmMu.Unlock()
	a.goWork(func(ctx context.Context) {
		// Every replica's gateway gets the message: the inbox lets one answer it (its claim
		// outlasts the answer, for a copy delivered late), and keeps it until it is answered,
		// for a successor to answer should this process stop first.
		if !a.claimDelivery("message:" + id) {
			return
		}
		kt, ok := a.keepDM(user, channel, id, text)
		if !ok {
			return
		}
		a.answerDM(ctx, user, channel, id, text)
		a.inbox.Finish(kt)
	})
}

// keepDM keeps a DM in the inbox (when there is one) until it is answered; false when the inbox
// holds it already (another replica took it).
func (a *Adapter) keepDM(user, channel, id, text string) (inflight.Kept, bool) {
	if a.inbox == nil {
		return inflight.Kept{}, true
	}
	payload, _ := json.Marshal(kept{DM: true, User: user, Channel: channel, ID: id, Text: text})
	return a.inbox.Keep(bot.Accepted{Key: dmKey(id), Payload: payload, Received: time.Now()})
}

// dmKey keys a command sent in a DM: the message's id.
func dmKey(id string) string { return "discord:message:" + id }

// answerDM answers the DM text of Discord user userID in channel: a /gpu command written as text
// runs as that command for them; anything else is told, in one sentence, how to ask.
func (a *Adapter) answerDM(ctx context.Context, userID, channel, id, text string) {
	to := Account(userID)
	var rs []bot.Reply
	line, ok := a.dmCommand(text)
	switch person, err := a.person(ctx, userID); {
	case !ok:
		hint := ""
		if err == nil {
			hint = a.dmExample(ctx, request(channel, dmKey(id), "", person, userID, ""))
		}
		rs = []bot.Reply{{Text: a.dmHint(hint)}}
	case err != nil:
		a.log.Error("cannot tell who a Discord user is", "user", userID, "err", err)
		rs = []bot.Reply{{Error: true, Text: "Quartermaster could not tell who you are just now; please try again in a minute."}}
	default:
		to = person
		a.log.Info("running a command sent by direct message", "user", userID, "message", id)
		rs = a.reply(ctx, person, request(channel, dmKey(id), "", person, userID, line))
		if len(rs) == 0 {
			rs = []bot.Reply{{Text: "Done."}}
		}
	}
	for _, m := range a.parts(rs...) {
		if _, err := a.postMessage(ctx, to, channel, m, bot.Reply{}); err != nil {
			return // postMessage logged it; the parts left would come out of order
		}
	}
}

// dmCommand reads the text of a DM as a /gpu command line (bot.ReadDM): a subcommand's name
// first, with or without "/gpu", "gpu" or a mention of the app before it ("request 1 interactive
// for 4h", "gpu status L-7"), then the words the grammar reads, or the subcommand's options by
// name as Discord's examples write them ("request gpus:2 class:train"). "gpu" alone is help. A
// command of Config.Verbs that is not offered here is read without its words, for the handler to
// refuse. False when the text names no subcommand.
func (a *Adapter) dmCommand(text string) (string, bool) {
	name, rest, ok := bot.ReadDM(text, a.dmNames(), func(w string) bool {
		_, ok := a.cmds[w]
		return ok || slices.Contains(a.cfg.Verbs, w)
	})
	if !ok {
		return "", false
	}
	c, offered := a.cmds[name]
	if !offered {
		// A command this installation does not offer: the handler refuses it, whatever follows.
		return handlerCommand + " " + name, true
	}
	if values, ok := optionsOf(c, rest); ok && c.Text != nil {
		return a.namedChannels(c.Text(values)), true
	}
	return a.namedChannels(strings.Join(append([]string{handlerCommand, name}, rest...), " ")), true
}

// dmNames are the words that may come before a subcommand's name in a DM: the command's name with
// and without its slash, and the app's mentions (of its user, as the gateway's READY names it, and
// of the application's id, which is its user's for every app made since 2016) and its name.
func (a *Adapter) dmNames() []string {
	names := []string{"/" + a.cfg.Name, a.cfg.Name, handlerCommand, strings.TrimPrefix(handlerCommand, "/")}
	ids := []string{a.cfg.AppID}
	if u, ok := a.self.Load().(*discordgo.User); ok {
		ids = append(ids, u.ID)
		if u.Username != "" {
			names = append(names, "@"+u.Username)
		}
	}
	for _, id := range ids {
		if id != "" {
			names = append(names, "<@"+id+">", "<@!"+id+">")
		}
	}
	return names
}

// optionsOf reads words as c's options by name (gpus:2 class:train reason:a long one), each
// value running to the next option; false unless the first word is one of c's options.
func optionsOf(c *Command, words []string) (map[string]string, bool) {
	values := map[string]string{}
	current := ""
	for _, w := range words {
		if n, v, found := strings.Cut(w, ":"); found {
			if o, known := c.option(strings.ToLower(n)); known {
				current = o.Name
				if o.Type == OptionBoolean {
					v = strings.ToLower(v)
				}
				values[current] = v
				continue
			}
		}
		if current == "" {
			return nil, false
		}
		values[current] = strings.TrimSpace(values[current] + " " + w)
	}
	return values, current != ""
}

// dmExample is Config.DMExample's command line for req's person, without the /gpu; "" when
// there is none.
func (a *Adapter) dmExample(ctx context.Context, req bot.Request) string {
	if a.cfg.DMExample == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	line, ok := a.cfg.DMExample(ctx, req)
	if !ok || ctx.Err() != nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), handlerCommand))
}

// dmHint is the one sentence that answers a DM that is no command (bot.DMHint): how to ask, with
// an example that works as it is sent: example (one that works for the sender) when there is one,
// else the first of the request and catalog subcommands' examples.
func (a *Adapter) dmHint(example string) string {
	for _, name := range []string{"request", "catalog"} {
		if example != "" {
			break
		}
		if c, ok := a.cmds[name]; ok {
			example = strings.TrimSpace(strings.TrimPrefix(nonEmpty(c.Example, handlerCommand+" "+name), handlerCommand))
			break
		}
	}
	_, help := a.cmds["help"]
	return bot.DMHint(a.cfg.Name, example, help)
}
