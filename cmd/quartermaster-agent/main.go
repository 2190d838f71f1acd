// Command quartermaster-agent is the node agent: it reads the node's GPUs through NVML, reports
// them to the Quartermaster service, serves Prometheus /metrics with dcgm-exporter's names, and
// writes Slurm's gres.conf and a topology matrix from what NVML says.
//
//	quartermaster-agent [run]     report every interval and serve /metrics (the default)
//	quartermaster-agent metrics   print one scrape and exit
//	quartermaster-agent gres-conf print gres.conf lines for this node
//	quartermaster-agent topology  print the GPU topology like `nvidia-smi topo -m`
//	quartermaster-agent version   print the version, commit and Go version of this binary
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/buildinfo"
	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/httpserve"
	"github.com/acme/quartermaster/internal/shellword"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const commandsText = `usage: quartermaster-agent [COMMAND] [flags]

commands:
  run        report to the service every interval and serve /metrics (the default)
  metrics    print one Prometheus scrape and exit
  gres-conf  print Slurm gres.conf lines for this node's GPUs
  topology   print the GPU topology like nvidia-smi topo -m
  version    print the version, commit and Go version of this binary (--version)`

const examplesText = `examples:
  quartermaster-agent --service https://qm.example.com --token-file /etc/quartermaster/agent.token
  quartermaster-agent metrics --fake dgxa100 --fake-util '0 85 mem=20480; * 0'
  quartermaster-agent metrics --fake dgxa100 --fake-util '1 40 mig=3g.20gb,2g.10gb,1g.5gb pids=4242; * 0'
  quartermaster-agent gres-conf --fake dgxh100`

// envVars are the environment variables the agent reads, and the commands they apply to ("" for
// every command).
var envVars = []struct{ name, what, cmd string }{
	{"QM_NODE", "the node's name (--node)", ""},
	{"QM_AGENT_FAKE", "run on a fake machine (--fake)", ""},
	{"QM_SERVICE_URL", "the service's URL (--service)", "run"},
	{"QM_AGENT_TOKEN_FILE", "a file holding this node's token (--token-file)", "run"},
	{"QM_AGENT_TOKEN", "this node's token itself, less safe than the file; not with QM_AGENT_TOKEN_FILE", "run"},
	{"QM_AGENT_LISTEN", "the address of /metrics (--listen)", "run"},
}

