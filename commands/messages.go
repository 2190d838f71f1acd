package commands

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// message is a reply as a qm.NoticeMessage keeps it in the outbox: all that its sending reads.
type message struct {
	Text     string        `json:"text"`
	Sections []bot.Section `json:"sections,omitempty"`
	Actions  []bot.Action  `json:"actions,omitempty"`
	Ref      string        `json:"ref,omitempty"`
	Update   bool          `json:"update,omitempty"`
	EditOnly bool          `json:"edit_only,omitempty"`
	Typed    []string      `json:"typed,omitempty"`
}

// MessageNotice is r (addressed: To set) as a notice for the outbox, to go out as it is.
func MessageNotice(r bot.Reply) (qm.Notice, error) {
	raw, err := json.Marshal(message{Text: r.Text, Sections: r.Sections, Actions: r.Actions, Ref: r.Ref, Update: r.Update, EditOnly: r.EditOnly, Typed: r.Typed})
	if err != nil {
		return qm.Notice{}, err
	}
	n := qm.Notice{Kind: qm.NoticeMessage, To: []string{r.To}, Message: raw}
	// An edit of an approval message (one they may no longer decide) is queued with its lease,
	// so that it goes out in order with that lease's other notices to them (its decision's edit).
	if ref, ok := strings.CutPrefix(r.Ref, "approval:"); ok {
		if id, err := qm.ParseLeaseID(ref); err == nil {
			n.Lease = &qm.Lease{ID: id}
		}
	}
	return n, nil
}

// messageReply is the reply a qm.NoticeMessage carries; none where it cannot be read.
func (b *Bot) messageReply(n qm.Notice) []bot.Reply {
	var m message
	if len(n.To) != 1 || json.Unmarshal(n.Message, &m) != nil {
		b.log().Error("a message in the outbox cannot be read; it is not sent", "to", n.To)
		return nil
	}
	return []bot.Reply{{To: n.To[0], Text: m.Text, Sections: m.Sections, Actions: m.Actions, Ref: m.Ref, Update: m.Update, EditOnly: m.EditOnly, Typed: m.Typed}}
}

// GroupsChangedNotices is GroupsChanged as notices for the outbox, one for each reply, worded
// and addressed as GroupsChanged has them.
func (b *Bot) GroupsChangedNotices(ctx context.Context, before, after *qm.AccountLink) []qm.Notice {
	var out []qm.Notice
	for _, r := range b.GroupsChanged(ctx, before, after) {
		n, err := MessageNotice(r)
		if err != nil {
			b.log().Error("a message of changed groups cannot be queued", "to", r.To, "err", err)
			continue
		}
		out = append(out, n)
	}
	return out
}
