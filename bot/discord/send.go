package discord

import (
	"context"
	"errors"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
)

// Send delivers a notice on Discord: to a person by DM (when the directory knows their Discord
// account) or to a channel the policy names (when it has a Discord channel id), queued per
// recipient and sent in order. A notice for someone or somewhere not on Discord is not sent here
// and is no error: other platforms carry it. A notice with Update set edits the messages posted
// earlier to the same recipient with the same Ref; when there are none, it is posted.
func (a *Adapter) Send(_ context.Context, r bot.Reply) error {
	if r.To == "" {
		return errors.New("discord: a notice without a recipient")
	}
	to := r.To
	if strings.HasPrefix(to, "#") {
		if _, ok := a.cfg.Channels[to]; !ok {
			a.log.Debug("a channel with no Discord channel id; not posted on Discord", "to", to, "ref", r.Ref)
			return nil
		}
	}
	a.out.push(a.base, strings.ToLower(to), func(ctx context.Context) {
		channel, ok, err := a.channelFor(ctx, to)
		switch {
		case err != nil:
			a.log.Error("cannot reach a notice's recipient on Discord", "to", to, "ref", r.Ref, "err", err)
			return
		case !ok:
			a.log.Debug("a person with no Discord account; not sent on Discord", "to", to, "ref", r.Ref)
			return
		}
		if r.Update && r.Ref != "" && a.update(ctx, to, r) {
			return
		}
		a.post(ctx, to, channel, r)
	})
	return nil
}

// channelFor is where a message to "to" goes: a person's DM channel, or the channel's id.
func (a *Adapter) channelFor(ctx context.Context, to string) (string, bool, error) {
	if strings.HasPrefix(to, "#") {
		id, ok := a.cfg.Channels[to]
		return id, ok, nil
	}
	user, ok, err := a.cfg.People.UserID(ctx, to)
	if err != nil || !ok {
		return "", false, err
	}
	a.dmMu.Lock()
	ch, ok := a.dms[user]
	a.dmMu.Unlock()
	if ok {
		return ch, true, nil
	}
	var c *discordgo.Channel
	err = a.retry(ctx, func() error {
		var err error
		c, err = a.s.UserChannelCreate(user, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return "", false, err
	}
	a.dmMu.Lock()
	a.dms[user] = c.ID
	a.dmMu.Unlock()
	return c.ID, true, nil
}

// post sends r to channel and, when it has a Ref, remembers where it landed.
func (a *Adapter) post(ctx context.Context, to, channel string, r bot.Reply) {
	m := a.render(r)
	var sent *discordgo.Message
	err := a.retry(ctx, func() error {
		var err error
		sent, err = a.s.ChannelMessageSendComplex(channel, &discordgo.MessageSend{Embeds: m.embeds, Components: orEmpty(m.components), AllowedMentions: noMentions},
			discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		a.log.Error("cannot post on Discord", "to", to, "channel", channel, "ref", r.Ref, "err", err)
		return
	}
	if r.Ref != "" && sent != nil {
		if err := a.refs.SaveMessageRef(ctx, MessageRef{Ref: r.Ref, Recipient: strings.ToLower(to), Channel: sent.ChannelID, MessageID: sent.ID}); err != nil {
			a.log.Error("cannot remember a posted message", "ref", r.Ref, "channel", sent.ChannelID, "message", sent.ID, "err", err)
		}
	}
}

// update edits every copy of r.Ref posted to "to"; false when there is none. The edit replaces
// the buttons too, so a decided approval has none left to click.
func (a *Adapter) update(ctx context.Context, to string, r bot.Reply) bool {
	refs, err := a.refs.MessageRefs(ctx, r.Ref)
	if err != nil {
		a.log.Error("cannot read posted messages", "ref", r.Ref, "err", err)
		return false
	}
	m := a.render(r)
	comps := orEmpty(m.components)
	empty := ""
	n := 0
	for _, ref := range refs {
		if !strings.EqualFold(ref.Recipient, to) {
			continue
		}
		n++
		err := a.retry(ctx, func() error {
			_, err := a.s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: ref.MessageID, Channel: ref.Channel, Content: &empty,
				Embeds: &m.embeds, Components: &comps, AllowedMentions: noMentions}, discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			a.log.Error("cannot edit a message on Discord", "ref", r.Ref, "channel", ref.Channel, "message", ref.MessageID, "err", err)
		}
	}
	return n > 0
}