// usage writes how to call the agent: the commands, cmd's flags, the environment variables that
// apply to cmd, and examples.
func usage(w io.Writer, cmd string) {
	fmt.Fprintln(w, commandsText)
	fs, _ := flagSet(cmd)
	fmt.Fprintf(w, "\nflags of %s:\n", cmd)
	fs.SetOutput(w)
	fs.PrintDefaults()
	if cmd != "version" { // which reads no setting
		fmt.Fprintln(w, "\nenvironment (a flag wins over its variable):")
		for _, e := range envVars {
			if e.cmd == "" || e.cmd == cmd {
				fmt.Fprintf(w, "  %-19s  %s\n", e.name, e.what)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, examplesText)
	fmt.Fprintln(w, "\nquartermaster-agent COMMAND --help lists another command's flags; docs/agent.md has the details.")
}

// errUsage marks an error whose message says how to call the command.
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...) // as quartermaster --version is quartermaster version
	}
	if fixed, ok := shellword.PlainDashes(args); ok {
		// A flag pasted from a document with a typographic dash (—fake) is written with hyphens.
		if fixed[0] == "--version" || fixed[0] == "-version" {
			fixed[0] = "version" // as quartermaster-agent --version is quartermaster-agent version
		}
		line := fixed
		if len(fixed) == 0 || !slices.Contains(commands, fixed[0]) && fixed[0] != "help" {
			line = append([]string{"run"}, fixed...)
		}
		if moved, ok := commandFirst(line[1:]); ok && line[0] == "run" && (len(fixed) == 0 || fixed[0] != "run") {
			line = moved
		}
		fmt.Fprintf(stderr, "quartermaster-agent: %s\n", settled(ctx, "a flag starts with two hyphens (--), not a typographic dash, as a document may show it; e.g. "+commandLine(line[0], line[1:])))
		return 2
	}
	cmd, named := "run", false
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args, named = args[0], args[1:], true
	} else if moved, ok := commandFirst(args); ok {
		// Flags of a command typed before it: the command's, as if it came first.
		cmd, args, named = moved[0], moved[1:], true
	}
	given := slices.Clone(args) // the flags as typed, for the example a usage error gives
	if named && len(args) == 1 && args[0] == "help" {
		args = []string{"--help"} // metrics help is metrics --help
	}
	asked := false // the command came after help: a wrong one is answered with help's example
	if cmd == "help" {
		cmd = "run"
		if len(args) > 0 {
			cmd, args, given, asked = args[0], nil, nil, true
		}
		args = append(args, "--help")
	}
	var err error
	switch cmd {
	case "run", "metrics", "gres-conf", "topology", "version":
		fs, set := flagSet(cmd)
		set.cmd, set.given = cmd, given
		err = fs.Parse(args)
		fs.Visit(func(f *flag.Flag) { set.typed[f.Name] = true })
		switch {
		case errors.Is(err, flag.ErrHelp):
			usage(stdout, cmd)
			return 0
		case err != nil:
			err = errUsage{flagError(cmd, given, err)}
		case emptyFlag(fs, cmd, given) != "":
			err = errUsage{emptyFlag(fs, cmd, given)}
		case fs.NArg() > 0:
			err = errUsage{strayWord(cmd, named, given, fs.Arg(0))}
		case cmd == "version":
			printVersion(stdout, set.short)
		case cmd == "run":
			err = runAgent(ctx, set, stderr)
		default:
			err = oneShot(ctx, cmd, set, stdout, stderr)
		}
	default:
		example := func(near string) string {
			if asked {
				return commandLine("help", []string{near})
			}
			return commandLine(near, given)
		}
		err = errUsage{fmt.Sprintf("there is no command %q; use %s, e.g. %s", cmd, orList(commands), example("run"))}
		if near := nearest(cmd, commands); near != "" {
			err = errUsage{fmt.Sprintf("there is no command %q; the nearest is %s, e.g. %s", cmd, near, example(near))}
		}
		cmd = "run"
	}
	if err == nil {
		return 0
	}
	// One sentence, as quartermaster's: the usage is --help's.
	fmt.Fprintf(stderr, "quartermaster-agent: %s\n", settled(ctx, wholeExample(err.Error(), cmd, given)))
	var u errUsage
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// egFlagsRe finds the example a sentence ends with where it gives only what to put right: flags
// (e.g. --node gpu-01) or a variable (e.g. QM_AGENT_FAKE=dgxa100).
var egFlagsRe = regexp.MustCompile(`(?:e\.g\.|example:) (--[a-z-]+(?:[ =].*)?|QM_[A-Z_]+=\S+)$`)

// wholeExample is msg with an example that gives only flags, or a variable, made the command as
// typed (cmd's flags, given) put right: each flag given that value where it was typed, else added;
// a variable set in front of the command. A sentence that ends otherwise is as it is.
func wholeExample(msg, cmd string, given []string) string {
	m := egFlagsRe.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	tail := msg[m[2]:m[3]]
	fs, _ := flagSet(cmd)
	args, prefix := slices.Clone(given), ""
	if strings.HasPrefix(tail, "QM_") {
		prefix = tail + " "
	} else {
		words := shellword.Split(tail)
		for i := 0; i < len(words); i++ {
			name, value, eq := strings.Cut(strings.TrimLeft(words[i], "-"), "=")
			f := fs.Lookup(name)
			if !strings.HasPrefix(words[i], "-") || f == nil {
				return msg // not only flags of cmd
			}
			switch {
			case isBool(f) && !eq:
				args = setFlag(args, name, "", true)
			case eq:
				args = setFlag(args, name, value, false)
			case i+1 < len(words):
				args = setFlag(args, name, words[i+1], false)
				i++
			default:
				return msg
			}
		}
	}
	return msg[:m[0]] + "e.g. " + prefix + commandLine(cmd, args)
}

