package discord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
)

// ErrNotHere says a notice's recipient is not on Discord: a person with no Discord account, or a
// channel with no Discord channel id. Other platforms carry such a notice; it is not a failure.
var ErrNotHere = errors.New("discord: the recipient is not on Discord")

// ErrNoDMs says Discord refused a DM because its recipient takes no DMs from the app (they
// turned off DMs from server members, or share no server with it: Discord's error 50007). It is
// an ErrNotHere: trying again cannot deliver it, and everything a notice says is also in
// /gpu list and /gpu approvals.
var ErrNoDMs = fmt.Errorf("%w: they take no direct messages from the app", ErrNotHere)

// Send delivers a notice on Discord and says whether it went out: to a person by DM (when they
// have a Discord account) or to a channel the policy names (when it has a Discord channel id);
// ErrNotHere when neither. Notices are queued per recipient and sent in order. A notice with
// Update set edits the messages posted earlier to the same recipient with the same Ref; when
// there are none, it is posted.
func (a *Adapter) Send(ctx context.Context, r bot.Reply) error {
	if r.To == "" {
		return errors.New("discord: a notice without a recipient")
	}
	to := r.To
	if strings.HasPrefix(to, "#") {
		if _, ok := a.channels[channelKey(to)]; !ok {
			return fmt.Errorf("%w: %s has no Discord channel id in the policy", ErrNotHere, to)
		}
	}
	return a.out.Call(ctx, a.base, policy.NameKey(to), func(ctx context.Context) error {
		channel, ok, err := a.channelFor(ctx, to)
		switch {
		case err != nil:
			a.log.Error("cannot reach a notice's recipient on Discord", "to", to, "ref", r.Ref, "err", err)
			return err
		case !ok:
			return fmt.Errorf("%w: %s has no Discord account", ErrNotHere, to)
		}
		if r.Update && r.Ref != "" {
			if ok, err := a.update(ctx, to, r); ok || err != nil || r.EditOnly {
				return err
			}
		}
		return a.post(ctx, to, channel, r)
	})
}

var _ bot.Deliverer = (*Adapter)(nil)

// Deliver posts r, its files attached, and returns once Discord has taken it or refused it (as
// Send does): for scheduled posts that record each message as it goes out. ErrNotHere when the
// recipient is not on Discord.
func (a *Adapter) Deliver(ctx context.Context, r bot.Reply) error { return a.Send(ctx, r) }

// channelFor is where a message to "to" goes: a person's DM channel, or the channel's id.
func (a *Adapter) channelFor(ctx context.Context, to string) (string, bool, error) {
	if strings.HasPrefix(to, "#") {
		id, ok := a.channels[channelKey(to)]
		return id, ok, nil
	}
	user, ok, err := a.cfg.People.UserID(ctx, to)
	if err != nil || !ok {
		return "", false, err
	}
	ch, err := a.dm(ctx, user)
	return ch, err == nil, err
}

