package discord

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
)

// The handler writes commands as Slack's /gpu takes them, words after the command
// ("/gpu deny L-5 REASON"); Discord's /gpu takes options (/gpu deny lease:L-5 reason:REASON) and
// refuses the words. Every text a Discord message shows names its commands Discord's way.

// discordTexts is what is done to each text of r before it is shown: defanged, with every command
// it names written as a Discord user types it, but for what someone typed that it shows (r.Typed):
// a reason that names /gpu approve L-5 is shown as typed, as Slack shows it. It is applied to each
// text as it is placed, so that a long answer maps only the sections a message shows (mapSection).
func (a *Adapter) discordTexts(r bot.Reply) func(string) string {
	typed := make([]string, 0, len(r.Typed))
	for _, t := range r.Typed {
		if strings.Contains(t, handlerCommand+" ") {
			typed = append(typed, t)
		}
	}
	if len(typed) == 0 {
		return func(text string) string { return a.discordText(defang(a.exampleAsCode(text))) }
	}
	// The longest first, so that a typed text within another is kept with it. Each is found
	// before defang escapes its marks, which would make it another text.
	slices.SortFunc(typed, func(x, y string) int { return cmp.Compare(len(y), len(x)) })
	return func(text string) string {
		text = a.exampleAsCode(text)
		for _, t := range typed {
			text = strings.ReplaceAll(text, t, strings.ReplaceAll(t, handlerCommand+" ", keptCommand))
		}
		return strings.ReplaceAll(a.discordText(defang(text)), keptCommand, handlerCommand+" ")
	}
}

// exampleAsCode is text with the example that ends it ("Example: /gpu deny L-5 @here now") written
// as code, as a Discord user types it, when it holds what would otherwise be broken up so as not
// to ping (what someone typed, put back in the command): copied, the example is exactly the
// command, with no invisible character in it, and Discord parses no mention in code.
func (a *Adapter) exampleAsCode(text string) string {
	const label = "Example: "
	i := strings.LastIndex(text, label+handlerCommand+" ")
	if i < 0 {
		return text
	}
	tail := text[i+len(label):]
	if !pings(tail) || strings.Contains(tail, "\n") {
		return text
	}
	typed := a.typed(tail)
	if typed == tail {
		typed = a.namedCommands(tail)
	}
	return text[:i+len(label)] + codeSpan(typed)
}

// keptCommand stands for "/gpu " in what someone typed while the bot's own commands around it
// are rewritten: no command starts with it, and it holds a NUL, which a reason never keeps.
const keptCommand = "/\x00gpu "

// discordText is text with the commands it names written as a Discord user types them: the
// example that ends a refusal ("Example: /gpu request 1 dev for 4h"), a command's usage as help
// shows it (UsageOf), and every other /gpu command it names (namedCommands).
func (a *Adapter) discordText(text string) string {
	if !strings.Contains(text, handlerCommand+" ") {
		return text
	}
	const label = "Example: "
	tail := ""
	if i := strings.LastIndex(text, label+handlerCommand+" "); i >= 0 {
		text, tail = text[:i+len(label)], text[i+len(label):]
		if typed := a.typed(tail); typed != tail {
			tail = typed
		} else {
			tail = a.namedCommands(tail)
		}
	}
	return a.namedCommands(a.usages(text)) + tail
}

// usages replaces each command's usage as the grammar writes it ("/gpu extend LEASE DURATION")
// with its options (/gpu extend lease:LEASE duration:DURATION), the longest usage first.
func (a *Adapter) usages(text string) string {
	cmds := slices.Clone(a.cfg.Commands)
	slices.SortFunc(cmds, func(x, y Command) int { return cmp.Compare(len(y.Usage), len(x.Usage)) })
	for _, c := range cmds {
		if strings.HasPrefix(c.Usage, handlerCommand+" ") && strings.Contains(text, c.Usage) {
			text = strings.ReplaceAll(text, c.Usage, UsageOf(a.cfg.Name, c))
		}
	}
	return text
}