// isBool says whether f is a true/false flag, given without a value (--with-nodename).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// setFlag is args with flag name given value where it was last typed (bare, for a true/false
// flag), and given there alone; added at the end where it was not typed.
func setFlag(args []string, name, value string, bare bool) []string {
	word := "--" + name
	if !bare {
		word += "=" + value
	}
	last := -1
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			break
		}
		n, _, eq := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "-") && n == name {
			last = i
			if !eq && !bare && i+1 < len(args) && (!strings.HasPrefix(args[i+1], "-") || isNumber(args[i+1]) || args[i+1] == "") {
				i++ // its value
			}
		}
	}
	if last < 0 {
		if bare {
			return append(args, word)
		}
		return append(args, "--"+name, value)
	}
	out := withoutFlag(args[:last], name, !bare)
	rest := args[last+1:]
	_, _, eq := strings.Cut(args[last], "=")
	if !eq && !bare && len(rest) > 0 && (!strings.HasPrefix(rest[0], "-") || isNumber(rest[0]) || rest[0] == "") {
		rest = rest[1:] // the value typed, replaced
	}
	if bare || eq {
		out = append(out, word)
	} else {
		out = append(out, "--"+name, value)
	}
	return append(out, withoutFlag(rest, name, !bare)...)
}

// commands are the agent's commands, in the order the usage lists them.
var commands = []string{"run", "metrics", "gres-conf", "topology", "version"}

// orList is words as a person lists them: a, b or c.
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// printVersion prints the build the agent is, as quartermaster version does: the version alone
// with short.
func printVersion(w io.Writer, short bool) {
	b := buildinfo.Get()
	if short {
		fmt.Fprintln(w, b.Version)
		return
	}
	fmt.Fprintf(w, "quartermaster-agent %s\ncommit:  %s\ngo:      %s %s\n", b.Version, b.Commit, b.GoVersion, b.Platform)
}

// flagExamples are a value that works for each flag, for the example of a usage error.
var flagExamples = map[string]string{
	"node": "gpu-01", "fake": "dgxa100", "fake-util": "'* 0'", "proc-root": "/proc", "sys-root": "/sys",
	"labels": "snake", "service": "https://qm.example.com", "token-file": "/etc/quartermaster/agent.token",
	"interval": "10s", "window": strconv.Itoa(agent.DefaultWindow), "listen": ":9400", "type": "a100", "dev-dir": "/dev",
}

var (
	undefinedRe = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	noValueRe   = regexp.MustCompile(`^flag needs an argument: -+(.+)$`)
	badValueRe  = regexp.MustCompile(`^invalid (boolean )?value "(.*)" for (?:flag )?-+([^:]+): `)
)

// flagError says in one sentence, with an example, what is wrong with a flag of cmd that the
// flag package refused (err), given the flags as typed.
func flagError(cmd string, given []string, err error) string {
	msg := err.Error()
	if m := undefinedRe.FindStringSubmatch(msg); m != nil {
		name := m[1]
		rest := withoutFlag(given, name, true)
		for _, other := range commands {
			if fs, _ := flagSet(other); other != cmd && fs.Lookup(name) != nil {
				return fmt.Sprintf("--%s is a flag of %s, not of %s; leave it out, e.g. %s", name, other, cmd, commandLine(cmd, rest))
			}
		}
		if fs, _ := flagSet(cmd); fs != nil {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			if near := nearest(name, names); near != "" {
				return fmt.Sprintf("there is no flag --%s; the nearest is --%s, e.g. %s", name, near, commandLine(cmd, renameFlag(given, name, near)))
			}
		}
		return fmt.Sprintf("there is no flag --%s; `quartermaster-agent %s --help` lists the flags of %s, e.g. %s", name, cmd, cmd, commandLine(cmd, rest))
	}
	if m := noValueRe.FindStringSubmatch(msg); m != nil {
		if ex, ok := flagExamples[m[1]]; ok {
			return fmt.Sprintf("--%s needs a value, e.g. --%s %s", m[1], m[1], ex)
		}
		return fmt.Sprintf("--%s needs a value; `quartermaster-agent %s --help` says what it takes, e.g. %s", m[1], cmd, commandLine(cmd, withoutFlag(given, m[1], false)))
	}
	if m := badValueRe.FindStringSubmatch(msg); m != nil {
		value, name := m[2], m[3]
		if m[1] != "" {
			return fmt.Sprintf("--%s is true or false, not %q; e.g. --%s", name, value, name)
		}
		if ex, ok := flagExamples[name]; ok {
			return fmt.Sprintf("--%s %q is not a whole number; e.g. --%s %s", name, value, name, ex)
		}
		return fmt.Sprintf("--%s %q is not a whole number; `quartermaster-agent %s --help` says what it takes, e.g. %s", name, value, cmd, commandLine(cmd, withoutFlag(given, name, true)))
	}
	return fmt.Sprintf("%s; `quartermaster-agent %s --help` lists its flags, e.g. %s", msg, cmd, commandLine(cmd, nil))
}

