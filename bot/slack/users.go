package slack

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
)

// userTTL is how long a Slack user's email is trusted before users.info is asked again. A profile
// that shows no email is not remembered at all: the usual cause is an app installed without
// users:read.email, and once an admin adds the scope and reinstalls, the person's next command
// must find their email rather than be refused again for an hour.
const userTTL = time.Hour

// users maps Slack user ids to identities (their profile email, A to Z in lower case as everywhere
// else: policy.NameKey) and back, through
// users.info and users.lookupByEmail, cached. Until SSO linking exists, the profile email is the
// identity the policy's directory knows.
type users struct {
	api   *slack.Client
	outbx *outbox
	now   func() time.Time

	mu      sync.Mutex
	byID    map[string]cachedUser
	byEmail map[string]cachedUser
	teams   map[string]string // user id -> the workspace (team) id they last wrote from
}

type cachedUser struct {
	id, email string
	at        time.Time
}

func newUsers(api *slack.Client, o *outbox) *users {
	return &users{api: api, outbx: o, now: time.Now, byID: map[string]cachedUser{}, byEmail: map[string]cachedUser{}, teams: map[string]string{}}
}

func (u *users) remember(id, email string) {
	c := cachedUser{id: id, email: email, at: u.now()}
	u.mu.Lock()
	u.byID[id] = c
	if email != "" {
		u.byEmail[email] = c
	}
	u.mu.Unlock()
}

// errNoEmail is a Slack user whose profile shows no email (a bot, a guest, or a missing scope).
type errNoEmail struct{ id string }

func (e errNoEmail) Error() string {
	return "Quartermaster knows people by the email on their Slack profile, and yours shows none; ask a workspace admin, or use /gpu login where SSO is set up."
}

// email is the identity of Slack user id.
func (u *users) email(ctx context.Context, id string) (string, error) {
	u.mu.Lock()
	c, ok := u.byID[id]
	u.mu.Unlock()
	if ok && c.email != "" && u.now().Sub(c.at) < userTTL {
		return c.email, nil
	}
	var info *slack.User
	err := u.outbx.retry(ctx, func() error {
		var err error
		info, err = u.api.GetUserInfoContext(ctx, id)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack: users.info %s: %w", id, err)
	}
	email := nfc.Email(info.Profile.Email) // as a sign-in reads it
	if email == "" {
		return "", errNoEmail{id}
	}
	u.remember(id, email)
	return email, nil
}

// id is the Slack user id of an identity (users.lookupByEmail).
func (u *users) id(ctx context.Context, email string) (string, error) {
	email = nfc.Email(email)
	u.mu.Lock()
	c, ok := u.byEmail[email]
	u.mu.Unlock()
	if ok && u.now().Sub(c.at) < userTTL {
		return c.id, nil
	}
	var info *slack.User
	err := u.outbx.retry(ctx, func() error {
		var err error
		info, err = u.api.GetUserByEmailContext(ctx, email)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack: users.lookupByEmail %s: %w", email, err)
	}
	if info.Deleted {
		return "", errDeactivated{email}
	}
	u.remember(info.ID, email)
	return info.ID, nil
}

// errDeactivated is a person whose Slack account is deactivated: what is posted to them there
// reaches nobody.
type errDeactivated struct{ email string }

func (e errDeactivated) Error() string {
	return fmt.Sprintf("the Slack account with the email %s is deactivated, so nothing posted to it is read: name someone else in the policy in their place (a budget owner who left), or reactivate the account", e.email)
}

// known is the cached Slack user id of an identity, if any, without asking Slack.
func (u *users) known(email string) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	c, ok := u.byEmail[policy.NameKey(email)]
	return c.id, ok
}

// rememberTeam notes the workspace a user wrote from, for the requests that come without one
// (the Home tab, the request modal's estimate).
func (u *users) rememberTeam(id, team string) {
	if team == "" {
		return
	}
	u.mu.Lock()
	u.teams[id] = team
	u.mu.Unlock()
}

// team is the workspace a user last wrote from, or "".
func (u *users) team(id string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.teams[id]
}

// Platform names Slack in chat accounts and in the message refs the service keeps.
const Platform = "slack"

// account is the chat account of a Slack user, for single sign-on.
func (a *Adapter) account(user string) bot.Account {
	return bot.Account{Platform: Platform, Workspace: a.users.team(user), User: user}
}
