package discord

import (
	"context"
	"sync"

	"github.com/acme/quartermaster/bot"
)

// People maps Discord users to the people Quartermaster knows, and back. Discord does not tell an
// app its users' emails, so the mapping is Quartermaster's: the policy's directory
// (discord:USER_ID entries) and, where SSO is set up, the accounts people linked by logging in.
// Put the SSO links first in a Chain and the directory after them.
type People interface {
	// Person is the person behind a Discord user id, by their canonical name
	// (alice@acme.example); ok is false when nobody is known by it.
	Person(ctx context.Context, userID string) (person string, ok bool, err error)
	// UserID is a person's Discord user id; ok is false when they have none.
	UserID(ctx context.Context, person string) (userID string, ok bool, err error)
}

// Chain asks each People in turn; the first that knows the answer gives it.
type Chain []People

// Person implements People.
func (c Chain) Person(ctx context.Context, userID string) (string, bool, error) {
	for _, p := range c {
		person, ok, err := p.Person(ctx, userID)
		if err != nil || ok {
			return person, ok, err
		}
	}
	return "", false, nil
}

// UserID implements People.
func (c Chain) UserID(ctx context.Context, person string) (string, bool, error) {
	for _, p := range c {
		id, ok, err := p.UserID(ctx, person)
		if err != nil || ok {
			return id, ok, err
		}
	}
	return "", false, nil
}

// Account is how a Discord user who is not known is named to the handler: "discord:USER_ID",
// which is also how the policy's directory writes the account.
func Account(userID string) string { return "discord:" + userID }

// Platform names Discord in chat accounts.
const Platform = "discord"

// AccountOf is a Discord user's chat account, as single sign-on links it. Discord's user ids are
// the same in every server and in DMs, so the account has no workspace: one login serves them all.
func AccountOf(userID string) bot.Account { return bot.Account{Platform: Platform, User: userID} }

// MessageRef is where one copy of a message about a Ref (e.g. "approval:L-42") was posted, so a
// later notice with the same Ref and Update set edits it in place.
type MessageRef struct {
	Ref       string // what the message is about
	Recipient string // whom it was for, as the bot named them: a person or a #channel
	Channel   string // the Discord channel id it landed in (a DM channel for a person)
	MessageID string // Discord's message id
}

// RefStore remembers posted messages by Ref. It must survive a restart (the service keeps them
// in the database); MemoryRefs is for tests and installs that can afford to forget.
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

// Choice is one suggestion for an option being typed.
type Choice struct {
	Name  string // what the user sees (at most 100 characters)
	Value string // what the option gets
}

// Completer suggests values for an option as a person types it: kind is the option's
// Autocomplete kind ("lease", "template"), typed what they have typed so far. At most 25
// suggestions are shown.
type Completer func(ctx context.Context, person, kind, typed string) []Choice
