package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
)

// OptionType is the Discord type an option is registered with.
type OptionType int

// Option types.
const (
	OptionString  OptionType = iota // any text; the grammar judges it
	OptionInteger                   // a whole number
	OptionBoolean                   // true or false (a flag)
)

// Option is one typed option of a subcommand.
type Option struct {
	Name        string
	Type        OptionType
	Required    bool
	Description string
	// Choices are the only values offered (the policy's classes). Registered as Discord's
	// choices when they fit (25 at most, within the command's characters); otherwise they are
	// suggested as the option is typed.
	Choices []string
	// Autocomplete names what to suggest as the option is typed ("lease", "template",
	// "team:charged", "data"); it is handed to the Completer. Empty: nothing is suggested.
	Autocomplete string
	// OneWord says the grammar reads the value as one word, so a value with spaces is refused.
	OneWord bool
	// MinValue bounds an integer from below when set.
	MinValue *float64
	// Typed is how the option is typed, name:VALUE, as usage and help write it; empty: the name,
	// a colon and the name in capitals (True for a boolean).
	Typed string
}

// Command is one /gpu subcommand.
type Command struct {
	// Name is the subcommand (lower case, at most 32 characters): "request", "quota-request".
	Name        string
	Description string
	// Example is a command line that works, shown beside a refusal.
	Example string
	// Usage is the command as the text grammar writes it ("/gpu extend LEASE DURATION"): where a
	// message shows it (/gpu help), Discord shows the options instead (UsageOf).
	Usage   string
	Options []Option
	// Text rebuilds the /gpu command line from the given options' values (integers in decimal,
	// booleans as "true"/"false"), for the handler's grammar to read.
	Text func(values map[string]string) string
}

// OptionValue is one option of a subcommand and its value.
type OptionValue struct {
	Name  string
	Value string
	// Known says the value is one of its kind that the installation knows (a class or team of the
	// policy, a lease id, a number, a command's name) or a placeholder such as REASON: a command
	// named in a sentence takes a following word as an option's value only when it is known.
	Known bool
}

func (c *Command) option(name string) (*Option, bool) {
	for i := range c.Options {
		if c.Options[i].Name == name {
			return &c.Options[i], true
		}
	}
	return nil, false
}

// optionNames says which options c takes, in a sentence that agrees with how many: "its options
// are lease, hours", "its option is lease", "it takes no options".
func (c *Command) optionNames() string {
	var n []string
	for _, o := range c.Options {
		n = append(n, o.Name)
	}
	switch len(n) {
	case 0:
		return "it takes no options"
	case 1:
		return "its option is " + n[0]
	}
	return "its options are " + strings.Join(n, ", ")
}

// Discord's limits on a chat command (https://discord.com/developers/docs/interactions/application-commands).
const (
	maxSubcommands      = 25
	maxOptions          = 25
	maxChoices          = 25
	maxDescription      = 100
	maxChoiceName       = 100
	maxCommandChars     = 8000 // names, descriptions and choice names and values, all together
	maxAutocompleteSize = 25
)

var nameRE = regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)