// dm is the id of the DM channel with a Discord user, opened on first use.
func (a *Adapter) dm(ctx context.Context, user string) (string, error) {
	a.dmMu.Lock()
	ch, ok := a.dms[user]
	a.dmMu.Unlock()
	if ok {
		return ch, nil
	}
	var c *discordgo.Channel
	err := a.retry(ctx, func() error {
		var err error
		c, err = a.s.UserChannelCreate(user, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return "", err
	}
	a.dmMu.Lock()
	a.dms[user] = c.ID
	a.dmMu.Unlock()
	return c.ID, nil
}

// post sends r to channel and, when it has a Ref, remembers where it landed.
func (a *Adapter) post(ctx context.Context, to, channel string, r bot.Reply) error {
	sent, err := a.postMessage(ctx, to, channel, a.render(r), r)
	if err != nil {
		return err
	}
	if r.Ref != "" && sent != nil {
		// The message is out; failing to remember it costs only its later edit, so it is logged
		// rather than sent again.
		if err := a.refs.SaveMessageRef(ctx, bot.MessageRef{Ref: r.Ref, Recipient: policy.NameKey(to), Channel: sent.ChannelID, MessageID: sent.ID}); err != nil {
			a.log.Error("cannot remember a posted message", "ref", r.Ref, "channel", sent.ChannelID, "message", sent.ID, "err", err)
		}
	}
	return nil
}

// postMessage sends the rendered message m, with r's files, to channel ("to" is whom it is for).
func (a *Adapter) postMessage(ctx context.Context, to, channel string, m message, r bot.Reply) (*discordgo.Message, error) {
	var sent *discordgo.Message
	err := a.retry(ctx, func() error {
		// Files are read anew for every try: a try that was refused has consumed its readers.
		var files []*discordgo.File
		for _, f := range r.Files {
			files = append(files, &discordgo.File{Name: f.Name, ContentType: f.Type, Reader: bytes.NewReader(f.Content)})
		}
		var err error
		sent, err = a.s.ChannelMessageSendComplex(channel, &discordgo.MessageSend{Embeds: m.embeds, Components: orEmpty(m.components), AllowedMentions: noMentions,
			Files: files}, discordgo.WithContext(ctx))
		return err
	})
	if err != nil && !strings.HasPrefix(to, "#") && discordCode(err) == discordgo.ErrCodeCannotSendMessagesToThisUser {
		// Refused for good until they change their settings: trying again only adds to the
		// invalid requests Discord counts against the app.
		if _, seen := a.noDMs.LoadOrStore(channel, true); seen {
			a.log.Debug("a DM Discord refused: its recipient takes no DMs from the app", "to", to, "ref", r.Ref)
		} else {
			a.log.Warn(fmt.Sprintf("%s takes no DMs from the app on Discord (they turned off DMs from server members), so notices to them are not delivered there; they see them in /gpu list and /gpu approvals", to), "to", to, "ref", r.Ref)
		}
		return nil, fmt.Errorf("discord: post to %s: %w", to, ErrNoDMs)
	}
	if err != nil {
		a.log.Error("cannot post on Discord", "to", to, "channel", channel, "ref", r.Ref, "err", err)
		return nil, fmt.Errorf("discord: post to %s: %w", to, err)
	}
	a.noDMs.Delete(channel)
	return sent, nil
}

// update edits every copy of r.Ref posted to "to"; false when there is none. The edit replaces
// the buttons too, so a decided approval has none left to click.
func (a *Adapter) update(ctx context.Context, to string, r bot.Reply) (bool, error) {
	refs, err := a.refs.MessageRefs(ctx, r.Ref)
	if err != nil {
		a.log.Error("cannot read posted messages", "ref", r.Ref, "err", err)
		return false, fmt.Errorf("discord: posted copies of %s: %w", r.Ref, err)
	}
	m := a.render(r)
	comps := orEmpty(m.components)
	empty := ""
	n := 0
	var errs []error
	for _, ref := range refs {
		if !policy.SameName(ref.Recipient, to) {
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
			errs = append(errs, fmt.Errorf("discord: edit %s in %s: %w", ref.MessageID, ref.Channel, err))
		}
	}
	return n > 0, errors.Join(errs...)
}

// discordCode is the JSON error code of a call Discord refused (50007 …), or 0.
func discordCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

// dmsRefused reports whether Discord refused the last DM to the Discord user id: they take no
// DMs from the app.
func (a *Adapter) dmsRefused(user string) bool {
	a.dmMu.Lock()
	ch, ok := a.dms[user]
	a.dmMu.Unlock()
	if !ok {
		return false
	}
	_, refused := a.noDMs.Load(ch)
	return refused
}

// noDMsNote is what the answer to a command whose outcome comes by DM (a request, an extension,
// a quota request, a batch job) says to someone whose DMs Discord refuses.
const noDMsNote = "Discord refused Quartermaster's DMs to you (direct messages from this server's members are off in your privacy settings), so you will not hear back by DM: /gpu list shows where your leases stand. Allow DMs from this server to get them."

// hearsBackByDM reports whether the command line text is one whose outcome is told later by DM.
func hearsBackByDM(text string) bool {
	f := strings.Fields(text)
	if len(f) < 2 {
		return false
	}
	switch strings.ToLower(f[1]) {
	case "request", "extend", "submit":
		return true
	case "quota":
		// /gpu quota request; /gpu quota alone only shows the team's use.
		return len(f) > 2 && strings.EqualFold(f[2], "request")
	}
	return false
}