// emptyOK are the flags an empty value means something for: none (no /metrics, no service).
var emptyOK = map[string]bool{"listen": true, "service": true}

// emptyFlag says in one sentence, with an example, that a flag of fs was given an empty value
// (--node= or --node ""), which the agent would otherwise take as not given (its default, or its
// environment variable's); empty when none was, or the flag is one of emptyOK.
func emptyFlag(fs *flag.FlagSet, cmd string, given []string) string {
	for i := 0; i < len(given); i++ {
		a := given[i]
		if a == "--" {
			return ""
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if !strings.HasPrefix(a, "-") || f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		// The word after it is another of the command's flags (--node --labels snake): it was
		// given no value, and would take that flag for one.
		swallowed := !hasValue && i+1 < len(given) && strings.HasPrefix(given[i+1], "--") &&
			fs.Lookup(strings.TrimLeft(strings.SplitN(given[i+1], "=", 2)[0], "-")) != nil
		if !hasValue && !swallowed {
			if i+1 >= len(given) || given[i+1] != "" {
				i++ // its value
				continue
			}
		} else if hasValue && value != "" {
			continue
		}
		if emptyOK[name] && !swallowed {
			continue
		}
		example := strings.Trim(flagExamples[name], "'")
		if example == "" {
			example = f.DefValue
		}
		fixed := append(slices.Clone(given[:i]), "--"+name, example)
		if hasValue || swallowed {
			fixed = append(fixed, given[i+1:]...)
		} else {
			fixed = append(fixed, given[i+2:]...)
		}
		if swallowed {
			return fmt.Sprintf("--%s has no value: %s after it is a flag; give it one, e.g. %s", name, given[i+1], commandLine(cmd, fixed))
		}
		return fmt.Sprintf("--%s is empty; give it a value or leave it out for its default, e.g. %s", name, commandLine(cmd, fixed))
	}
	return ""
}

// nearest is the one of names that name is a misspelling of (at most two letters off, and fewer
// than it has), or empty.
func nearest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(name, n); d < bestD && d < len(name) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (flag names are ASCII). The
// agent keeps its own rather than policy.EditDistance, which would build the policy package and its
// rule language (CEL) into the node agent for one function.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// renameFlag is args with the flag name written as to, its value (=value, or the word after it)
// kept.
func renameFlag(args []string, name, to string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		n, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || n != name {
			continue
		}
		out[i] = "--" + to
		if hasValue {
			out[i] += "=" + value
		}
	}
	return out
}

// strayWord says that cmd takes flags only, not word: and where word is a command given after
// the flags (cmd is then run, not named), to give it first.
func strayWord(cmd string, named bool, given []string, word string) string {
	rest := slices.DeleteFunc(slices.Clone(given), func(a string) bool { return a == word })
	if slices.Contains(commands, word) && !named {
		return fmt.Sprintf("%q is a command: give it first, e.g. %s", word, commandLine(word, rest))
	}
	return fmt.Sprintf("%s takes flags only, not %q; e.g. %s", cmd, word, commandLine(cmd, rest))
}