// ApplicationCommand is /NAME with one subcommand per command, each option typed, required ones
// first (Discord's rule), as `register` installs it.
func ApplicationCommand(name string, cmds []Command) *discordgo.ApplicationCommand {
	if name == "" {
		name = DefaultName
	}
	ac := &discordgo.ApplicationCommand{
		Type:        discordgo.ChatApplicationCommand,
		Name:        name,
		Description: "GPUs without a ticket: ask, extend, release, approve",
		Contexts:    &[]discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM},
	}
	for _, c := range cmds {
		sub := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand, Name: c.Name, Description: clipWords(c.Description, maxDescription)}
		opts := slices.Clone(c.Options)
		slices.SortStableFunc(opts, func(x, y Option) int {
			switch {
			case x.Required == y.Required:
				return 0
			case x.Required:
				return -1
			}
			return 1
		})
		for _, o := range opts {
			op := &discordgo.ApplicationCommandOption{Name: o.Name, Description: clipWords(nonEmpty(o.Description, o.Name), maxDescription),
				Required: o.Required, MinValue: o.MinValue}
			switch o.Type {
			case OptionInteger:
				op.Type = discordgo.ApplicationCommandOptionInteger
			case OptionBoolean:
				op.Type = discordgo.ApplicationCommandOptionBoolean
			default:
				op.Type = discordgo.ApplicationCommandOptionString
			}
			if len(o.Choices) <= maxChoices {
				for _, ch := range o.Choices {
					op.Choices = append(op.Choices, &discordgo.ApplicationCommandOptionChoice{Name: bot.Clip(ch, maxChoiceName), Value: ch})
				}
			}
			// More values than Discord shows as choices are suggested as they are typed instead.
			op.Autocomplete = len(op.Choices) == 0 && (o.Autocomplete != "" || len(o.Choices) > 0)
			sub.Options = append(sub.Options, op)
		}
		ac.Options = append(ac.Options, sub)
	}
	// Choices that would take the command past Discord's characters are suggested as they are
	// typed instead, the longest lists first, so a big catalog still registers.
	for commandChars(ac) > maxCommandChars {
		var longest *discordgo.ApplicationCommandOption
		most := 0
		for _, sub := range ac.Options {
			for _, op := range sub.Options {
				if n := choiceChars(op); n > most {
					longest, most = op, n
				}
			}
		}
		if longest == nil {
			break
		}
		longest.Choices, longest.Autocomplete = nil, true
	}
	return ac
}

// commandChars counts what Discord's limit on a command's characters counts: names,
// descriptions, and choices' names and values.
func commandChars(ac *discordgo.ApplicationCommand) int {
	n := utf8.RuneCountInString(ac.Name) + utf8.RuneCountInString(ac.Description)
	for _, sub := range ac.Options {
		n += utf8.RuneCountInString(sub.Name) + utf8.RuneCountInString(sub.Description)
		for _, op := range sub.Options {
			n += utf8.RuneCountInString(op.Name) + utf8.RuneCountInString(op.Description) + choiceChars(op)
		}
	}
	return n
}

func choiceChars(op *discordgo.ApplicationCommandOption) int {
	n := 0
	for _, ch := range op.Choices {
		n += utf8.RuneCountInString(ch.Name) + utf8.RuneCountInString(fmt.Sprint(ch.Value))
	}
	return n
}

// Validate checks an application command against Discord's limits, so registration fails here
// with a sentence rather than at Discord with a code.
func Validate(ac *discordgo.ApplicationCommand) error {
	var errs []error
	if !nameRE.MatchString(ac.Name) {
		errs = append(errs, fmt.Errorf("the command name %q must be 1-32 lower-case letters, digits, - or _", ac.Name))
	}
	if len(ac.Options) > maxSubcommands {
		errs = append(errs, fmt.Errorf("/%s has %d subcommands; Discord allows %d", ac.Name, len(ac.Options), maxSubcommands))
	}
	for _, sub := range ac.Options {
		if !nameRE.MatchString(sub.Name) {
			errs = append(errs, fmt.Errorf("the subcommand name %q must be 1-32 lower-case letters, digits, - or _", sub.Name))
		}
		if sub.Description == "" || utf8.RuneCountInString(sub.Description) > maxDescription {
			errs = append(errs, fmt.Errorf("/%s %s needs a description of 1-%d characters", ac.Name, sub.Name, maxDescription))
		}
		if len(sub.Options) > maxOptions {
			errs = append(errs, fmt.Errorf("/%s %s has %d options; Discord allows %d", ac.Name, sub.Name, len(sub.Options), maxOptions))
		}
		optional := false
		seen := map[string]bool{}
		for _, o := range sub.Options {
			if !nameRE.MatchString(o.Name) || seen[o.Name] {
				errs = append(errs, fmt.Errorf("/%s %s: the option name %q must be 1-32 lower-case letters, digits, - or _, once", ac.Name, sub.Name, o.Name))
			}
			seen[o.Name] = true
			if o.Required && optional {
				errs = append(errs, fmt.Errorf("/%s %s: the required option %s comes after an optional one", ac.Name, sub.Name, o.Name))
			}
			optional = optional || !o.Required
			if len(o.Choices) > maxChoices {
				errs = append(errs, fmt.Errorf("/%s %s: the option %s has %d choices; Discord allows %d", ac.Name, sub.Name, o.Name, len(o.Choices), maxChoices))
			}
			if o.Autocomplete && len(o.Choices) > 0 {
				errs = append(errs, fmt.Errorf("/%s %s: the option %s has both choices and autocomplete", ac.Name, sub.Name, o.Name))
			}
		}
	}
	if chars := commandChars(ac); chars > maxCommandChars {
		errs = append(errs, fmt.Errorf("/%s has %d characters of names, descriptions and choices; Discord allows %d", ac.Name, chars, maxCommandChars))
	}
	return errors.Join(errs...)
}

