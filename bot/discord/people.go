package discord

import (
	"context"
	"strings"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
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

// Choice is one suggestion for an option being typed.
type Choice struct {
	Name  string // what the user sees (at most 100 characters)
	Value string // what the option gets
}

// Suggests reports whether a suggestion whose text is one of texts (a name, a title) matches
// what a person typed so far: a part of it, with the accents typed left out (the policy writes
// names a to z, and the grammar names the one meant), capitals and spaces around it not
// counting, both read in Unicode normal form C as a command is. Nothing typed matches everything. Every option's suggestions go by this one rule.
func Suggests(typed string, texts ...string) bool {
	typed = foldTyped(typed)
	for _, t := range texts {
		if strings.Contains(foldTyped(t), typed) {
			return true
		}
	}
	return false
}

// foldTyped is s as Suggests compares it: in Unicode normal form C (nfc.Name, as a command's text
// is read), trimmed, accents left out, in lower case.
func foldTyped(s string) string {
	return strings.ToLower(policy.FoldAccents(strings.TrimSpace(nfc.Name(s))))
}

// Completer suggests values for an option as a person types it: kind is the option's
// Autocomplete kind ("lease", "template", "team:charged", "data"), typed what they have typed so far. At most 25
// suggestions are shown.
type Completer func(ctx context.Context, person, kind, typed string) []Choice