// nextPort is addr (HOST:PORT, as --listen takes it) with the port after its own (or before, at
// the last port): an example of another port to listen on.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return ":9400"
	}
	if n >= 65535 {
		n -= 2
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// isPort says whether port is one a listener takes: a number from 0 (any free one) to 65535.
func isPort(port string) bool {
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n <= 65535
}

// withoutFlag is args less the flag name and, where it is written apart from it and takeValue,
// the value after it: a word that is no flag, or a number (--window -3).
func withoutFlag(args []string, name string, takeValue bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		n, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "-") && n == name {
			if !hasValue && takeValue && i+1 < len(args) && (!strings.HasPrefix(args[i+1], "-") || isNumber(args[i+1])) {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// isNumber says whether word is a number (-3, -0.5), which is a flag's value, never a flag.
func isNumber(word string) bool {
	_, err := strconv.ParseFloat(word, 64)
	return err == nil
}

// commandLine is the agent's command line for cmd and args, quoted for a shell.
func commandLine(cmd string, args []string) string {
	return shellword.Join(append([]string{"quartermaster-agent", cmd}, args...))
}

// fromEnv is msg, a refusal of flag's value, as said of the environment variable env when the
// value came from there rather than the command line: the variable named where the flag is (or,
// for a message that does not start with the flag, in front, followed by what: "names no fake
// machine"), and its example as VAR=value.
func (o *options) fromEnv(flag, env, what, msg string) string {
	if o.typed[flag] || os.Getenv(env) == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, "e.g. --"+flag+" ", "e.g. "+env+"=")
	if strings.HasPrefix(msg, "--"+flag+" ") {
		return env + strings.TrimPrefix(msg, "--"+flag)
	}
	return env + " " + what + ": " + msg
}

// settings are a command's flags.
type settings struct {
	options
	// run
	service   string
	tokenFile string
	interval  durationFlag
	window    int
	listen    string
	// gres-conf
	gres     agent.GresOptions
	withNode bool
	// version
	short bool
}

// flagSet is cmd's flags, bound to the settings it returns. It writes nothing itself: run prints
// the usage.
func flagSet(cmd string) (*flag.FlagSet, *settings) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	s := &settings{options: options{typed: map[string]bool{}}}
	if cmd == "version" { // it reads no GPU, so takes none of the others' flags
		fs.BoolVar(&s.short, "short", false, "print the version alone")
		return fs, s
	}
	s.register(fs)
	switch cmd {
	case "run":
		fs.StringVar(&s.service, "service", envOr("QM_SERVICE_URL", ""), "the service's base URL, e.g. https://qm.example.com (env QM_SERVICE_URL); empty: /metrics only")
		fs.StringVar(&s.tokenFile, "token-file", "", "the file holding this node's token, which quartermaster agent-token create NODE prints (env QM_AGENT_TOKEN_FILE, or the token itself in QM_AGENT_TOKEN)")
		s.interval = durationFlag{d: agent.DefaultInterval}
		fs.Var(&s.interval, "interval", "how often the GPUs are read and reported, a `duration` from 1s to 10m")
		fs.IntVar(&s.window, "window", agent.DefaultWindow, fmt.Sprintf("reports kept while the service is unreachable, at least 1, and at most %d MiB of them (the oldest go first)", agent.MaxOutboxBytes>>20))
		listen, set := os.LookupEnv("QM_AGENT_LISTEN") // set but empty: no listener, as --listen ""
		if !set {
			listen = ":9400"
		}
		fs.StringVar(&s.listen, "listen", listen, "address of /metrics (env QM_AGENT_LISTEN); empty: none")
	case "gres-conf":
		fs.StringVar(&s.gres.Type, "type", "", "the GRES type (default: from the model name, e.g. a100)")
		fs.StringVar(&s.gres.DevDir, "dev-dir", "/dev", "where the nvidiaN device files are")
		fs.BoolVar(&s.withNode, "with-nodename", false, "start each line with NodeName= (for a gres.conf shared by nodes)")
	}
	return fs, s
}

// options are the flags every command takes.
type options struct {
	// typed are the flags given on the command line; another's value is its default, or its
	// environment variable's.
	typed map[string]bool
	// cmd is the command, given its flags as typed, for a refusal's example.
	cmd   string
	given []string

	node       string
	fake       string
	fakeUtil   string
	fakeScript string
	procRoot   string
	sysRoot    string
	labels     string
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.node, "node", envOr("QM_NODE", ""), "this node's name as the scheduler knows it (default: the short host name; env QM_NODE)")
	fs.StringVar(&o.fake, "fake", envOr("QM_AGENT_FAKE", ""), "run on a fake machine instead of NVML: "+strings.Join(nvml.FakeKinds, " or ")+" (env QM_AGENT_FAKE)")
	fs.StringVar(&o.fakeUtil, "fake-util", "", "what the fake GPUs do, e.g. '0 85 mem=20480 pids=4242; * 0' (GPU, utilization %, then mem=MiB pids= power= temp= xid=, and mig=3g.20gb,1g.5gb for a GPU in MIG mode)")
	fs.StringVar(&o.fakeScript, "fake-script", "", "a file in the --fake-util format, read again whenever it changes")
	fs.StringVar(&o.procRoot, "proc-root", "/proc", "where processes' cgroups are read (/proc/PID/cgroup), and MIG device files for gres-conf (/proc/driver/nvidia-caps/mig-minors)")
	fs.StringVar(&o.sysRoot, "sys-root", "/sys", "where the CPU topology is read (for gres.conf Cores=)")
	fs.StringVar(&o.labels, "labels", string(agent.LabelsDCGM), "metric label names: dcgm (dcgm-exporter's, with modelName) or snake (model_name)")
}

