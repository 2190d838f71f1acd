// Command quartermaster is the service, the console and the admin tools.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/shellword"
)

// subcommand is one verb of the quartermaster command line.
type subcommand struct {
	summary string
	// usage is the synopsis `quartermaster VERB --help` starts with, one or more lines.
	usage string
	// flags returns the verb's flags, for --help; nil when it takes none.
	flags func() *flag.FlagSet
	run   func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
	// checks says that run, where checking(ctx), refuses what it would refuse of the command line
	// and stops before it writes anything (its output, a file) or does the work it is for.
	checks bool
}

var subcommands = map[string]subcommand{}

// registerCommand adds a verb; each verb lives in its own file.
func registerCommand(name string, sc subcommand) {
	subcommands[name] = sc
}

func main() {
	ctx, stop := signalContext(os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// stoppedBy is why a command's context ended: a signal came (Ctrl-C, SIGTERM).
type stoppedBy struct{ sig syscall.Signal }

func (s stoppedBy) Error() string {
	switch s.sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "stopped (SIGTERM)"
	}
	return "stopped by " + s.sig.String()
}

// signalContext is a context that ends when one of sigs comes, with that signal as its cause
// (stoppedBy), so that a command it stops exits as a shell expects: 128 + the signal's number.
func signalContext(sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			if n, ok := s.(syscall.Signal); ok {
				cancel(stoppedBy{n})
			} else {
				cancel(nil)
			}
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

// errUsage marks an error whose message already says how to call the command.
type errUsage struct{ msg string }

// errFlagValue refuses the value a flag was given where the command that read it does not have the
// command line at hand: run answers it as refusal does, with the command as typed and the flag's
// value put right (value).
type errFlagValue struct{ what, name, value string }

func (e errFlagValue) Error() string { return fmt.Sprintf("%s; e.g. --%s %s", e.what, e.name, e.value) }

func (e errUsage) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 1 && isHelp(args[0]) && !strings.HasPrefix(args[1], "-") {
		// help COMMAND is COMMAND --help.
		sc, ok := subcommands[args[1]]
		if !ok {
			fmt.Fprintf(stderr, "quartermaster: %q is not a quartermaster command; %s\n", args[1], nearestCommand(args[1], func(near string) string {
				return "quartermaster help " + cmp.Or(near, "console")
			}))
			return 2
		}
		help(stdout, args[1], sc)
		return 0
	}
	if len(args) == 0 || isHelp(args[0]) {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if v := versionAfterFlags(args); v != nil {
		args = v // quartermaster --db x --version: the version, which reads none of those flags
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...) // --version --short is version --short
	}
	// refuse writes a refusal of the command line, its example put right until it is accepted.
	refuse := func(msg string) int {
		fmt.Fprintln(stderr, settled(ctx, msg))
		return 2
	}
	if fixed, ok := shellword.PlainDashes(args); ok {
		// A flag pasted from a document with a typographic dash (—db) is written with hyphens.
		if fixed[0] == "--version" || fixed[0] == "-version" {
			fixed[0] = "version"
		}
		if moved := commandFirst(fixed); moved != nil {
			fixed = moved
		}
		return refuse("quartermaster: a flag starts with two hyphens (--), not a typographic dash, as a document may show it; e.g. " + shellword.Join(append([]string{"quartermaster"}, fixed...)))
	}
	if moved := commandFirst(args); moved != nil {
		args = moved // flags of the command typed before it: the command's
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		// Flags typed before the command that are not all its own: the command, and its verb, put
		// first.
		if strings.HasPrefix(args[0], "-") {
			for i, a := range args {
				if _, ok := subcommands[a]; ok {
					front := []string{a}
					if v, ok := commandVerbs[a]; ok && i+1 < len(args) && slices.Contains(v.verbs, args[i+1]) {
						front = append(front, args[i+1])
					}
					rest := slices.Concat(args[:i], args[i+len(front):])
					return refuse(fmt.Sprintf("quartermaster: the command comes first, before its flags (%s), e.g. %s", args[0], shellword.Join(slices.Concat([]string{"quartermaster"}, front, rest))))
				}
			}
		}
		// The command put right, the rest of the line as typed; a word near no command, the
		// console, which needs nothing.
		return refuse(fmt.Sprintf("quartermaster: %q is not a quartermaster command; %s", args[0], nearestCommand(args[0], func(near string) string {
			if near == "" {
				return "quartermaster console"
			}
			return shellword.Join(append([]string{"quartermaster", near}, args[1:]...))
		})))
	}
	if wantsHelp(args[1:]) {
		help(stdout, args[0], sc)
		return 0
	}
	if err := emptyFlag(args[0], sc, args[1:]); err != nil {
		return refuse(fmt.Sprintf("quartermaster %s: %s", args[0], clause(err.Error())))
	}
	if err := checkSettingNames(os.Environ()); err != nil {
		return refuse(fmt.Sprintf("quartermaster %s: %s", args[0], clause(err.Error())))
	}
	if checking(ctx) {
		return checkLine(ctx, args, sc, stdout, stderr)
	}
	if err := sc.run(ctx, args[1:], stdin, stdout, stderr); err != nil {
		err = commandLineError(ctx, args, sc, err)
		if errors.Is(err, flag.ErrHelp) {
			help(stdout, args[0], sc)
			return 0
		}
		if _, ok := err.(errUsage); ok && ctx.Err() == nil {
			return refuse(fmt.Sprintf("quartermaster %s: %s", args[0], clause(err.Error())))
		}
		fmt.Fprintf(stderr, "quartermaster %s: %s\n", args[0], clause(err.Error()))
		// A command a signal stopped exits as a shell expects: 130 after Ctrl-C, 143 after SIGTERM.
		var sig stoppedBy
		if ctx.Err() != nil && errors.As(context.Cause(ctx), &sig) {
			return 128 + int(sig.sig)
		}
		if _, ok := err.(errUsage); ok {
			return 2
		}
		return 1
	}
	return 0
}

// commandLineError is err, which command args[0] (sc) returned given args[1:], as a refusal of the
// command line where it is one: a policy file that cannot be read, a flag's value refused where
// the command line was not at hand; err as it is otherwise.
func commandLineError(ctx context.Context, args []string, sc subcommand, err error) error {
	var pf *policy.FileError
	if errors.As(err, &pf) && sc.flags != nil && ctx.Err() == nil {
		if _, serr := os.Stat(workingPolicy(pf)); serr != nil && checking(ctx) {
			// Where no policy file here loads in its place (the line names where a service keeps
			// it), the file is not the line's to put right, as report does.
			return nil
		}
		err = policyFileRefusal(pf, args[0], sc.flags(), args[1:])
	}
	var fv errFlagValue
	if errors.As(err, &fv) {
		err = errUsage{fv.Error()}
		if sc.flags != nil {
			err = refusal(fv.what, args[0], withFlag(sc.flags(), args[1:], fv.name, fv.value))
		}
	}
	return err
}

// clause is msg as it reads after the "quartermaster COMMAND: " prefix: one sentence with it. A
// message written as a sentence of its own (the service's errors start with a capital: "There is
// no team …", "Node … has no valid token") goes on in lower case; a name keeps its capitals (a
// product's, Slurm, PostgreSQL; a setting's, QM_POLICY; a lease's, L-3; a day's, Monday).
func clause(msg string) string {
	end := strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '’' })
	if end < 0 {
		end = len(msg)
	}
	if end == 0 || end < len(msg) && !strings.ContainsRune(" ,;:.!?", rune(msg[end])) {
		return msg // no word, or one joined to more (L-3, QM_POLICY, gpu01)
	}
	word := msg[:end]
	if i := strings.IndexAny(word, "'’"); i >= 0 {
		word = word[:i] // Slurm's
	}
	first, size := utf8.DecodeRuneInString(word)
	rest := word[size:]
	if !unicode.IsUpper(first) || strings.ToLower(rest) != rest || word == "I" || properNouns[word] {
		return msg
	}
	return string(unicode.ToLower(first)) + msg[size:]
}

