package bot

import (
	"context"
	"sync"
)

// MessageRef is where one copy of a message about a Ref (e.g. "approval:L-42") was posted, so a
// later notice with the same Ref and Update set edits it in place.
type MessageRef struct {
	Ref       string // what the message is about
	Recipient string // whom it was for, as the bot named them: a person or a #channel
	Channel   string // the platform's id of the channel it landed in (a DM channel for a person)
	MessageID string // the platform's id of the message (Slack's ts, Discord's message id)
}

// RefStore remembers posted messages by Ref. It must survive a restart (the service keeps them
// in the database, one set per platform); MemoryRefs is for tests and installs that can afford
// to forget.
type RefStore interface {
	// SaveMessageRef records a posted copy; saving the same channel and message again is harmless.
	SaveMessageRef(ctx context.Context, r MessageRef) error
	// MessageRefs lists the copies posted about ref, oldest first.
	MessageRefs(ctx context.Context, ref string) ([]MessageRef, error)
}

// MemoryRefs is a RefStore in memory.
type MemoryRefs struct {
	mu   sync.Mutex
	refs []MessageRef
}

// SaveMessageRef implements RefStore.
func (m *MemoryRefs) SaveMessageRef(_ context.Context, r MessageRef) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.refs {
		if x.Channel == r.Channel && x.MessageID == r.MessageID {
			return nil
		}
	}
	m.refs = append(m.refs, r)
	return nil
}

// MessageRefs implements RefStore.
func (m *MemoryRefs) MessageRefs(_ context.Context, ref string) ([]MessageRef, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []MessageRef
	for _, x := range m.refs {
		if x.Ref == ref {
			out = append(out, x)
		}
	}
	return out, nil
}