// durationFlag is a duration flag that keeps what it could not read, so that runAgent can say
// what was wrong with it in a sentence with an example instead of the flag package's "parse error".
type durationFlag struct {
	d   time.Duration
	bad string // the value given, when it is not a duration
}

func (f *durationFlag) String() string {
	if f == nil {
		return "0s"
	}
	return f.d.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		f.bad = s
		return nil
	}
	f.d, f.bad = d, ""
	return nil
}

// line is the agent's command line of o's command with args.
func (o *options) line(args []string) string { return commandLine(o.cmd, args) }

// withScript is the flags as typed with the fake GPUs' lines given as --fake-util script in place
// of the --fake-script file, which is put right by hand.
func (o *options) withScript(script string) []string {
	return setFlag(withoutFlag(o.given, "fake-script", true), "fake-util", script, false)
}

// pathErr is why a file could not be used, without the path the message names already.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// machine is what the agent reads: NVML or a fake, and the CPU layout.
type machine struct {
	devs  agent.Devices
	cores *agent.CoreMap
}

// resolveNode fills in the node's name from the short host name when --node (QM_NODE) gave none,
// and refuses one that is no node name as a usage error, before any GPU is opened.
func (o *options) resolveNode() error {
	given := o.node != ""
	if !given {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("cannot tell this node's name (%v); pass --node, e.g. --node gpu-01", err)
		}
		o.node, _, _ = strings.Cut(h, ".")
	}
	if p := report.NodeNameProblem(o.node); p != "" {
		if !given {
			p = "this machine's short host name: " + p
		}
		return errUsage{p + "; give --node (or QM_NODE) the name the scheduler knows the node by, e.g. --node " + report.NodeNameMeant(o.node)}
	}
	return nil
}

func (o *options) open(log *slog.Logger) (*machine, error) {
	if err := o.resolveNode(); err != nil {
		return nil, err
	}
	if o.labels != string(agent.LabelsDCGM) && o.labels != string(agent.LabelsSnake) {
		return nil, errUsage{fmt.Sprintf("--labels is dcgm or snake, not %q; e.g. --labels snake", o.labels)}
	}
	if o.fake == "" {
		if o.fakeUtil != "" || o.fakeScript != "" {
			return nil, errUsage{"--fake-util and --fake-script script a fake machine; add --fake " + strings.Join(nvml.FakeKinds, " or ") + ", e.g. --fake " + nvml.FakeKinds[0]}
		}
		devs, err := nvml.System(log)
		if err != nil {
			return nil, err
		}
		m := &machine{devs: devs}
		if cores, err := agent.SysfsCores(o.sysRoot); err == nil {
			m.cores = &cores
		} else {
			log.Info("no CPU topology; gres.conf will have no Cores=", "err", err)
		}
		return m, nil
	}
	var script agent.ScriptSource
	var parsed agent.Script
	var scriptFile *agent.ScriptFile
	switch {
	case o.fakeUtil != "" && o.fakeScript != "":
		return nil, errUsage{"use --fake-util or --fake-script, not both; e.g. " + o.line(withoutFlag(o.given, "fake-script", true))}
	case o.fakeUtil != "":
		s, err := agent.ParseScript(o.fakeUtil)
		if err != nil {
			return nil, errUsage{err.Error() + "; e.g. --fake-util '0 85; * 0'"}
		}
		parsed, script = s, agent.StaticScript(s)
	case o.fakeScript != "":
		b, err := os.ReadFile(o.fakeScript)
		if err != nil {
			// The file is written by hand; the example gives the fake GPUs' lines as --fake-util.
			return nil, fmt.Errorf("--fake-script %s cannot be read (%v); name a file of the fake GPUs' lines, or give the lines with --fake-util, e.g. %s",
				o.fakeScript, pathErr(err), o.line(o.withScript("* 0")))
		}
		s, err := agent.ParseScript(string(b))
		if err != nil {
			// The file is put right by hand; the example gives its lines as --fake-util.
			return nil, errUsage{fmt.Sprintf("%s, in %s; e.g. %s", err, o.fakeScript, o.line(o.withScript("0 85; * 0")))}
		}
		scriptFile = &agent.ScriptFile{Path: o.fakeScript, Logger: log}
		parsed, script = s, scriptFile
	}
	f, err := nvml.NewFake(o.fake, o.node, script)
	if err != nil {
		return nil, errUsage{o.fromEnv("fake", "QM_AGENT_FAKE", "names no fake machine", err.Error())}
	}
	if n := f.GPUs(); parsed.Highest() >= n {
		if scriptFile != nil {
			return nil, errUsage{fmt.Sprintf("the fake GPU script %s names GPU %d, but the fake %s has %d GPUs (0-%d); number them 0 to %d (a line `%d 85` or `* 0`), e.g. %s",
				o.fakeScript, parsed.Highest(), o.fake, n, n-1, n-1, n-1, o.line(o.withScript(fmt.Sprintf("%d 85; * 0", n-1))))}
		}
		return nil, errUsage{fmt.Sprintf("--fake-util names GPU %d, but the fake %s has %d GPUs (0-%d); number them 0 to %d, e.g. --fake-util '%d 85; * 0'",
			parsed.Highest(), o.fake, n, n-1, n-1, n-1)}
	}
	if err := f.CheckMIG(parsed); err != nil {
		if scriptFile != nil {
			return nil, errUsage{fmt.Sprintf("the fake GPU script %s: %v; a line such as `1 0 mig=%s` is one, e.g. %s", o.fakeScript, err, f.MIGExample(),
				o.line(o.withScript("1 0 mig="+f.MIGExample()+"; * 0")))}
		}
		return nil, errUsage{fmt.Sprintf("--fake-util: %v; e.g. --fake-util '1 0 mig=%s; * 0'", err, f.MIGExample())}
	}
	if scriptFile != nil {
		scriptFile.GPUs, scriptFile.Check = f.GPUs(), f.CheckMIG
	}
	devs, err := nvml.OpenFake(f, log)
	if err != nil {
		return nil, err
	}
	log.Info("running on a fake machine", "fake", o.fake)
	return &machine{devs: devs, cores: &f.Cores}, nil
}

