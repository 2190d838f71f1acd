// Package gputable turns the command table into Discord's /gpu subcommands and reads a typed
// /gpu command line back as the subcommand and options that run it, for serve and for tests
// that drive the Discord adapter with the real table.
package gputable

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"

	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/policy"
)

// Commands are the command table's offered commands as Discord subcommands: integers as
// integers, flags as booleans, classes with the policy's classes as choices, lease ids, template
// names, teams and data classes suggested as they are typed (Complete suggests the teams and data
// classes), everything else as text (one word, except free text, a week, which may be "last
// week", and a duration, which may be "1h 30m"). /gpu quota
// request is the subcommand quota-request (Discord cannot have a group and a subcommand both
// named quota).
func Commands(b *commands.Bot) []discordbot.Command {
	one := 1.0
	offered := b.Offered()
	var out []discordbot.Command
	for _, s := range offered {
		c := discordbot.Command{Name: s.Name, Description: s.Summary, Example: b.Example(s), Usage: s.Usage, Text: s.Text}
		for _, p := range s.Params {
			o := discordbot.Option{Name: p.Name, Typed: p.Option(), Required: p.Required, Description: p.HelpFor(true), OneWord: p.Type != commands.TText && p.Type != commands.TWeek && p.Type != commands.TDuration}
			switch p.Type {
			case commands.TInt:
				o.Type, o.MinValue = discordbot.OptionInteger, &one
			case commands.TFlag:
				o.Type = discordbot.OptionBoolean
			case commands.TClass:
				o.Choices = b.Svc.Policy.ClassNames()
			case commands.TLease:
				o.Autocomplete = "lease"
				if p.Leases != commands.LeasesAny {
					o.Autocomplete += ":" + p.Leases
				}
			case commands.TTemplate:
				o.Autocomplete = "template"
			case commands.TTeam:
				o.Autocomplete = "team:" + p.Teams
			case commands.TString:
				if p.Keyword == "data" {
					o.Autocomplete = "data"
				}
			}
			if s.Name == "help" && p.Name == "command" && len(offered) <= 25 {
				for _, x := range offered {
					o.Choices = append(o.Choices, x.Name)
				}
			}
			c.Options = append(c.Options, o)
		}
		out = append(out, c)
	}
	return out
}

// Complete suggests the teams and data classes of b's policy as it is when they are asked for, so a
// changed policy changes them with /gpu as it was registered. For a team option ("team:WHICH",
// WHICH being its Param.Teams): the teams its command takes from person (Bot.TeamsFor), their own
// first, the first named the default where the command takes it when none is named. For a data
// option ("data"): the data classes of the policy's teams, person's teams' first
// (Bot.DataClassesFor). Each matches what is typed as every option's suggestions do
// (discord.Suggests). Nothing for any other kind.
func Complete(b *commands.Bot) discordbot.Completer {
	return func(ctx context.Context, person, kind, typed string) []discordbot.Choice {
		kind, which, _ := strings.Cut(kind, ":")
		var out []discordbot.Choice
		switch kind {
		case "team":
			teams, mine := b.TeamsFor(ctx, person, which)
			for i, t := range teams {
				if !discordbot.Suggests(typed, t) {
					continue
				}
				name := t
				switch {
				case i == 0 && i < mine && which != commands.TeamsReport:
					name += " — your team, the default"
				case i < mine:
					name += " — your team"
				}
				out = append(out, discordbot.Choice{Name: name, Value: t})
			}
		case "data":
			classes, mine := b.DataClassesFor(ctx, person)
			for i, dc := range classes {
				if !discordbot.Suggests(typed, dc) {
					continue
				}
				name := dc
				switch {
				case i == 0 && i < mine:
					name += " — your team's, the default"
				case i < mine:
					name += " — your team's"
				}
				out = append(out, discordbot.Choice{Name: name, Value: dc})
			}
		}
		return out
	}
}

// Options reads a typed /gpu command line as the Discord subcommand and options that run
// it, for the commands Discord messages name (the examples beside refusals, the commands notices
// offer), each value marked known where it is one of its kind that b knows.
func Options(b *commands.Bot) func(line string) (string, []discordbot.OptionValue, bool) {
	return func(line string) (string, []discordbot.OptionValue, bool) {
		s, vs, ok := commands.Options(line)
		if !ok {
			return "", nil, false
		}
		out := make([]discordbot.OptionValue, len(vs))
		template := ""
		for i, v := range vs {
			out[i] = discordbot.OptionValue{Name: v.Name, Value: v.Value}
			for _, p := range s.Params {
				if p.Name == v.Name {
					out[i].Known = knownValue(b, p, v.Value)
					if p.Type == commands.TTemplate {
						template = v.Value
					}
				}
			}
		}
		for i, v := range vs {
			for _, p := range s.Params {
				if p.Name == v.Name && p.Type == commands.TText && p.Keyword == "" && template != "" {
					out[i].Known = templateParams(b, template, v.Value)
				}
			}
		}
		return s.Name, out, true
	}
}

var isoWeekRE = regexp.MustCompile(`^\d{4}-W\d{2}$`)

// knownValue reports whether v is a value of p's kind that b knows (a class or team of the
// policy, a template of the catalog, a command, a lease id, a number, a duration, a week, an
// email or account, free text after its keyword, a data class a team has), or a placeholder such as REASON: what a word after a command named in a
// sentence must be to be read as the command's, not as the sentence's.
func knownValue(b *commands.Bot, p commands.Param, v string) bool {
	if placeholder(v) {
		return true
	}
	switch p.Type {
	case commands.TInt, commands.TDuration, commands.TLease, commands.TFlag:
		return true // Options took it as one already
	case commands.TClass:
		_, ok := b.Svc.Policy.Class(v)
		return ok
	case commands.TTeam:
		_, ok := b.Svc.Policy.Team(v)
		return ok
	case commands.TTemplate:
		if b.Templates == nil {
			return false
		}
		_, err := b.Templates.Catalog.Get(v)
		return err == nil
	case commands.TWeek:
		return v == "this week" || v == "last week" || isoWeekRE.MatchString(v)
	case commands.TString:
		if p.Keyword == "data" {
			// A data class after its keyword: one that a team of the policy has.
			return slices.ContainsFunc(b.DataClasses(), func(dc string) bool { return policy.NameKey(dc) == policy.NameKey(v) })
		}
		_, ok := commands.Lookup(v)
		return ok || strings.ContainsAny(v, "@:")
	case commands.TText:
		// Free text its own keyword introduces ("because a deadline") is the command's: the
		// sentence reads it so too.
		return p.Keyword != ""
	}
	return false
}

// templateParams reports whether v is parameters (key=value …) that the template named template
// takes: what follows the template in "/gpu submit jupyterlab root=notebooks" is the command's.
func templateParams(b *commands.Bot, template, v string) bool {
	if b.Templates == nil {
		return false
	}
	t, err := b.Templates.Catalog.Get(template)
	if err != nil {
		return false
	}
	_, err = t.ParseParams(strings.Fields(v))
	return err == nil
}

// placeholder reports whether v stands for a value, written in capitals: REASON, LEASE, N.
func placeholder(v string) bool {
	upper := false
	for _, r := range v {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case r != '_' && !unicode.IsDigit(r):
			return false
		}
	}
	return upper
}

// Verbs are the names of every command of the command table, offered or not, as a DM may begin
// with them (discord.Config.Verbs): each subcommand's name and its first word.
func Verbs() []string {
	var out []string
	for _, s := range commands.Table() {
		for _, v := range []string{s.Name, s.Words[0]} {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}