// properNouns are the names a message may start with that keep their capital after a prefix:
// what the service talks to, and the days and months of a date.
var properNouns = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`Slurm Slack Discord Kubernetes Prometheus Go Docker Linux Grafana Okta Google GitHub
		Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mon Tue Wed Thu Fri Sat Sun
		January February March April May June July August September October November December
		Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec`) {
		m[w] = true
	}
	return m
}()

// misspelledVerb refuses word, typed where command (agent-token, templates…) takes one of verbs,
// when it is a misspelling of one: naming the one meant, with args (the words after command)
// typed back with it put right as the example. Nil when word is near none of verbs.
func misspelledVerb(command, word string, verbs, args []string) error {
	if strings.HasPrefix(word, "-") {
		return nil
	}
	near := nearFlag(strings.ToLower(word), verbs)
	if near == "" || slices.Contains(verbs, word) {
		return nil
	}
	fixed := slices.Clone(args)
	if i := slices.Index(fixed, word); i >= 0 {
		fixed[i] = near
	}
	article := "a"
	if strings.ContainsRune("aeiou", rune(command[0])) {
		article = "an"
	}
	return errUsage{fmt.Sprintf("%q is not %s %s command; the nearest is %s, e.g. %s", word, article, command, near,
		shellword.Join(append([]string{"quartermaster", command}, fixed...)))}
}