// Register installs /NAME, replacing every command the application had (Discord's bulk
// overwrite): in one guild when guildID is set (at once, for trying it), else globally.
func Register(ctx context.Context, cfg Config, guildID string) (*discordgo.ApplicationCommand, error) {
	if cfg.AppID == "" {
		return nil, errors.New("discord: the application id (DISCORD_APP_ID) is required to register the command")
	}
	if cfg.BotToken == "" {
		return nil, errors.New("discord: a bot token (DISCORD_BOT_TOKEN) is required to register the command")
	}
	ac := ApplicationCommand(cfg.Name, cfg.Commands)
	if err := Validate(ac); err != nil {
		return nil, fmt.Errorf("discord: /%s does not fit Discord's limits: %w", ac.Name, err)
	}
	s, err := newSession(cfg.BotToken, cfg.APIURL, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	body, err := Payload(ac)
	if err != nil {
		return nil, err
	}
	endpoint := discordgo.EndpointApplicationGlobalCommands(cfg.AppID)
	if guildID != "" {
		endpoint = discordgo.EndpointApplicationGuildCommands(cfg.AppID, guildID)
	}
	a := &Adapter{log: cfgLogger(cfg)}
	var got []*discordgo.ApplicationCommand
	err = a.retry(ctx, func() error {
		// The bulk overwrite discordgo would send, but from Payload: without its nulls.
		resp, err := s.RequestWithBucketID(http.MethodPut, endpoint, json.RawMessage("["+string(body)+"]"), endpoint, discordgo.WithContext(ctx))
		if err != nil {
			return err
		}
		return json.Unmarshal(resp, &got)
	})
	if err != nil {
		return nil, fmt.Errorf("discord: register /%s: %w", ac.Name, err)
	}
	for _, c := range got {
		if c.Name == ac.Name {
			return c, nil
		}
	}
	return ac, nil
}

// Payload is ac as Discord takes it, the JSON that Register sends and register --print shows:
// discordgo writes every option's channel_types, choices and options, null when there are none,
// where Discord documents optional arrays that are left out when absent. Payload leaves out every
// null, and keeps the fields' order.
func Payload(ac *discordgo.ApplicationCommand) ([]byte, error) {
	raw, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("discord: write /%s: %w", ac.Name, err)
	}
	var b bytes.Buffer
	if err := withoutNulls(&b, raw); err != nil {
		return nil, fmt.Errorf("discord: write /%s: %w", ac.Name, err)
	}
	return b.Bytes(), nil
}

// withoutNulls writes the JSON value raw to b, leaving out each object member whose value is null.
func withoutNulls(b *bytes.Buffer, raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		b.WriteByte('{')
		first := true
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if string(v) == "null" {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			key, _ := json.Marshal(k)
			b.Write(key)
			b.WriteByte(':')
			if err := withoutNulls(b, v); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case json.Delim('['):
		b.WriteByte('[')
		for i := 0; dec.More(); i++ {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if i > 0 {
				b.WriteByte(',')
			}
			if err := withoutNulls(b, v); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		b.Write(bytes.TrimSpace(raw))
	}
	return nil
}

func cfgLogger(cfg Config) *slog.Logger {
	if cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return cfg.Logger.With("adapter", "discord")
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// clipWords shortens s to at most n characters as clip does, but after a whole word: a
// description Discord shows cut ends "… see their…", not "… see their te…". A single word longer
// than n is cut as clip cuts it.
func clipWords(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n <= 1 {
		return bot.Clip(s, n)
	}
	for i := n - 1; i > 0; i-- {
		if unicode.IsSpace(r[i]) {
			head := strings.TrimRightFunc(string(r[:i]), func(c rune) bool { return unicode.IsSpace(c) || strings.ContainsRune(",;:(-–—", c) })
			if head != "" {
				return head + "…"
			}
		}
	}
	return bot.Clip(s, n)
}
