package discord_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// typedBack reads a command as a Discord user types it (/gpu SUB name:value …, a value running to
// the next of the subcommand's option names) into the subcommand and its options, as typing it
// into Discord would send them.
func typedBack(t *testing.T, cmds []discord.Command, line string) (string, []discordtest.Opt) {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "/gpu ")
	if !ok {
		t.Fatalf("%q is not a /gpu command", line)
	}
	sub, rest, _ := strings.Cut(rest, " ")
	var names []string
	whole := map[string]bool{}
	for _, c := range cmds {
		if c.Name == sub {
			for _, o := range c.Options {
				names = append(names, o.Name)
				whole[o.Name] = o.Type == discord.OptionInteger
			}
		}
	}
	if names == nil {
		t.Fatalf("%q: no subcommand %q", line, sub)
	}
	type at struct {
		name       string
		start, end int
	}
	var found []at
	for _, n := range names {
		for from := 0; ; {
			i := strings.Index(" "+rest[from:], " "+n+":")
			if i < 0 {
				break
			}
			found = append(found, at{n, from + i, from + i + len(n) + 1})
			from += i + len(n) + 1
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].start < found[j].start })
	var opts []discordtest.Opt
	for i, f := range found {
		end := len(rest)
		if i+1 < len(found) {
			end = found[i+1].start - 1
		}
		var v any = rest[f.end:end]
		if n, err := strconv.Atoi(rest[f.end:end]); err == nil && whole[f.name] {
			v = n // Discord sends a whole number as a number
		}
		opts = append(opts, discordtest.Opt{Name: f.name, Value: v})
	}
	return sub, opts
}

// A refusal's example that carries what someone typed (a reason "@here now") is the command put
// right, exactly as it is typed: no invisible character breaks the mention in it (it is written as
// code, where Discord makes no mention), so copied and typed back it runs.
func TestAnExampleWithAMentionCopiesAsTyped(t *testing.T) {
	k := newKestrel(t)
	r := k.run(kin(kZoe), "quota-request", discordtest.Opt{Name: "gpus", Value: 2}, discordtest.Opt{Name: "class", Value: "no-such-class"},
		discordtest.Opt{Name: "reason", Value: "@here now"})
	text := r.text()
	_, ex, ok := strings.Cut(text, "Example: ")
	if !ok {
		t.Fatalf("the refusal has no example: %q", text)
	}
	if strings.Contains(ex, "\u2060") {
		t.Errorf("the example holds an invisible character: %q", ex)
	}
	spans := codeSpans(ex)
	if len(spans) != 1 || !strings.HasPrefix(spans[0], "/gpu quota-request ") {
		t.Fatalf("the example %q is not one code span of the command", ex)
	}
	if l := live.FindString(strings.Replace(text, "`"+spans[0]+"`", "", 1)); l != "" {
		t.Errorf("the refusal holds a live %q outside its example: %q", l, text)
	}
	sub, opts := typedBack(t, k.cfg.Commands, spans[0])
	again := k.run(kin(kZoe), sub, opts...).text()
	if !strings.Contains(again, "will decide") || strings.Contains(again, "Example:") {
		t.Errorf("the example typed back (%q %+v) answers %q; want the quota request made", sub, opts, again)
	}
}

// A late answer given by DM names the command it answers as it was typed, exactly: a mention in
// it is not broken by an invisible character (it is code, where Discord makes no mention).
func TestALateAnswerNamesItsCommandAsTyped(t *testing.T) {
	k := newKestrel(t, func(c *discord.Config) { c.AnswerWithin = time.Nanosecond })
	k.run(kin(kTam), "request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "l40s"}, discordtest.Opt{Name: "duration", Value: "1h"})
	body := discordtest.Command(kin(kJorg), "gpu", "deny", discordtest.Opt{Name: "lease", Value: "L-1"}, discordtest.Opt{Name: "reason", Value: "@everyone not now"})
	k.fake.Expire(discordtest.ID(body))
	k.send(body)
	k.wait()
	var late string
	for _, m := range k.fake.PostsTo(discordtest.DMChannel(kJorg)) {
		if strings.Contains(m.Text(), "stopped waiting") {
			late = m.Text()
		}
	}
	if late == "" {
		t.Fatal("no late answer by DM")
	}
	spans := codeSpans(late)
	if len(spans) == 0 || spans[0] != "/gpu deny lease:L-1 reason:@everyone not now" {
		t.Errorf("the late answer names its command as %q: %q", spans, late)
	}
}