// notAVerb refuses word, typed where command (templates, migrate…) takes one of verbs and is
// none: a misspelling of one as misspelledVerb answers it, any other word in one sentence naming
// it and the verbs, with example (words after quartermaster command) as a command line that
// works. Nil for a flag (-x), which the caller answers.
func notAVerb(command, word string, verbs, args, example []string) error {
	if err := misspelledVerb(command, word, verbs, args); err != nil || strings.HasPrefix(word, "-") || slices.Contains(verbs, word) {
		return err
	}
	article := "a"
	if strings.ContainsRune("aeiou", rune(command[0])) {
		article = "an"
	}
	return errUsage{fmt.Sprintf("%q is not %s %s command; %s takes %s, e.g. %s", word, article, command, command, policy.JoinList(verbs, "or"),
		shellword.Join(append([]string{"quartermaster", command}, example...)))}
}

// needsVerb refuses command (agent-token, migrate, discord…), which takes one of verbs, given none:
// nothing at all, or only flags (args, as typed), which where verbFirst must come after the verb.
// One sentence names the verbs; its example is the command typed with verb (or the one typed
// after the flags, moved) put in front of args, and extra (what the verb needs besides) after.
func needsVerb(command string, verbFirst bool, verbs []string, verb string, args, extra []string) error {
	if sc, ok := subcommands[command]; ok && sc.flags != nil {
		// The verb typed after the flags (templates --policy F render) is the one put in front,
		// and left out where it was typed.
		moved := false
		for i, a := range args {
			if a == "--" {
				break
			}
			if slices.Contains(verbs, a) && !isFlagValue(sc.flags(), args, i) {
				verb, args, moved = a, slices.Delete(slices.Clone(args), i, i+1), true
				break
			}
		}
		// None typed, but one misspelled (templates --policy F lst): the one meant.
		for i, a := range args {
			if moved || a == "--" {
				break
			}
			if near := nearFlag(strings.ToLower(a), verbs); near != "" && !strings.HasPrefix(a, "-") && !isFlagValue(sc.flags(), args, i) {
				verb, args = near, slices.Delete(slices.Clone(args), i, i+1)
				break
			}
		}
		fs := sc.flags()
		if f, ok := verbFlags[command][verb]; ok {
			fs = f()
		}
		fs.SetOutput(io.Discard)
		args = onceEach(fs, args) // a flag typed twice, once: where it was typed last
		// A flag that is none of the verb's is put right too (and said first), in the same example.
		if _, err := parseInterleaved(fs, args); err != nil && verbFirst {
			return flagMistakeIn(fs, "quartermaster "+command+" "+verb, []string{"quartermaster", command, verb}, args,
				map[string]string{"": strings.Join(extra, " ")}, err)
		}
	}
	line := shellword.Join(append(append([]string{"quartermaster", command, verb}, args...), extra...))
	if verbFirst && len(args) > 0 {
		return errUsage{fmt.Sprintf("%s takes %s before its flags, e.g. %s", command, policy.JoinList(verbs, "or"), line)}
	}
	return errUsage{fmt.Sprintf("%s needs a command: %s, e.g. %s", command, policy.JoinList(verbs, "or"), line)}
}