// UsageOf is how a Discord user types c: /NAME SUB, then each option as name:VALUE, required
// ones first (as Discord lists them) and optional ones in brackets: /gpu deny lease:LEASE
// [reason:REASON].
func UsageOf(name string, c Command) string {
	if name == "" {
		name = DefaultName
	}
	parts := []string{"/" + name, c.Name}
	for _, required := range []bool{true, false} {
		for _, o := range c.Options {
			if o.Required != required {
				continue
			}
			w := o.Typed
			if w == "" {
				v := strings.ToUpper(strings.ReplaceAll(o.Name, "-", "_"))
				if o.Type == OptionBoolean {
					v = "True"
				}
				w = o.Name + ":" + v
			}
			if !o.Required {
				w = "[" + w + "]"
			}
			parts = append(parts, w)
		}
	}
	return strings.Join(parts, " ")
}

// namedCommands writes each /gpu command text names ("or /gpu approve L-5, /gpu deny L-5
// REASON.") as a Discord user types it (/gpu approve lease:L-5, /gpu deny lease:L-5
// reason:REASON.). A command runs at most to the end of its clause (a comma, a full stop, a
// bracket, the end of the line) and takes the longest run of the words there that OptionsOf
// reads, where each value is a known one (OptionValue.Known) or the command is all its line
// holds; the words after it are prose and stay as they are ("/gpu help lists them").
func (a *Adapter) namedCommands(text string) string {
	if a.cfg.OptionsOf == nil {
		return text
	}
	const start = handlerCommand + " "
	var b strings.Builder
	for {
		i := strings.Index(text, start)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		if prev, _ := utf8.DecodeLastRuneInString(text[:i]); i > 0 && (unicode.IsLetter(prev) || unicode.IsDigit(prev) || strings.ContainsRune("/.:-_", prev)) {
			// Part of a path or an address (…/gpu ), not a command.
			b.WriteString(text[:i+len(start)])
			text = text[i+len(start):]
			continue
		}
		b.WriteString(text[:i])
		text = text[i:]
		line, _, _ := strings.Cut(text, "\n")
		words, ends, whole := clause(line)
		// Written with its options already (a usage that usages wrote: /gpu unlink who:WHO).
		done := a.typedAlready(words)
		if done {
			b.WriteString(start)
			text = text[len(start):]
		}
		for n := len(words); n >= 2 && !done; n-- {
			sub, opts, ok := a.cfg.OptionsOf(strings.Join(words[:n], " "))
			if !ok || !(n == len(words) && whole || allKnown(opts)) {
				continue
			}
			parts := []string{"/" + a.cfg.Name, sub}
			for _, o := range opts {
				parts = append(parts, o.Name+":"+o.Value)
			}
			b.WriteString(strings.Join(parts, " "))
			text = text[ends[n-1]:]
			done = true
		}
		if !done {
			b.WriteString(start)
			text = text[len(start):]
		}
	}
}

// typedAlready reports whether the words of a command named in a text (/gpu SUB …) are written
// as Discord takes them already: the word after the subcommand is one of its options, name:….
func (a *Adapter) typedAlready(words []string) bool {
	if len(words) < 3 {
		return false
	}
	for _, c := range a.cfg.Commands {
		if c.Name != words[1] {
			continue
		}
		for _, o := range c.Options {
			if strings.HasPrefix(strings.TrimPrefix(words[2], "["), o.Name+":") {
				return true
			}
		}
	}
	return false
}

// clause is the words of a command named at the start of line, up to the end of its clause, with
// the byte offset in line after each; whole says the clause is all the line holds (but for a
// full stop).
func clause(line string) (words []string, ends []int, whole bool) {
	at := 0
	for at < len(line) {
		for at < len(line) && line[at] == ' ' {
			at++
		}
		if at == len(line) {
			return words, ends, true
		}
		end := at + strings.IndexByte(line[at:]+" ", ' ')
		w := line[at:end]
		if strings.ContainsAny(w[:1], "[(`\"“'") {
			return words, ends, false
		}
		trimmed := strings.TrimRight(w, ",;.:!?)`\"”'")
		if k := strings.IndexByte(trimmed, '`'); k >= 0 {
			trimmed = trimmed[:k]
		}
		if trimmed != "" {
			words = append(words, trimmed)
			ends = append(ends, at+len(trimmed))
		}
		if trimmed != w {
			rest := strings.TrimSpace(line[at+len(trimmed):])
			return words, ends, rest == "" || rest == "."
		}
		at = end
	}
	return words, ends, true
}

func allKnown(opts []OptionValue) bool {
	for _, o := range opts {
		if !o.Known {
			return false
		}
	}
	return true
}
