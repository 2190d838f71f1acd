package store

import (
	"context"
	"fmt"
	"time"
)

// MessageRef is where one copy of a chat message about one thing (its Ref, e.g. "approval:L-42")
// was posted on a chat platform, so a later notice with the same Ref can edit it in place. Chat
// adapters keep these here so a restart does not lose them.
type MessageRef struct {
	Platform  string // "slack", "discord"
	Ref       string
	Recipient string // whom it was for, as the bot named them (an email, a #channel)
	Channel   string // the platform's channel id
	MessageID string // the platform's message id (Slack's ts)
	CreatedAt time.Time
}

// messageRefRow is a row of message_refs.
type messageRefRow struct {
	Platform  string `db:"platform"`
	Ref       string `db:"ref"`
	Recipient string `db:"recipient"`
	Channel   string `db:"channel"`
	MessageID string `db:"message_id"`
	CreatedAt dbTime `db:"created_at"`
}

// SaveMessageRef records a posted copy. Saving the same platform, channel and message id again
// changes nothing. A zero CreatedAt is now.
func (db *DB) SaveMessageRef(ctx context.Context, r MessageRef) error {
	if r.Platform == "" || r.Ref == "" || r.Channel == "" || r.MessageID == "" {
		return fmt.Errorf("store: a message ref needs a platform, a ref, a channel and a message id")
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	row := messageRefRow{Platform: r.Platform, Ref: r.Ref, Recipient: r.Recipient, Channel: r.Channel, MessageID: r.MessageID, CreatedAt: dbTime(r.CreatedAt)}
	q, args, err := db.x.BindNamed(`INSERT INTO message_refs (platform, ref, recipient, channel, message_id, created_at)
		VALUES (:platform, :ref, :recipient, :channel, :message_id, :created_at)
		ON CONFLICT (platform, channel, message_id) DO NOTHING`, row)
	if err != nil {
		return fmt.Errorf("store: save message ref: %w", err)
	}
	if _, err := db.x.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("store: save message ref %s: %w", r.Ref, err)
	}
	return nil
}

// MessageRefs lists the copies posted on platform about ref, in the order they were saved.
func (db *DB) MessageRefs(ctx context.Context, platform, ref string) ([]MessageRef, error) {
	var rows []messageRefRow
	err := db.x.SelectContext(ctx, &rows, db.x.Rebind(
		`SELECT platform, ref, recipient, channel, message_id, created_at FROM message_refs
		 WHERE platform = ? AND ref = ? ORDER BY id`), platform, ref)
	if err != nil {
		return nil, fmt.Errorf("store: message refs of %s: %w", ref, err)
	}
	out := make([]MessageRef, len(rows))
	for i, r := range rows {
		out[i] = MessageRef{Platform: r.Platform, Ref: r.Ref, Recipient: r.Recipient, Channel: r.Channel, MessageID: r.MessageID, CreatedAt: time.Time(r.CreatedAt)}
	}
	return out, nil
}

// MessageRefRecipients lists to whom copies about ref were posted, on every platform, each once
// (as the bot named them: people and #channels), in name order, leaving out those whose every copy
// was retired (RetireMessageRefs).
func (db *DB) MessageRefRecipients(ctx context.Context, ref string) ([]string, error) {
	var out []string
	err := db.x.SelectContext(ctx, &out, db.x.Rebind(
		`SELECT DISTINCT recipient FROM message_refs WHERE ref = ? AND recipient <> '' AND retired_at IS NULL ORDER BY recipient`), ref)
	if err != nil {
		return nil, fmt.Errorf("store: recipients of %s: %w", ref, err)
	}
	return out, nil
}

// MessageRefPosted says whether any copy about ref was ever posted, on any platform, retired or
// not (until PruneMessageRefs forgets it).
func (db *DB) MessageRefPosted(ctx context.Context, ref string) (bool, error) {
	var n int
	if err := db.x.GetContext(ctx, &n, db.x.Rebind(`SELECT COUNT(*) FROM message_refs WHERE ref = ?`), ref); err != nil {
		return false, fmt.Errorf("store: copies of %s: %w", ref, err)
	}
	return n > 0, nil
}

// RetireMessageRefs records that the copies about ref posted to recipient (as the bot named them)
// were edited for someone who may no longer decide it, so that MessageRefRecipients lists them no
// more and they are not edited again for that; a copy posted to them later is listed again. The
// copies are still edited with every later notice about ref.
func (db *DB) RetireMessageRefs(ctx context.Context, ref, recipient string) error {
	_, err := db.x.ExecContext(ctx, db.x.Rebind(
		`UPDATE message_refs SET retired_at = ? WHERE ref = ? AND recipient = ? AND retired_at IS NULL`), dbTime(time.Now()), ref, recipient)
	if err != nil {
		return fmt.Errorf("store: retire the copies of %s to %s: %w", ref, recipient, err)
	}
	return nil
}

// PruneMessageRefs forgets the copies saved before t (decided approvals need no more edits) and
// says how many it forgot.
func (db *DB) PruneMessageRefs(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM message_refs WHERE created_at < ?`), dbTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune message refs: %w", err)
	}
	return res.RowsAffected()
}