func oneShot(ctx context.Context, cmd string, set *settings, stdout, stderr io.Writer) error {
	o, gres := &set.options, set.gres
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := o.open(log)
	if err != nil {
		return err
	}
	defer m.devs.Close()
	if checking(ctx) {
		return nil
	}
	a, err := agent.New(agent.Config{Node: o.node, Devices: m.devs, Cgroups: agent.Cgroups{ProcRoot: o.procRoot},
		Labels: agent.LabelStyle(o.labels), Logger: log})
	if err != nil {
		return err
	}
	switch cmd {
	case "metrics":
		if _, err := a.Collect(ctx); err != nil {
			return err
		}
		return a.Metrics().Write(stdout)
	case "topology":
		t, err := a.Topology(ctx)
		if err != nil {
			return err
		}
		agent.WriteTopology(stdout, t)
		return nil
	default: // gres-conf
		t, err := a.Topology(ctx)
		if err != nil {
			return err
		}
		gres.Cores = m.cores
		for _, g := range m.devs.GPUs() {
			if g.MIG {
				if b, err := os.ReadFile(filepath.Join(o.procRoot, agent.MIGMinorsFile)); err == nil {
					gres.MIGMinors = agent.ParseMIGMinors(b)
				} else {
					log.Warn("a GPU is in MIG mode but the MIG device files are unknown", "err", err)
				}
				break
			}
		}
		if set.withNode {
			gres.Node = o.node
		}
		return agent.WriteGresConf(stdout, m.devs.GPUs(), t, gres)
	}
}