// commandVerbs are the verbs of the commands that take one, and the one an example puts in
// where none was typed (as their needsVerb does).
var commandVerbs = map[string]struct {
	verbs []string
	verb  string
}{
	"agent-token": {[]string{"create", "list", "revoke"}, "list"},
	"migrate":     {[]string{"up", "down", "status"}, "up"},
	"templates":   {[]string{"list", "show", "render"}, "list"},
	"discord":     {[]string{"register"}, "register"},
	"predict":     {[]string{"eval"}, "eval"},
	"policy":      {[]string{"check"}, "check"},
}

// verbFlags are the flags of a verb needsVerb puts in front (templates list or show), by command
// and verb, where they are not the command's (render's, for its help).
var verbFlags = map[string]map[string]func() *flag.FlagSet{
	"templates": {
		"list": func() *flag.FlagSet { fs, _ := browseFlags(); return fs },
		"show": func() *flag.FlagSet { fs, _ := browseFlags(); return fs },
	},
}

// refusal is a command-line refusal in one sentence: what is wrong (and what to do), then "e.g."
// and the command as typed, put right (words, after quartermaster and command). Every refusal of
// the command line ends so.
func refusal(what, command string, words []string) errUsage {
	what, sep := strings.TrimSuffix(what, "."), "; "
	if strings.HasSuffix(what, "?") { // did you mean …? e.g. …
		sep = " "
	}
	return errUsage{what + sep + "e.g. " + shellword.Join(append(strings.Fields("quartermaster "+command), words...))}
}

// strayWords refuses words the command line command (migrate up, agent-token list…) takes no more
// of: what it got first, with args (the words after quartermaster and its verb, as typed) less
// those words as its example. fs tells a flag's value, which is kept, from a word.
func strayWords(fs *flag.FlagSet, command string, stray, args []string) error {
	return refusal(fmt.Sprintf("%s takes no more words, but got %q", command, stray[0]), strings.Fields(command)[0], withoutWords(fs, args, stray))
}

// withoutWords is args less the last of each of words that is no flag's value (fs's flags), each
// flag given once (onceEach).
func withoutWords(fs *flag.FlagSet, args, words []string) []string {
	out := slices.Clone(args)
	for _, w := range words {
		for i := len(out) - 1; i >= 0; i-- {
			if out[i] == w && !isFlagValue(fs, out, i) {
				out = slices.Delete(out, i, i+1)
				break
			}
		}
	}
	return onceEach(fs, out)
}

// flagAt is one place args give a flag: args[i] names it, and n is 2 where the next word is its
// value (--db URL), else 1 (--db=URL, --json, or a flag that takes a value given none).
type flagAt struct{ i, n int }

// flagPlaces are the places args give flag name (-name, --name, -name=V, --name=V) before any
// "--", as fs parses them: a word that is another flag's value is not read as a flag.
func flagPlaces(fs *flag.FlagSet, args []string, name string) []flagAt {
	takesValue := func(n string) bool {
		f := fs.Lookup(n)
		return f != nil && !boolFlag(f)
	}
	var at []flagAt
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		n, _, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		next := !eq && takesValue(n) && i+1 < len(args)
		if n == name {
			p := flagAt{i: i, n: 1}
			if next {
				p.n = 2
			}
			at = append(at, p)
		}
		if next {
			i++
		}
	}
	return at
}

// withFlag is args with flag name given once, with value: at the last place args give it (the
// value the flag package keeps when a flag is given twice), the places before it left out. A
// true/false flag is given bare (--json). Every other flag is given once too (onceEach).
func withFlag(fs *flag.FlagSet, args []string, name, value string) []string {
	at := flagPlaces(fs, args, name)
	if len(at) == 0 {
		return onceEach(fs, args)
	}
	out := slices.Clone(args)
	last := at[len(at)-1]
	f := fs.Lookup(name)
	switch {
	case f != nil && boolFlag(f):
		out = slices.Replace(out, last.i, last.i+last.n, "--"+name)
	case strings.Contains(out[last.i], "="):
		out[last.i] = "--" + name + "=" + value
	case last.n == 2:
		out[last.i+1] = value
	default: // given last, without its value
		out = slices.Insert(out, last.i+1, value)
	}
	return onceEach(fs, withoutPlaces(out, at[:len(at)-1]))
}

