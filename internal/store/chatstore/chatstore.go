// Package chatstore keeps what the chat adapters need to survive a restart in the database: the
// message refs (where each copy of an approval was posted, so a decision edits them) and the
// inbox (commands acknowledged and not yet answered). Each platform's are kept apart.
package chatstore

import (
	"context"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/store"
)

// Refs is a bot.RefStore in the database, for one platform ("slack", "discord").
type Refs struct {
	DB       *store.DB
	Platform string
}

// SaveMessageRef implements bot.RefStore.
func (r Refs) SaveMessageRef(ctx context.Context, m bot.MessageRef) error {
	return r.DB.SaveMessageRef(ctx, store.MessageRef{Platform: r.Platform, Ref: m.Ref, Recipient: m.Recipient, Channel: m.Channel, MessageID: m.MessageID})
}

// MessageRefs implements bot.RefStore.
func (r Refs) MessageRefs(ctx context.Context, ref string) ([]bot.MessageRef, error) {
	rs, err := r.DB.MessageRefs(ctx, r.Platform, ref)
	if err != nil {
		return nil, err
	}
	out := make([]bot.MessageRef, len(rs))
	for i, m := range rs {
		out[i] = bot.MessageRef{Ref: m.Ref, Recipient: m.Recipient, Channel: m.Channel, MessageID: m.MessageID}
	}
	return out, nil
}

// Inbox is a bot.Inbox in the database for one platform, whose claims are Owner's (a process:
// host and pid).
type Inbox struct {
	DB       *store.DB
	Owner    string
	Platform string
}

// Accept implements bot.Inbox.
func (i Inbox) Accept(ctx context.Context, cmds []bot.Accepted, claim time.Duration) ([]bool, error) {
	ds := make([]store.Delivery, len(cmds))
	for n, c := range cmds {
		ds[n] = store.Delivery{Key: c.Key, Platform: i.Platform, Payload: string(c.Payload), ReceivedAt: c.Received}
	}
	return i.DB.AcceptDeliveries(ctx, ds, i.Owner, claim)
}

// Finish implements bot.Inbox.
func (i Inbox) Finish(ctx context.Context, keys []string) error {
	return i.DB.FinishDeliveries(ctx, keys)
}

// Claim implements bot.Inbox.
func (i Inbox) Claim(ctx context.Context, now time.Time, claim time.Duration) ([]bot.Accepted, error) {
	ds, err := i.DB.ClaimDeliveries(ctx, i.Platform, i.Owner, now, claim, 100)
	out := make([]bot.Accepted, len(ds))
	for n, d := range ds {
		out[n] = bot.Accepted{Key: d.Key, Payload: []byte(d.Payload), Received: d.ReceivedAt}
	}
	return out, err
}
