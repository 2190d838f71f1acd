package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// BotUser is the bot user the bot token stands for.
type BotUser struct {
	ID, Name string
}

// TokenRefusedError is Discord refusing the bot token itself (HTTP 401): nothing the bot does,
// the gateway included, can work until it is replaced.
type TokenRefusedError struct {
	// Status is Discord's answer, e.g. "401 Unauthorized".
	Status string
}

func (e *TokenRefusedError) Error() string {
	status := e.Status
	if status == "" {
		status = "401 Unauthorized"
	}
	return fmt.Sprintf("Discord refuses DISCORD_BOT_TOKEN (%s: mistyped, reset since, or another application's token); set it to this application's bot token, which the Discord Developer Portal shows once on the application's Bot page under Reset Token (docs/discord.md)", status)
}

// CheckToken asks Discord whom cfg's bot token stands for, as Adapter.CheckToken does, before
// there is an adapter: it needs only the token, APIURL and HTTPClient of cfg.
func CheckToken(ctx context.Context, cfg Config) (BotUser, error) {
	s, err := newSession(cfg.BotToken, cfg.APIURL, cfg.HTTPClient)
	if err != nil {
		return BotUser{}, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return (&Adapter{cfg: cfg, s: s, log: log.With("adapter", "discord")}).CheckToken(ctx)
}

// CheckToken asks Discord whom the bot token stands for (GET /users/@me). The error is a
// *TokenRefusedError when Discord refuses the token; any other error (Discord could not be
// reached, or answered otherwise) says nothing of the token.
func (a *Adapter) CheckToken(ctx context.Context) (BotUser, error) {
	var u *discordgo.User
	err := a.retry(ctx, func() error {
		var err error
		u, err = a.s.User("@me", discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		var re *discordgo.RESTError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
			return BotUser{}, &TokenRefusedError{Status: re.Response.Status}
		}
		return BotUser{}, fmt.Errorf("discord: GET /users/@me: %w", err)
	}
	if u == nil {
		return BotUser{}, errors.New("discord: GET /users/@me: an empty answer")
	}
	return BotUser{ID: u.ID, Name: u.Username}, nil
}