// onceEach is args with every flag of fs given more than once left only at its last place, the
// one the flag package keeps, with the value typed there: an example gives each flag once.
func onceEach(fs *flag.FlagSet, args []string) []string {
	out := slices.Clone(args)
	fs.VisitAll(func(f *flag.Flag) {
		if at := flagPlaces(fs, out, f.Name); len(at) > 1 {
			out = withoutPlaces(out, at[:len(at)-1])
		}
	})
	return out
}

// withoutPlaces is args less the words of the places at (in the order args give them).
func withoutPlaces(args []string, at []flagAt) []string {
	out := slices.Clone(args)
	for k := len(at) - 1; k >= 0; k-- {
		out = slices.Delete(out, at[k].i, at[k].i+at[k].n)
	}
	return out
}

// isFlagValue says whether args[i] is the value of the flag before it (--db URL), as fs parses it.
func isFlagValue(fs *flag.FlagSet, args []string, i int) bool {
	if i == 0 || !strings.HasPrefix(args[i-1], "-") || strings.Contains(args[i-1], "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(args[i-1], "-"))
	return f != nil && !boolFlag(f)
}

// boolFlag says whether f is a true/false flag, given without a value (--json), as the flag
// package parses it.
func boolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// emptyFlag refuses a flag of command (sc's) given an empty value, --db= or --db "", which the
// command would otherwise take as not given (its default, or its variable's) and go on with. Its
// example is args as typed with the flag given a value that works, or left out where none is known.
func emptyFlag(command string, sc subcommand, args []string) error {
	if sc.flags == nil {
		return nil
	}
	fs := sc.flags()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if boolFlag(f) {
			continue
		}
		// The word after it is another of the command's flags (--now --format csv): it was given
		// no value, and would take that flag for one.
		swallowed := !hasValue && i+1 < len(args) && strings.HasPrefix(args[i+1], "--") &&
			fs.Lookup(strings.TrimLeft(strings.SplitN(args[i+1], "=", 2)[0], "-")) != nil
		if !hasValue && !swallowed {
			if i+1 >= len(args) || args[i+1] != "" {
				i++ // its value, whatever it is
				continue
			}
		} else if hasValue && value != "" {
			continue
		}
		example, own := emptyExamples[command][name]
		if !own {
			example = flagExamples[name]
		}
		if example == "" && !own {
			example = f.DefValue
		}
		other := "" // a value typed for it elsewhere on the line: the one meant
		for _, p := range flagPlaces(fs, args, name) {
			v := ""
			if p.n == 2 {
				v = args[p.i+1]
			} else if _, after, eq := strings.Cut(args[p.i], "="); eq {
				v = after
			}
			if p.i != i && v != "" && !swallowed {
				other, example, own = v, "", true
			}
		}
		fixed := slices.Clone(args[:i])
		if example != "" {
			fixed = append(fixed, "--"+name, example)
		}
		rest := args[i+1:]
		if !hasValue && !swallowed {
			rest = args[i+2:]
		}
		fixed = onceEach(fs, append(fixed, rest...)) // given twice, it is read where typed last
		if v, ok := commandVerbs[command]; ok && !slices.ContainsFunc(fixed, func(w string) bool { return slices.Contains(v.verbs, w) }) {
			if len(fixed) > 0 && !strings.HasPrefix(fixed[0], "-") && nearFlag(strings.ToLower(fixed[0]), v.verbs) != "" {
				fixed[0] = nearFlag(strings.ToLower(fixed[0]), v.verbs) // the verb misspelled, put right
			} else {
				fixed = append([]string{v.verb}, fixed...) // the verb it needs, as needsVerb puts it in
			}
		}
		how, is := "give it a value", "is empty"
		if example == "" {
			how = "leave it out for its default"
		}
		if other != "" {
			how = "leave it out, as it is given " + shellword.Quote(other) + " too"
		}
		if swallowed {
			is = "has no value: " + args[i+1] + " after it is a flag"
		}
		return errUsage{fmt.Sprintf("--%s %s; %s, e.g. %s", name, is, how, shellword.Join(append([]string{"quartermaster", command}, fixed...)))}
	}
	return nil
}