func runAgent(ctx context.Context, set *settings, stderr io.Writer) error {
	o := &set.options
	if set.interval.bad != "" {
		example := "10s"
		if n, err := strconv.ParseFloat(set.interval.bad, 64); err == nil && n >= 1 && n <= report.MaxInterval.Seconds() {
			example = set.interval.bad + "s" // a number of seconds without its unit
		}
		return errUsage{fmt.Sprintf("--interval %q is not a duration; give it with a unit, e.g. --interval %s", set.interval.bad, example)}
	}
	interval := set.interval.d
	if interval < time.Second || interval > report.MaxInterval {
		return errUsage{fmt.Sprintf("--interval %s is out of range; use between 1s and 10m, e.g. --interval 10s", interval)}
	}
	if set.window < 1 {
		return errUsage{fmt.Sprintf("--window %d is out of range; the agent keeps at least 1 report while the service is unreachable, e.g. --window %d", set.window, agent.DefaultWindow)}
	}
	if set.service != "" {
		if err := agent.CheckService(set.service); err != nil {
			return errUsage{o.fromEnv("service", "QM_SERVICE_URL", "is not a service URL", err.Error())}
		}
	}
	var token string
	tokenFile := set.tokenFile
	if tokenFile == "" && os.Getenv("QM_AGENT_TOKEN") == "" {
		tokenFile = os.Getenv("QM_AGENT_TOKEN_FILE") // read again when the service refuses the token
	}
	if set.tokenFile != "" {
		b, err := os.ReadFile(set.tokenFile)
		if err != nil {
			return config.SecretFileError("--token-file", set.tokenFile, err)
		}
		token = string(b)
		if strings.TrimSpace(token) == "" {
			return fmt.Errorf("the token file %s is empty; put the token `quartermaster agent-token create NODE` prints in it", set.tokenFile)
		}
	} else {
		// QM_AGENT_TOKEN, or the file QM_AGENT_TOKEN_FILE names; both set is refused.
		t, err := config.Secret("QM_AGENT_TOKEN")
		if err != nil {
			return err
		}
		token = t
	}
	token = strings.TrimSpace(token)
	if set.service != "" && token == "" {
		// Said before the GPUs are opened: a missing token is what to mend, not what opening them logs.
		if err := o.resolveNode(); err != nil {
			return err
		}
		return errUsage{"--service is set but no token; create one with `quartermaster agent-token create " + o.node +
			"` and pass it with --token-file (or QM_AGENT_TOKEN_FILE), e.g. --token-file /etc/quartermaster/agent.token"}
	}
	if set.listen != "" {
		if _, _, err := net.SplitHostPort(set.listen); err != nil {
			return errUsage{fmt.Sprintf("--listen %q (or QM_AGENT_LISTEN) is not HOST:PORT or :PORT; e.g. --listen :9400", set.listen)}
		}
		if _, port, _ := net.SplitHostPort(set.listen); !isPort(port) {
			return errUsage{fmt.Sprintf("--listen %q (or QM_AGENT_LISTEN) has no port to listen on: %q is not a number from 0 to 65535; e.g. --listen :9400", set.listen, port)}
		}
	}
	if set.service == "" && set.listen == "" {
		return errUsage{"with neither --service nor --listen there is nothing to do; give one of them, e.g. --listen :9400"}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if checking(ctx) {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := o.open(log)
	if err != nil {
		return err
	}
	defer m.devs.Close()
	if checking(ctx) {
		return nil
	}
	a, err := agent.New(agent.Config{Node: o.node, Devices: m.devs, Cgroups: agent.Cgroups{ProcRoot: o.procRoot},
		Interval: interval, Service: set.service, Token: token, TokenFile: tokenFile, Window: set.window, Labels: agent.LabelStyle(o.labels), Logger: log})
	if err != nil {
		return err
	}
	if set.listen != "" {
		ln, err := net.Listen("tcp", set.listen)
		if errors.Is(err, syscall.EADDRINUSE) {
			// One agent per node: a second one started by mistake would report the node too.
			return fmt.Errorf("cannot serve /metrics on --listen %s: the address is in use, most likely by another quartermaster-agent already running on this node "+
				"(systemctl status quartermaster-agent, or the DaemonSet's pod), and a node needs one agent, as two would both report it; "+
				"stop the other, or if the port is another program's give this agent a free one, e.g. --listen %s", set.listen, nextPort(set.listen))
		}
		if err != nil {
			return fmt.Errorf("cannot serve /metrics on --listen %s: %w; give a free port, e.g. --listen :9400, or --listen '' for none", set.listen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", a.Metrics().Handler())
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
		srv := httpserve.Server(mux, httpserve.Limits{})
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		log.Info("serving /metrics", "addr", ln.Addr().String())
	}
	// SIGHUP, which would otherwise end the agent at once, is answered in the log: what the agent
	// reads again by itself needs no signal, and every other setting takes a restart.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Warn("SIGHUP: the agent keeps running; it reads its token file again whenever the service refuses the token, and a --fake-script when it changes; any other setting takes a restart")
			}
		}
	}()
	log.Info("node agent started", "node", o.node, "gpus", len(m.devs.GPUs()), "driver", m.devs.Driver(), "interval", interval.String(), "service", set.service)
	return a.Run(ctx)
}
