package bot

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ReadDM reads the text someone sent the app in a direct message as a command: its verb, in lower
// case, and the words after it; false when the text begins with no verb (isVerb, which is asked
// about a word in lower case). Every chat platform reads a DM so:
//
//   - Before the verb may come one or two of names (the command's name with and without its slash,
//     "/gpu" and "gpu", and the app's mention as the platform writes it), upper and lower case
//     aside, with a colon or a comma after it, or a dash on its own ("gpu: list", "@quartermaster,
//     list", "gpu — list"). Names alone are help, where help is a command.
//   - What chat apps, phone keyboards and pastes put around a command is read through: white space
//     and invisible characters (zero-width spaces, the byte order mark) at either end, a code block
//     or span around all of it (```/gpu request 1```, ```text⏎gpu list⏎```, `list`), quotes around
//     all of it or around the verb (“request 1 interactive for 4h”, as a phone writes them), and a
//     dash that looks like the hyphen in the verb (quota‐request).
//
// What comes after the verb is left as written, for the command's parser to read (it reads
// typographic quotes, and answers a lease id written with an en dash with the id meant), except
// that line breaks and runs of white space between words become one space.
func ReadDM(text string, names []string, isVerb func(string) bool) (verb string, args []string, ok bool) {
	text = trimInvisible(text)
	// A few layers at most (“`/gpu list`” is two), so that a run of quotes costs no more than
	// reading it once.
	for range maxDMLayers {
		if verb, args, ok = readDMWords(text, names, isVerb); ok {
			return verb, args, true
		}
		inner, lang, wrapped := unwrapDM(text)
		if !wrapped {
			return "", nil, false
		}
		if lang != "" {
			// A code block whose first line may be its language (```text⏎gpu list⏎```): read
			// with it first, as a command it may be, then without.
			if verb, args, ok = readDMWords(trimInvisible(inner), names, isVerb); ok {
				return verb, args, true
			}
			inner = strings.TrimPrefix(inner, lang)
		}
		text = trimInvisible(inner)
	}
	return "", nil, false
}

// maxDMLayers is how many wrappings (a code block, a code span, quotes) ReadDM reads through.
const maxDMLayers = 4

// readDMWords reads text, unwrapped, as ReadDM does.
func readDMWords(text string, names []string, isVerb func(string) bool) (string, []string, bool) {
	f := strings.Fields(text)
	named := false
	for range 2 {
		if len(f) == 0 || !isDMName(f[0], names) {
			break
		}
		f, named = f[1:], true
		if len(f) > 0 && strings.Trim(plainDash.Replace(f[0]), "-:") == "" {
			f = f[1:] // gpu — list
		}
	}
	if len(f) == 0 {
		if named && isVerb("help") {
			return "help", nil, true
		}
		return "", nil, false
	}
	v := strings.ToLower(plainDash.Replace(unquoteWord(f[0])))
	if !isVerb(v) {
		return "", nil, false
	}
	return v, f[1:], true
}

// isDMName says whether w is one of names, upper and lower case aside, with a colon or a comma
// after it or not.
func isDMName(w string, names []string) bool {
	w = strings.TrimRight(w, ":,")
	for _, n := range names {
		if n != "" && strings.EqualFold(w, n) {
			return true
		}
	}
	return false
}

// dmQuotes are the quotes that may open and close a command written in quotes: plain, and the
// typographic ones phones and word processors put in for them.
const dmQuotes = "\"'“”„‘’‚«»"

// unwrapDM is text without what is around all of it: a code block (with lang, its first line,
// when that is one word on a line of its own: a language, or the command's verb), a code span, or
// quotes. False when nothing is around it.
func unwrapDM(text string) (inner, lang string, ok bool) {
	if len(text) >= 6 && strings.HasPrefix(text, "```") && strings.HasSuffix(text, "```") {
		inner = text[3 : len(text)-3]
		if first, rest, found := strings.Cut(inner, "\n"); found && first != "" && !strings.ContainsFunc(first, unicode.IsSpace) && strings.TrimSpace(rest) != "" {
			lang = first
		}
		return inner, lang, true
	}
	for _, tick := range []string{"``", "`"} {
		if len(text) > 2*len(tick) && strings.HasPrefix(text, tick) && strings.HasSuffix(text, tick) {
			inner = text[len(tick) : len(text)-len(tick)]
			if !strings.Contains(inner, "`") {
				return inner, "", true
			}
		}
	}
	first, n := utf8.DecodeRuneInString(text)
	last, m := utf8.DecodeLastRuneInString(text)
	if len(text) > n+m && strings.ContainsRune(dmQuotes, first) && strings.ContainsRune(dmQuotes, last) {
		return text[n : len(text)-m], "", true
	}
	return "", "", false
}

// unquoteWord is w without quotes (plain or typographic) around all of it: “request”.
func unquoteWord(w string) string {
	first, n := utf8.DecodeRuneInString(w)
	last, m := utf8.DecodeLastRuneInString(w)
	if len(w) > n+m && strings.ContainsRune(dmQuotes, first) && strings.ContainsRune(dmQuotes, last) {
		return w[n : len(w)-m]
	}
	return w
}

// trimInvisible is s without white space and invisible format characters (zero-width spaces and
// joiners, direction marks, the byte order mark) at either end.
func trimInvisible(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) })
}

// plainDash reads the dashes that look like the hyphen - (the hyphen ‐, the non-breaking hyphen,
// the figure, en and em dashes, the horizontal bar, the minus sign, and the small and full-width
// hyphen-minus) as the hyphen.
var plainDash = strings.NewReplacer("\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-",
	"\u2015", "-", "\u2212", "-", "\ufe63", "-", "\uff0d", "-")

// DMHint is the one sentence that answers a DM that is no command, the same on every platform:
// that the app answers /NAME commands there too, with example (a command line without its /NAME,
// one that works for the sender as it is sent; "": none) and, where help is a command, a pointer
// to it.
func DMHint(name, example string, help bool) string {
	example = strings.ReplaceAll(strings.TrimSpace(example), "`", "'")
	lead := fmt.Sprintf("Quartermaster answers /%s commands, here too without the slash", name)
	switch {
	case example != "" && help && example != "help":
		return fmt.Sprintf("%s: send `%s`, or `help` for the list.", lead, example)
	case example != "" && example != "help":
		return fmt.Sprintf("%s: send `%s`.", lead, example)
	case help:
		return lead + ": send `help` for the list."
	}
	return lead + "."
}

// TooLateToRun is what the sender of a command is told when a stop left it unrun until too late
// to run it, the same on every platform: the command (its first MaxShownCommand characters, for
// one too long to show whole), when it was sent, and to send it again.
func TooLateToRun(command string, sent time.Time) string {
	command = strings.ReplaceAll(strings.TrimSpace(command), "`", "'")
	if r := []rune(command); len(r) > MaxShownCommand {
		command = strings.TrimSpace(ClusterHead(command, MaxShownCommand)) + "…"
	}
	return fmt.Sprintf("Quartermaster stopped before it ran your command `%s` (sent %s UTC), and it is too late to run it now; send it again if you still want it.",
		command, sent.UTC().Format("2 Jan 15:04"))
}

// MaxShownCommand is the most characters of a command that an answer repeats.
const MaxShownCommand = 200