// emptyExamples are, by command and flag, the value an empty flag's example gives where neither
// flagExamples nor the flag's default is one that works: a flag the command needs (predict eval's
// --trace), or whose zero default means another value (render's --duration, 4h); "" leaves it
// out (render's --gpus: the template's own).
var emptyExamples = map[string]map[string]string{
	"predict":   {"trace": predictTrace},
	"templates": {"duration": "4h", "gpus": ""},
}

// policyIn is the policy file args give with --policy FILE or --policy=FILE (one dash or two),
// before any --; empty when they give none.
func policyIn(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if v, ok := strings.CutPrefix(name, "policy="); ok {
			return v
		}
		if name == "policy" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// givenFlag is the value of flag name when the command line gave it (not its default, nor an
// environment variable's), as the words of an example: --name VALUE; none when it was not given.
func givenFlag(fs *flag.FlagSet, name string) []string {
	var words []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			words = []string{"--" + name, f.Value.String()}
		}
	})
	return words
}

// nearestCommand says which command word was likely meant, with example's command line for it;
// where none is near, it names them all, with example's line for none ("").
func nearestCommand(word string, example func(command string) string) string {
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	if near := policy.Closest(strings.ToLower(word), names); near != "" {
		return fmt.Sprintf("the nearest is %s, e.g. %s", near, example(near))
	}
	return fmt.Sprintf("the commands are %s, e.g. %s", strings.Join(names, ", "), example(""))
}

func isHelp(a string) bool { return a == "help" || a == "-h" || a == "--help" || a == "-help" }

// wantsHelp: -h, --help or -help anywhere before "--", or help as the only word.
func wantsHelp(args []string) bool {
	if len(args) == 1 && args[0] == "help" {
		return true
	}
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" || a == "-help" {
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: quartermaster COMMAND [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, subcommands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "`quartermaster COMMAND --help` (or `quartermaster help COMMAND`) lists a command's flags and environment variables;")
	fmt.Fprintln(w, "docs/configuration.md lists them all.")
}

// help prints a verb's synopsis, its flags and the environment variables that apply to it.
func help(w io.Writer, name string, sc subcommand) {
	fmt.Fprintf(w, "quartermaster %s: %s\n\n", name, sc.summary)
	u := sc.usage
	if u == "" {
		u = "quartermaster " + name
	}
	fmt.Fprintln(w, "usage:")
	for _, l := range strings.Split(strings.TrimRight(u, "\n"), "\n") {
		fmt.Fprintln(w, "  "+l)
	}
	if sc.flags != nil {
		fs := sc.flags()
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
			builtInDefaults(fs, os.Getenv)
			fs.SetOutput(w)
			fs.PrintDefaults()
		}
	}
	if env := envFor(name); len(env) > 0 {
		fmt.Fprintln(w, "\nenvironment:")
		width := 0
		for _, e := range env {
			width = max(width, len(e.name))
		}
		for _, e := range env {
			fmt.Fprintf(w, "  %-*s  %s\n", width, e.name, e.what)
		}
	}
}

// envDefaults are the flags whose default an environment variable gives, by flag name: the
// variable, and the default without it.
var envDefaults = map[string]struct{ env, builtin string }{
	"http":    {"QM_HTTP_ADDR", defaultHTTPAddr},
	"backend": {"QM_BACKEND", ""},
	"policy":  {"QM_POLICY", ""},
	"reports": {"QM_DATA_DIR", filepath.Join("data", "reports")},
}

// builtInDefaults makes fs's --help show each flag's built-in default rather than the value of
// the environment variable that overrides it, and say that the variable is set and overrides it.
func builtInDefaults(fs *flag.FlagSet, getenv func(string) string) {
	fs.VisitAll(func(f *flag.Flag) {
		d, ok := envDefaults[f.Name]
		if !ok {
			return
		}
		if v := getenv(d.env); v != "" {
			f.DefValue = d.builtin
			f.Usage += fmt.Sprintf("; %s is set here (%s) and overrides the default", d.env, v)
		}
	})
}

