package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot/internal/inflight"
)

// Scope is a bot scope manifest.yaml asks for, with what does not work without it.
type Scope struct {
	Name    string
	Without string
}

// Scopes are the bot scopes manifest.yaml asks for, in its order (a test keeps the two in step).
var Scopes = []Scope{
	{"commands", "the /gpu command"},
	{"chat:write", "every answer, notice and approval message"},
	{"chat:write.public", "posts to a public team channel the bot was not invited to"},
	{"files:write", "the weekly showback's chart and CSV"},
	{"users:read", "knowing who typed a command"},
	{"users:read.email", "the email that names a Slack user: without it nobody can use Quartermaster unless single sign-on is on"},
	{"im:history", "answers to what people write to the app in its Messages tab"},
}

// Installation is what Slack says of the bot token (auth.test): the workspace and the bot user it
// stands for, and the scopes it was granted.
type Installation struct {
	Team, TeamID, BotUser, BotUserID string
	// Granted are the token's scopes; nil when Slack did not say.
	Granted []string
}

// Missing are the scopes manifest.yaml asks for that the token was not granted; none when Slack
// did not say which it was granted.
func (in Installation) Missing() []Scope {
	if in.Granted == nil {
		return nil
	}
	var out []Scope
	for _, s := range Scopes {
		if !slices.Contains(in.Granted, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// TokenRefusedError is Slack refusing one of the app's tokens itself: nothing that token does can
// work until it is replaced.
type TokenRefusedError struct {
	// Variable is the setting that holds the token: SLACK_BOT_TOKEN or SLACK_APP_TOKEN.
	Variable string
	// Reason is Slack's error code, e.g. invalid_auth.
	Reason string
}

func (e *TokenRefusedError) Error() string {
	v := e.Variable
	if v == "" {
		v = "SLACK_BOT_TOKEN"
	}
	token := "the Bot User OAuth Token, which begins with xoxb- (OAuth & Permissions; docs/slack.md)"
	if v == "SLACK_APP_TOKEN" {
		token = "an App-Level Token with the connections:write scope, which begins with xapp- (Basic Information → App-Level Tokens; docs/slack.md)"
	}
	switch e.Reason {
	case "account_inactive", "token_revoked":
		return fmt.Sprintf("Slack refuses %s (%s: the app was removed from the workspace, or the token revoked); install the app to the workspace again and set %s to %s", v, e.Reason, v, token)
	case "token_expired":
		return fmt.Sprintf("Slack refuses %s (%s: token rotation is on, and Quartermaster does not refresh tokens); turn it off (token_rotation_enabled: false in manifest.yaml), reinstall the app and set %s to %s", v, e.Reason, v, token)
	}
	return fmt.Sprintf("Slack refuses %s (%s: mistyped, or another app's token); set it to this app's %s", v, e.Reason, strings.TrimPrefix(token, "the "))
}

// tokenRefusals are the auth.test errors that say the token itself is refused, not that Slack
// could not be asked.
var tokenRefusals = []string{"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "not_allowed_token_type"}

// CheckToken asks Slack whom cfg's bot token stands for, as Adapter.CheckToken does, before
// there is an adapter: it needs only the token, APIURL and HTTPClient of cfg. Give what it learns
// to the adapter made later with Know.
func CheckToken(ctx context.Context, cfg Config) (Installation, error) {
	return checker(cfg).CheckToken(ctx)
}

// CheckAppToken asks Slack for a Socket Mode connection with cfg's app-level token, as
// Adapter.CheckAppToken does, before there is an adapter.
func CheckAppToken(ctx context.Context, cfg Config) error {
	return checker(cfg).CheckAppToken(ctx)
}

// checker is an adapter that can only ask Slack about its tokens.
func checker(cfg Config) *Adapter {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	a := &Adapter{cfg: cfg, out: newOutbox(DefaultChannelInterval, inflight.NewTracker())}
	a.api = slack.New(cfg.BotToken, a.clientOptions()...)
	return a
}

// Know records what Slack said of the bot token (the bot user's name and id) when it was asked
// before the adapter was made (CheckToken).
func (a *Adapter) Know(in Installation) {
	if in.BotUser != "" {
		a.bot.Store(in.BotUser)
	}
	if in.BotUserID != "" {
		a.botUserID.Store(in.BotUserID)
	}
}

// CheckToken asks Slack whom the bot token stands for. The error is a *TokenRefusedError when
// Slack refuses the token; any other error (Slack could not be reached) says nothing of the token.
func (a *Adapter) CheckToken(ctx context.Context) (Installation, error) {
	var r *slack.AuthTestResponse
	err := a.out.retry(ctx, func() error {
		var err error
		r, err = a.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && slices.Contains(tokenRefusals, se.Err) {
			return Installation{}, &TokenRefusedError{Variable: "SLACK_BOT_TOKEN", Reason: se.Err}
		}
		return Installation{}, fmt.Errorf("slack: auth.test: %w", err)
	}
	in := Installation{Team: r.Team, TeamID: r.TeamID, BotUser: r.User, BotUserID: r.UserID}
	a.Know(in)
	if h := r.Header; h != nil && h.Get("X-OAuth-Scopes") != "" {
		in.Granted = []string{}
		for _, s := range strings.Split(h.Get("X-OAuth-Scopes"), ",") {
			if s = strings.TrimSpace(s); s != "" {
				in.Granted = append(in.Granted, s)
			}
		}
	}
	return in, nil
}

// CheckAppToken asks Slack for a Socket Mode connection with the app-level token, as
// RunSocketMode will, without connecting. The error is a *TokenRefusedError when Slack refuses
// the token (Socket Mode would stop at once); any other error says nothing of the token. Without
// an app token there is nothing to check.
func (a *Adapter) CheckAppToken(ctx context.Context) error {
	if a.cfg.AppToken == "" {
		return nil
	}
	api := slack.New(a.cfg.BotToken, append(a.clientOptions(), slack.OptionAppLevelToken(a.cfg.AppToken))...)
	err := a.out.retry(ctx, func() error {
		_, _, err := api.StartSocketModeContext(ctx)
		return err
	})
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && slices.Contains(tokenRefusals, se.Err) {
		return &TokenRefusedError{Variable: "SLACK_APP_TOKEN", Reason: se.Err}
	}
	if err != nil {
		return fmt.Errorf("slack: apps.connections.open: %w", err)
	}
	return nil
}

// defaultBotName is the bot user's name in manifest.yaml, until Slack says what it is.
const defaultBotName = "quartermaster"

// botName is the bot user's name, for "/invite @NAME".
func (a *Adapter) botName() string {
	if n, ok := a.bot.Load().(string); ok && n != "" {
		return n
	}
	return defaultBotName
}

// unreachable explains a Slack error that keeps a message from reaching "to" (a #channel or a
// person's email), saying what an admin does about it, with Slack's code kept; any other error
// is returned as it is.
func (a *Adapter) unreachable(to string, err error) error {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return err
	}
	var why string
	switch se.Err {
	case "not_in_channel":
		why = fmt.Sprintf("Quartermaster is not a member of %s, so it cannot post there: invite it (/invite @%s in %s); a private channel needs the invitation", to, a.botName(), to)
	case "channel_not_found":
		why = fmt.Sprintf("Slack knows no channel %s that Quartermaster can see: check the channel's name in the policy (was it renamed?), or, if it is private, invite the bot there (/invite @%s)", to, a.botName())
	case "is_archived":
		why = fmt.Sprintf("%s is archived: unarchive it, or name another channel in the policy", to)
	case "restricted_action", "restricted_action_read_only_channel", "restricted_action_thread_only_channel":
		why = fmt.Sprintf("a setting of %s or of the workspace keeps Quartermaster from posting there: ask a workspace admin, or name another channel in the policy", to)
	case "users_not_found":
		why = fmt.Sprintf("no Slack user has the email %s on their profile: the person needs a Slack account with that email (or, with single sign-on, to link theirs with /gpu login)", to)
	default:
		return err
	}
	return fmt.Errorf("%s (%w)", why, err)
}