// policyFileRefusal answers a policy file that cannot be read (pf) as every refusal of the command
// line: what is wrong, then command's args (as typed) with the policy put right, given where it
// was typed (--policy, or policy check's word), else with --policy (it came from QM_POLICY).
func policyFileRefusal(pf *policy.FileError, command string, fs *flag.FlagSet, args []string) error {
	file := workingPolicy(pf)
	fs.SetOutput(io.Discard)
	var words []string
	switch i := slices.Index(args, pf.Path); {
	case len(flagPlaces(fs, args, "policy")) > 0:
		words = withFlag(fs, args, "policy", file)
	case command == "policy" && i >= 0 && !isFlagValue(fs, args, i):
		words = slices.Clone(args)
		words[i] = file
	case command == "policy":
		words = append(slices.Clone(args), file)
	default:
		words = append(slices.Clone(args), "--policy", file)
	}
	return refusal(pf.Sentence(), command, words)
}

// workingPolicy is a policy file that loads, for the example of a refusal of pf: the YAML file
// beside the one typed whose name is near it (tokio.yaml for tokyo.yaml), the first in the
// directory typed, else the example policy.
func workingPolicy(pf *policy.FileError) string {
	var dir, near string
	switch pf.Problem {
	case "does not exist":
		dir = filepath.Dir(pf.Path)
	case "is a directory":
		dir = pf.Path
	default:
		return examplePolicy()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return examplePolicy()
	}
	var names []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			names = append(names, e.Name())
		}
	}
	if dir == pf.Path {
		for _, n := range names {
			if _, err := policy.LoadFile(filepath.Join(dir, n), nfc.Name); err == nil {
				return strings.TrimSuffix(pf.Path, "/") + "/" + n
			}
		}
		return examplePolicy()
	}
	base := filepath.Base(pf.Path)
	if near = policy.Closest(base, names); near == "" {
		return examplePolicy()
	}
	if _, err := policy.LoadFile(filepath.Join(dir, near), nfc.Name); err != nil {
		return examplePolicy()
	}
	return strings.TrimSuffix(pf.Path, base) + near
}

// installedPolicies are where an install keeps its policy (docs/operations.md), for an example on a
// host without the repository's example file.
var installedPolicies = []string{"/etc/quartermaster/quartermaster.yaml"}

// examplePolicy is a policy file that loads, for an example: the repository's example file where
// it is (a checkout, the release archive), else the installed policy where it loads, else the
// example file's name.
func examplePolicy() string {
	if _, err := os.Stat(policy.ExamplePolicyPath); err == nil {
		return policy.ExamplePolicyPath
	}
	for _, p := range installedPolicies {
		if _, err := policy.LoadFile(p, nfc.Name); err == nil {
			return p
		}
	}
	return policy.ExamplePolicyPath
}

// versionAfterFlags is the command line of --version (or version) typed after flags that other
// commands take, as they are written before any command (quartermaster --db x --version): the
// version, with its own flags (--short), wherever they stand, and nothing else of the line; nil
// for any other line. A word "version" that is a flag's value (--policy version) is not it.
func versionAfterFlags(args []string) []string {
	if len(args) < 2 || !strings.HasPrefix(args[0], "-") {
		return nil
	}
	own, _ := versionFlags()
	for i, a := range args {
		if _, command := subcommands[a]; a == "--" || command && a != "version" && !anyFlagValue(args, i) {
			return nil // --version after another command is that command's to read
		}
		if a != "--version" && a != "-version" && (a != "version" || anyFlagValue(args, i)) {
			continue
		}
		out := []string{"version"}
		for _, b := range args[:i] {
			if name, _, _ := strings.Cut(strings.TrimLeft(b, "-"), "="); strings.HasPrefix(b, "-") && own.Lookup(name) != nil {
				out = append(out, b)
			}
		}
		return append(out, args[i+1:]...)
	}
	return nil
}

// anyFlagValue says whether args[i] is the value of the flag before it, as any command's flags
// read it (--policy version: a file named version).
func anyFlagValue(args []string, i int) bool {
	for _, sc := range subcommands {
		if sc.flags != nil && isFlagValue(sc.flags(), args, i) {
			return true
		}
	}
	return false
}
