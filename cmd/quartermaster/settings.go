package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/store"
)

// startSetting is how an operator gave a value: with a flag when it was passed, else with its
// environment variable, so that a refusal names what they wrote and an example in the same form.
type startSetting struct {
	flag, env string
	fromFlag  bool
	// The command line as typed, for an example of it put right: fs's args after line.
	fs         *flag.FlagSet
	line, args []string
}

// settingOf says whether fs's flag name was passed on the command line, line (quartermaster
// serve) with args.
func settingOf(fs *flag.FlagSet, line, args []string, name, env string) startSetting {
	s := startSetting{flag: "--" + name, env: env, fs: fs, line: line, args: args}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			s.fromFlag = true
		}
	})
	return s
}

// quoted is the value as written: --http "8080" or QM_HTTP_ADDR="8080".
func (s startSetting) quoted(v string) string {
	if s.fromFlag {
		return fmt.Sprintf("%s %q", s.flag, v)
	}
	return fmt.Sprintf("%s=%q", s.env, v)
}

// example is a value that works, in the same form: --http :8080 or QM_HTTP_ADDR=:8080.
func (s startSetting) example(v string) string {
	if s.fromFlag {
		return s.flag + " " + v
	}
	return s.env + "=" + v
}

// eg is the example of a refusal of the setting: the command as typed with the flag given v
// where the flag gave it (quartermaster serve --demo --http :8080), else example's.
func (s startSetting) eg(v string) string {
	if !s.fromFlag || s.fs == nil {
		return s.example(v)
	}
	return shellword.Join(append(slices.Clone(s.line), withFlag(s.fs, s.args, strings.TrimPrefix(s.flag, "--"), v)...))
}

// checkListenAddr refuses an address net.Listen cannot take (no port, a port out of range),
// before the database is opened.
func checkListenAddr(s startSetting, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return errUsage{fmt.Sprintf("%s is not an address to listen on; write HOST:PORT, or :PORT for every interface, e.g. %s", s.quoted(addr), s.eg(defaultHTTPAddr))}
	}
	return nil
}

// listenError explains why serve cannot listen on addr, which s gave: the address, the setting
// (flag and variable) and, for a port another process holds, a free one near it.
func listenError(s startSetting, addr string, err error) error {
	if s.flag == "" {
		s = startSetting{flag: "--http", env: "QM_HTTP_ADDR", fromFlag: true}
	}
	which := fmt.Sprintf("%s, which %s gives (env %s)", addr, s.flag, s.env)
	if !s.fromFlag {
		which = fmt.Sprintf("%s, which %s gives (flag %s)", addr, s.env, s.flag)
	}
	host, port, _ := net.SplitHostPort(addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("cannot listen on %s: another process already listens on that port; stop it, or choose a free port, e.g. %s", which, s.eg(freePortNear(host, port)))
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("cannot listen on %s: a port below 1024 needs root or the CAP_NET_BIND_SERVICE capability; choose a port above 1023 and let a load balancer or proxy take port 80 or 443, e.g. %s", which, s.eg(net.JoinHostPort(host, "8080")))
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("cannot listen on %s: %s is not an address of this machine; name one of its addresses, or leave the host out to listen on every interface, e.g. %s", which, host, s.eg(":"+port))
	}
	return fmt.Errorf("cannot listen on %s: %v; e.g. %s", which, err, s.eg(defaultHTTPAddr))
}

// freePortNear is host with the first port after port that nothing listens on now, as an example
// that works; the default address when none of the next few is free.
func freePortNear(host, port string) string {
	p, err := strconv.Atoi(port)
	if err == nil {
		for q := p + 1; q <= p+20 && q <= 65535; q++ {
			addr := net.JoinHostPort(host, strconv.Itoa(q))
			if ln, err := net.Listen("tcp", addr); err == nil {
				ln.Close()
				return addr
			}
		}
	}
	return defaultHTTPAddr
}

// flagExamples are values that work for the flags the operations commands share.
var flagExamples = map[string]string{
	"http":    defaultHTTPAddr,
	"db":      "sqlite:data/quartermaster.db",
	"policy":  "/etc/quartermaster/quartermaster.yaml",
	"backend": "sim",
}

// goFlagError matches the flag package's words for a flag mistake, and the flag's name.
var goFlagError = regexp.MustCompile(`^(flag provided but not defined|flag needs an argument|invalid boolean value "[^"]*" for|invalid value "[^"]*" for flag):? -(\S+?):?(\s|$)`)

// nearFlag is the one of names that name is likely a misspelling of: at most two letters off,
// and fewer than name has (so --x is no misspelling of --db); empty when none is.
func nearFlag(name string, names []string) string {
	near := policy.Closest(name, names)
	if near == "" || policy.EditDistance(name, near) >= len(name) {
		return ""
	}
	return near
}

// flagMistake rewrites the flag package's err from parsing fs into a sentence naming the flag and
// an example of command (quartermaster serve, quartermaster migrate up) with a flag that works:
// line (the words before args, quartermaster and the command) and args (as typed, given to fs)
// with that flag put right.
func flagMistake(fs *flag.FlagSet, command string, line, args []string, err error) error {
	return flagMistakeIn(fs, command, line, args, nil, err)
}

// flagMistakeIn is flagMistake for a command whose own flags need example values of their own:
// examples gives, by flag name, what follows --NAME in an example that works (for a flag taking
// no value, the words the command needs besides it), before the shared flagExamples and the
// flag's default. Words after the value (--print, --policy FILE) are added where args do not give
// that flag already, and so are the words of examples[""] (what every example needs) after them;
// its words before its first flag (a file) are put in where the example gives fewer words of its
// own and none of fs's flags.
func flagMistakeIn(fs *flag.FlagSet, command string, line, args []string, examples map[string]string, err error) error {
	m := goFlagError.FindStringSubmatch(err.Error())
	// fill are the words examples[""] gives before its first flag: those the command needs that
	// an example puts in where it gives none, nor any flag (policy check's file, where QM_POLICY is
	// not set and --policy not given).
	var fill []string
	for _, w := range strings.Fields(examples[""]) {
		if strings.HasPrefix(w, "-") {
			break
		}
		fill = append(fill, w)
	}
	// value is what follows --name in an example, and the words the command needs besides.
	value := func(name string) (string, []string) {
		words := strings.Fields(examples[name])
		if f := fs.Lookup(name); f != nil && boolFlag(f) {
			return "", words
		}
		if len(words) > 0 {
			return words[0], words[1:]
		}
		if v := flagExamples[name]; v != "" {
			return v, nil
		}
		if f := fs.Lookup(name); f != nil {
			return f.DefValue, nil
		}
		return "", nil
	}
	// example is the command line of fixed (args with flag name put right), each flag once, with
	// what the command needs besides name.
	example := func(name string, fixed []string) string {
		fixed = onceEach(fs, fixed)
		given := false // a flag of fs, which gives what fill would (policy check's --policy)
		fs.VisitAll(func(f *flag.Flag) { given = given || len(flagPlaces(fs, fixed, f.Name)) > 0 })
		if have := wordsOf(fs, nil, fixed); have < len(fill) && !given {
			fixed = append(fixed, fill[have:]...)
		}
		_, extra := value(name)
		extra = append(extra, strings.Fields(examples[""])...)
		for i := 0; i < len(extra); i++ {
			j := i + 1
			for j < len(extra) && !strings.HasPrefix(extra[j], "-") {
				j++
			}
			if n := strings.TrimLeft(extra[i], "-"); strings.HasPrefix(extra[i], "-") && len(flagPlaces(fs, fixed, n)) == 0 {
				fixed = append(fixed, extra[i:j]...)
			}
			i = j - 1
		}
		return shellword.Join(append(slices.Clone(line), fixed...))
	}
	if word, ok := strings.CutPrefix(err.Error(), "bad flag syntax: "); ok && m == nil {
		// ---db (a dash too many) is --db; -=x, a flag with no name, is left out.
		i := slices.Index(args, word)
		n, v, eq := strings.Cut(strings.TrimLeft(word, "-"), "=")
		if i >= 0 && n != "" && fs.Lookup(n) != nil {
			fixed := slices.Clone(args)
			fixed[i] = "--" + n
			if eq {
				fixed[i] += "=" + v
			} else if f := fs.Lookup(n); !boolFlag(f) && (i+1 == len(fixed) || strings.HasPrefix(fixed[i+1], "-")) {
				v, _ := value(n) // its value, left out with the dash
				fixed = slices.Insert(fixed, i+1, v)
			}
			return errUsage{fmt.Sprintf("%s has a dash too many; write --%s, e.g. %s", word, n, example("", fixed))}
		}
		if i >= 0 {
			return errUsage{fmt.Sprintf("%q is no flag of %s (a flag is --NAME), e.g. %s", word, command, example("", slices.Delete(slices.Clone(args), i, i+1)))}
		}
	}
	if m == nil {
		return errUsage{fmt.Sprintf("%v; %s --help lists the flags", err, command)}
	}
	name := m[2]
	put := func(name string) string {
		v, _ := value(name)
		return example(name, withFlag(fs, args, name, v))
	}
	name = strings.TrimLeft(name, "-")
	switch {
	case strings.HasPrefix(m[1], "flag provided"):
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		i := mistypedFlag(args, name)
		if near := nearFlag(name, names); near != "" {
			return errUsage{fmt.Sprintf("--%s is not a flag of %s; the nearest is --%s, e.g. %s", name, command, near, example(near, renamedFlag(fs, args, i, near, func() string { v, _ := value(near); return v })))}
		}
		typed := 0 // how many times the flag is typed
		for j := 0; j < len(args); j++ {
			if mistypedFlag(args[j:], name) == 0 {
				typed++
			}
		}
		if one := fs.Lookup(names[0]); len(names) == 1 && !boolFlag(one) && len(flagPlaces(fs, args, names[0])) == 0 && typed == 1 &&
			i >= 0 && i+1 < len(args) && args[i+1] != "" && !strings.HasPrefix(args[i+1], "-") && !strings.Contains(args[i], "=") &&
			writtenShort(name, names[0]) {
			// The one flag the command takes, a value's, not given, is the one meant where it is
			// that flag written long or short (--database for --db), with the value typed for it;
			// any other flag (--polcy for --db) is left out below.
			return errUsage{fmt.Sprintf("--%s is not a flag of %s; it takes --%s alone, e.g. %s", name, command, names[0], example(names[0], renamedFlag(fs, args, i, names[0], func() string { v, _ := value(names[0]); return v })))}
		}
		// The flag is left out wherever it was typed, and the word after it too where that is
		// its value: always, but where the command would be left short of the words it needs
		// (agent-token create --polcy gpu-1: the node). After a true/false flag of another
		// command (--json), the word is no value: left out only where it is a word too many.
		rest := slices.Clone(args)
		for j := mistypedFlag(rest, name); j >= 0; j = mistypedFlag(rest, name) {
			n := 1
			if !strings.Contains(rest[j], "=") && j+1 < len(rest) && strings.HasPrefix(rest[j+1], "-") && isNumber(rest[j+1]) {
				n = 2 // a negative number (-3) is no word of any command: the flag's value
			} else if !strings.Contains(rest[j], "=") && j+1 < len(rest) && !strings.HasPrefix(rest[j+1], "-") {
				words := wordsOf(fs, line, slices.Delete(slices.Clone(rest), j, j+1)) - len(strings.Fields(command))
				most, need := mostWords[command], max(needsWords[command], len(fill))
				switch {
				case rest[j+1] == "" || typed > 1:
					n = 2
				case boolFlagElsewhere(name):
					if most >= 0 && words > most {
						n = 2
					}
				case len(fill) > 0 && flagElsewhere(name) != nil:
					n = 2 // another command's flag with its value: the example puts the word needed in
				case words-1 >= need:
					n = 2
				}
			}
			rest = slices.Delete(rest, j, j+n)
		}
		if len(names) == 0 {
			return errUsage{fmt.Sprintf("%s takes no flags, but got --%s; e.g. %s", command, name, example("", rest))}
		}
		flags := make([]string, len(names))
		for i, n := range names {
			flags[i] = "--" + n
		}
		takes := policy.JoinList(flags, "and") + " (" + command + " --help says what each does)"
		if len(flags) == 1 {
			takes = flags[0] + " alone (" + command + " --help says what it does)"
		}
		return errUsage{fmt.Sprintf("--%s is not a flag of %s; it takes %s, e.g. %s", name, command, takes, example("", rest))}
	case strings.HasPrefix(m[1], "flag needs"):
		// Given last without its value, after a place that gave it one: that value is the one meant.
		for _, p := range slices.Backward(flagPlaces(fs, args, name)) {
			if _, v, eq := strings.Cut(args[p.i], "="); p.n == 2 || (eq && v != "") {
				if p.n == 2 {
					v = args[p.i+1]
				}
				return errUsage{fmt.Sprintf("--%s needs a value, e.g. %s", name, example(name, withFlag(fs, args, name, v)))}
			}
		}
		return errUsage{fmt.Sprintf("--%s needs a value, e.g. %s", name, put(name))}
	case strings.HasPrefix(m[1], "invalid boolean"):
		return errUsage{fmt.Sprintf("--%s takes no value (it is on when given), e.g. %s", name, put(name))}
	}
	if _, why, ok := strings.Cut(err.Error(), "-"+name+": "); ok && strings.HasPrefix(m[1], "invalid value") {
		given := strings.TrimSuffix(strings.TrimPrefix(m[1], `invalid value "`), `" for flag`)
		// The flag package's words for a value its type cannot read ("parse error", strconv's
		// "invalid syntax") say nothing to an operator: say what the flag takes.
		if f := fs.Lookup(name); f != nil && (why == "parse error" || why == "value out of range" || strings.Contains(why, "strconv.") || strings.Contains(why, "invalid syntax")) {
			takes := "another value"
			switch typ := fmt.Sprintf("%T", f.Value); {
			case strings.Contains(typ, "duration"):
				takes = "a duration with its unit (such as 30m or 4h)"
			case strings.Contains(typ, "float"):
				takes = "a number"
			case strings.Contains(typ, "int"):
				takes = "a whole number"
			}
			return errUsage{fmt.Sprintf("--%s takes %s, not %q; e.g. %s", name, takes, given, put(name))}
		}
		return errUsage{fmt.Sprintf("--%s %q: %s; e.g. %s", name, given, why, put(name))}
	}
	return errUsage{fmt.Sprintf("%v; e.g. %s", err, put(name))}
}

// isNumber says whether word is a number (-3, -0.5): after a flag, its value, never a flag.
func isNumber(word string) bool {
	_, err := strconv.ParseFloat(word, 64)
	return err == nil
}

// needsWords are how many words the commands (as flagMistake names them) that need some need
// after their verb: the node agent-token create and revoke act on, the template render and show
// take. A word after a flag that is none of the command's is that flag's value unless the command
// would be short of these without it.
var needsWords = map[string]int{
	"quartermaster agent-token create": 1, "quartermaster agent-token revoke": 1,
	"quartermaster templates render": 1, "quartermaster templates show": 1,
}

// mostWords are how many words after their verb the commands (as flagMistake names them) that
// take some take at most, -1 for any number (render's parameters). Every other command takes none.
var mostWords = map[string]int{
	"quartermaster agent-token create": 1, "quartermaster agent-token revoke": 1,
	"quartermaster templates show": 1, "quartermaster templates list": 1, "quartermaster templates render": -1,
	"quartermaster policy check": 1,
}

// wordsOf counts the words of line (quartermaster and the command, as an example starts) and
// args that are neither flags nor a flag's value (fs's flags), as the command would read them.
func wordsOf(fs *flag.FlagSet, line, args []string) int {
	n := len(line)
	for i, a := range args {
		if a == "--" {
			return n + len(args) - i - 1
		}
		if (!strings.HasPrefix(a, "-") || a == "-") && !isFlagValue(fs, args, i) {
			n++
		}
	}
	return n
}

// boolFlagElsewhere says whether name is a true/false flag of some quartermaster command (--json,
// --print), given without a value: the word after it is no value of its.
func boolFlagElsewhere(name string) bool {
	f := flagElsewhere(name)
	return f != nil && boolFlag(f)
}

// flagElsewhere is flag name of some quartermaster command (--db, --json), as that command
// parses it; nil where no command has it.
func flagElsewhere(name string) *flag.Flag {
	var sets []*flag.FlagSet
	for _, sc := range subcommands {
		if sc.flags != nil {
			sets = append(sets, sc.flags())
		}
	}
	for _, fss := range verbFlags {
		for _, f := range fss {
			sets = append(sets, f())
		}
	}
	for _, fs := range sets {
		if f := fs.Lookup(name); f != nil {
			return f
		}
	}
	return nil
}

// writtenShort says whether flag name is flag as a reader takes a flag misspelled: a near miss
// (nearFlag), or one of the two written short or long, the shorter's letters (two or more) in the
// longer in order from its first (--database for --db, --pol for --policy).
func writtenShort(name, flag string) bool {
	if nearFlag(name, []string{flag}) != "" {
		return true
	}
	short, long := name, flag
	if len(short) > len(long) {
		short, long = long, short
	}
	if len(short) < 2 || short[0] != long[0] {
		return false
	}
	k := 0
	for j := 0; j < len(long) && k < len(short); j++ {
		if long[j] == short[k] {
			k++
		}
	}
	return k == len(short)
}

// mistypedFlag is where args give the flag name that is not a flag (-name, --name, --name=V),
// the first place before any "--"; -1 where they do not.
func mistypedFlag(args []string, name string) int {
	for i, a := range args {
		if a == "--" {
			break
		}
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && n == name {
			return i
		}
	}
	return -1
}

// renamedFlag is args with the flag mistyped at i given as near, the flag meant, with the value
// typed for it; where near takes a value and none was typed, value's.
func renamedFlag(fs *flag.FlagSet, args []string, i int, near string, value func() string) []string {
	out := slices.Clone(args)
	if i < 0 {
		return append(out, "--"+near, value())
	}
	_, v, eq := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
	f := fs.Lookup(near)
	switch {
	case f != nil && boolFlag(f):
		out[i] = "--" + near
	case eq && v != "":
		out[i] = "--" + near + "=" + v
	case !eq && i+1 < len(out) && !strings.HasPrefix(out[i+1], "-"):
		out[i] = "--" + near
	default:
		out = slices.Replace(out, i, i+1, "--"+near, value())
	}
	return out
}

// backendChoices are the backends this binary runs, in the order the docs name them.
func backendChoices() []string {
	names := []string{"sim"}
	for _, n := range []string{"slurm", "kubernetes"} {
		if _, ok := backends[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

// checkBackend refuses a --backend or QM_BACKEND naming no backend; empty is the policy's.
func checkBackend(s startSetting, v string) error {
	if v == "" || v == "sim" {
		return nil
	}
	if _, ok := backends[v]; ok {
		return nil
	}
	names := backendChoices()
	example := "sim"
	if w := strings.ToLower(strings.TrimSpace(v)); w != v {
		for _, n := range names {
			if n == w {
				example = n
			}
		}
	}
	list := policy.JoinList(names, "or")
	return errUsage{fmt.Sprintf("%s is not a backend; use %s, e.g. %s", s.quoted(v), list, s.eg(example))}
}

// slurmCommands are Slurm's client commands the Slurm backend runs.
var slurmCommands = []string{"sbatch", "squeue", "scontrol", "scancel", "sinfo"}

// checkBackendHost refuses the Slurm backend, chosen by s (--backend or QM_BACKEND) or else by
// the policy, on a host without Slurm's client commands: no lease could ever start there. A
// policy that cannot be read is left for NewApp to refuse.
func checkBackendHost(s startSetting, flags commonFlags) error {
	backend, setting, sim := flags.backend, s.example("slurm"), s.example("sim")
	if backend == "" {
		pol, err := flags.loadPolicy()
		if err != nil {
			return nil
		}
		backend, setting, sim = pol.Backend, "the policy's backend: slurm", "--backend sim"
	}
	if backend != "slurm" {
		return nil
	}
	var missing []string
	for _, c := range slurmCommands {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	what := missing[0] + " is"
	if len(missing) > 1 {
		what = policy.JoinList(missing, "and") + " are"
	}
	return errUsage{fmt.Sprintf("%s needs Slurm's client commands, but %s not on PATH (%s); install them (apt-get install slurm-client, with the cluster's slurm.conf in /etc/slurm), or run the simulated cluster with %s",
		setting, what, os.Getenv("PATH"), sim)}
}

// checkBackendMappings refuses a backend chosen by s (--backend or QM_BACKEND) over the policy's
// when a class of the policy has no mapping for it (slurm.partition; kubernetes.resource or
// node_selector), which policy check asks of the policy's own backend: no lease of that class
// could be placed. A policy that cannot be read is left for NewApp to refuse.
func checkBackendMappings(s startSetting, flags commonFlags) error {
	backend := flags.backend
	if backend != "slurm" && backend != "kubernetes" {
		return nil
	}
	pol, err := flags.loadPolicy()
	if err != nil || pol.Backend == backend {
		return nil
	}
	for _, c := range pol.Classes {
		switch {
		case c == nil:
		case backend == "slurm" && c.Slurm.Partition == "":
			return errUsage{fmt.Sprintf("%s needs each class's slurm.partition, but class %s has none in the policy (written for backend %s); add slurm: {partition: %s, gres: \"gpu\"} to it, or run the policy's backend, e.g. %s",
				s.example(backend), c.Name, pol.Backend, c.Name, s.eg(pol.Backend))}
		case backend == "kubernetes" && c.Kubernetes.Resource == "" && len(c.Kubernetes.NodeSelector) == 0:
			return errUsage{fmt.Sprintf("%s needs each class's kubernetes.resource or node_selector, but class %s has neither in the policy (written for backend %s); add kubernetes: {resource: nvidia.com/gpu} to it, or run the policy's backend, e.g. %s",
				s.example(backend), c.Name, pol.Backend, s.eg(pol.Backend))}
		}
	}
	return nil
}

// settingFloors are the shortest values the interval and wait settings take: below them a loop
// would spin (QM_RECONCILE_INTERVAL=1ns asks the scheduler about every lease without pause), a
// transaction could never begin, or a job being submitted would be taken for lost at once. Such
// a value is a slip (a unit left off, ns for s), so it is refused rather than obeyed.
var settingFloors = map[string]time.Duration{
	"QM_RECONCILE_INTERVAL": time.Second,
	"QM_TICK_INTERVAL":      time.Second,
	"QM_DATABASE_WAIT":      100 * time.Millisecond,
	"QM_SUBMIT_GRACE":       time.Second,
}

// positiveDuration reads v, the environment variable env, as a positive Go duration no shorter
// than its floor (settingFloors); unset is zero. example is the value the refusal offers (the
// default).
func positiveDuration(env, v, example string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errUsage{fmt.Sprintf("%s=%q is not a positive duration; set a duration with its unit, e.g. %s=%s", env, v, env, example)}
	}
	if floor := settingFloors[env]; d < floor {
		return 0, errUsage{fmt.Sprintf("%s=%q is shorter than %s, the shortest it may be; e.g. %s=%s (the default)", env, v, floor, env, example)}
	}
	return d, nil
}

// checkAppSettings checks every setting of the environment that NewApp reads (the database wait,
// the submit grace, the reconcile interval, the workload settings), so that a bad one is refused
// before the database is opened or migrated.
func checkAppSettings() error {
	for _, s := range []struct{ env, example string }{{"QM_DATABASE_WAIT", "2s"}, {"QM_SUBMIT_GRACE", "2m"}} {
		if _, err := positiveDuration(s.env, os.Getenv(s.env), s.example); err != nil {
			return err
		}
	}
	if _, err := reconcileEvery(); err != nil {
		return err
	}
	_, err := workloadSettings()
	return err
}

// checkHTTPURL refuses a base URL startSetting that is not an absolute http(s) URL.
func checkHTTPURL(env, v, example string) error {
	if v == "" {
		return nil
	}
	u, err := neturl.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q is not an http(s) URL; e.g. %s=%s", env, v, env, example)
	}
	return nil
}

// dbSetting is the database URL as it was set, naming only where it came from (the flag, the
// variable, the variable's file, or the default), with the URL's password masked:
// "--db postgres://qm:xxxxx@db:5432/qm", "QM_DATABASE_URL=postgres://qm:xxxxx@db:5432/qm".
func (c *commonFlags) dbSetting(url string) string {
	red := store.Redact(url)
	switch {
	case c.db == "" || c.dbFrom == "":
		return fmt.Sprintf("the default %s (in QM_DATA_DIR; name another with --db or QM_DATABASE_URL)", red)
	case c.dbFrom == "--db":
		return "--db " + red
	case c.dbFrom == "QM_DATABASE_URL_FILE":
		return "QM_DATABASE_URL_FILE's " + red
	}
	return c.dbFrom + "=" + red
}

// dbExample is v written as the database setting was: --db v, or QM_DATABASE_URL=v.
func (c *commonFlags) dbExample(v string) string {
	if c.dbFrom == "--db" && c.db != "" {
		return "--db " + v
	}
	return "QM_DATABASE_URL=" + v
}

// connect opens the database url names without migrating it. A database that cannot be opened is
// refused in one sentence: the setting and the URL (its password masked), why, and what to do.
func (c *commonFlags) connect(ctx context.Context, url string, logger *slog.Logger) (*store.DB, error) {
	db, err := store.Connect(ctx, url, logger)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the database of %s cannot be opened: %s", c.dbSetting(url), unreachable(url, err, c.dbExample))
	}
	return db, nil
}

// open is connect, then the migrations serve applies at start.
func (c *commonFlags) open(ctx context.Context, url string, logger *slog.Logger) (*store.DB, error) {
	db, err := c.connect(ctx, url, logger)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		_ = db.Close()
		return nil, c.migrateError(url, err)
	}
	return db, nil
}

// deniedSchema finds the schema in PostgreSQL's "permission denied for schema NAME".
var deniedSchema = regexp.MustCompile(`permission denied for schema ("[^"]+"|[^\s"]+)`)

// migrateError is err, from reading or applying the migrations of the database url names, with
// the password masked; a user that may not create tables there is told what to grant it.
func (c *commonFlags) migrateError(url string, err error) error {
	m := deniedSchema.FindStringSubmatch(err.Error())
	if m == nil {
		return maskPassword(url, err)
	}
	schema, user, db := m[1], "", ""
	if u, perr := neturl.Parse(url); perr == nil {
		db = strings.TrimPrefix(u.Path, "/")
		if u.User != nil {
			user = u.User.Username()
		}
	}
	return fmt.Errorf("the database of %s cannot be migrated: the user %q may not create tables in the schema %s; as a superuser, let it (GRANT CREATE ON SCHEMA %s TO %s) or make it the database's owner (ALTER DATABASE %s OWNER TO %s)",
		c.dbSetting(url), user, schema, schema, user, db, user)
}

// maskPassword is err without url's password in its text.
func maskPassword(url string, err error) error {
	pw := ""
	if u, perr := neturl.Parse(url); perr == nil && u.User != nil {
		pw, _ = u.User.Password()
	}
	if len(pw) < 3 || !strings.Contains(err.Error(), pw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
}

// unreachable says why the database url names could not be opened (err) and what to do about it.
// example writes a URL as the setting was written.
func unreachable(url string, err error, example func(string) string) string {
	if file := store.SQLiteFile(url); file != "" {
		return sqliteUnusable(file, err, example)
	}
	if m := badPort.FindStringSubmatch(err.Error()); m != nil {
		if at := strings.Index(url, "@") + 1; strings.Contains(url[at:], ":"+m[1]) {
			fixed := url[:at] + strings.Replace(url[at:], ":"+m[1], ":5432", 1)
			if u, perr := neturl.Parse(fixed); perr == nil {
				return fmt.Sprintf("the port %q in the URL is not a number; write PostgreSQL's port (5432 unless the server was set up otherwise), e.g. %s", m[1], example(exampleURL(u, nil)))
			}
		}
	}
	u, perr := neturl.Parse(url)
	if perr != nil || u.Host == "" {
		return oneLine(err.Error())
	}
	if why := badParameter(u, err, example); why != "" {
		return why
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	where := net.JoinHostPort(host, port)
	user, db := "", strings.TrimPrefix(u.Path, "/")
	if u.User != nil {
		user = u.User.Username()
	}
	code, pgMsg, isPG := store.PostgresError(err)
	var dns *net.DNSError
	var nerr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing accepts connections at %s; start PostgreSQL there, or correct the host and port in the URL", where)
	case errors.As(err, &dns):
		return fmt.Sprintf("the host %s is not known (%s); correct the host in the URL, e.g. %s", host, dns.Err, example("postgres://USER:PASSWORD@db.example.internal:5432/DB"))
	case errors.As(err, &nerr) && nerr.Timeout():
		return fmt.Sprintf("%s does not answer; check that PostgreSQL runs there and that no firewall stands between it and this machine", where)
	case isPG && code == "28P01":
		return fmt.Sprintf("PostgreSQL refuses the password of the user %q; correct the password in the URL (percent-encode @ : / ? # %% in it, e.g. p%%40ss for p@ss), or set it with ALTER ROLE %s PASSWORD '…'", user, user)
	case isPG && code == "28000":
		return fmt.Sprintf("PostgreSQL refuses the user %q: %s; correct the user in the URL, or create it (CREATE ROLE %s LOGIN PASSWORD '…') and let it connect from this host in pg_hba.conf", user, pgMsg, user)
	case isPG && code == "3D000":
		return fmt.Sprintf("%s on %s; create it (createdb -h %s -p %s -U %s %s), or correct its name in the URL", pgMsg, where, host, port, user, db)
	case errors.As(err, &nerr):
		return fmt.Sprintf("%s cannot be reached (%s); correct the host and port in the URL", where, oneLine(err.Error()))
	}
	return oneLine(err.Error())
}

var (
	// badPort finds the port in Go's "invalid port ":abc" after host", which the driver returns
	// for a URL whose port is no number.
	badPort = regexp.MustCompile(`invalid port ":([^"]*)" after host`)
	// wrongValue finds the parameter in the driver's "pq: wrong value for "sslmode": …", or the
	// variable of the environment in "pq: wrong value for $PGSSLMODE: …".
	wrongValue = regexp.MustCompile(`pq: wrong value for (?:"([^"]+)"|\$([A-Z_]+))`)
	// unknownParameter finds the name in PostgreSQL's "unrecognized configuration parameter "x"".
	unknownParameter = regexp.MustCompile(`unrecognized configuration parameter "([^"]+)"`)
)

// urlParameters are the parameters of a postgres:// URL that the driver reads itself; any other
// is sent to the server as a setting of the session.
var urlParameters = []string{"sslmode", "sslrootcert", "sslcert", "sslkey", "sslsni", "sslinline", "connect_timeout",
	"search_path", "application_name", "target_session_attrs", "options", "statement_timeout"}

// sslModes are the driver's values of sslmode.
const sslModes = "disable, allow, prefer, require, verify-ca or verify-full"

// exampleURL is u, its password written PASSWORD, with edit applied to its query.
func exampleURL(u *neturl.URL, edit func(q neturl.Values)) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = neturl.UserPassword(c.User.Username(), "PASSWORD")
		}
	}
	q := c.Query()
	if edit != nil {
		edit(q)
	}
	c.RawQuery = q.Encode()
	return c.String()
}

// misspelledParameter is the parameter of u that is a typo of want ("sslmod" for "sslmode"), or "".
func misspelledParameter(u *neturl.URL, want string) string {
	for k := range u.Query() {
		if k != want && policy.EditDistance(k, want) <= 2 {
			return k
		}
	}
	return ""
}

// badParameter says what is wrong with a parameter of the URL u that err complains of, and gives
// the URL put right (example writes it as the setting was written); "" when err is of another kind.
func badParameter(u *neturl.URL, err error, example func(string) string) string {
	msg := err.Error()
	if m := wrongValue.FindStringSubmatch(msg); m != nil {
		if m[2] != "" {
			return fmt.Sprintf("the environment's %s is not a value the PostgreSQL driver takes; unset it (unset %s), or correct it", m[2], m[2])
		}
		name := m[1]
		if name == "sslmode" {
			return fmt.Sprintf("sslmode=%s in the URL is not a value it takes; write one of %s, e.g. %s",
				u.Query().Get(name), sslModes, example(exampleURL(u, func(q neturl.Values) { q.Set("sslmode", "require") })))
		}
		takes := "the value PostgreSQL's connection strings document for it"
		if name == "connect_timeout" {
			takes = "a whole number of seconds, without a unit"
		}
		return fmt.Sprintf("%s=%s in the URL is not a value it takes (%s takes %s); correct it or leave it out, e.g. %s",
			name, u.Query().Get(name), name, takes, example(exampleURL(u, func(q neturl.Values) { q.Del(name) })))
	}
	if m := unknownParameter.FindStringSubmatch(msg); m != nil {
		name, value := m[1], u.Query().Get(m[1])
		best, dist := "", 3
		for _, p := range urlParameters {
			if d := policy.EditDistance(name, p); d < dist {
				best, dist = p, d
			}
		}
		if best != "" {
			return fmt.Sprintf("%q in the URL is no parameter PostgreSQL knows; did you mean %s? e.g. %s", name, best,
				example(exampleURL(u, func(q neturl.Values) { q.Del(name); q.Set(best, value) })))
		}
		return fmt.Sprintf("%q in the URL is no parameter PostgreSQL knows; leave it out, e.g. %s", name,
			example(exampleURL(u, func(q neturl.Values) { q.Del(name) })))
	}
	if strings.Contains(msg, "SSL is not enabled on the server") {
		if typo := misspelledParameter(u, "sslmode"); typo != "" {
			return fmt.Sprintf("the server at %s takes no SSL connections, and %q in the URL is no parameter; did you mean sslmode? e.g. %s", u.Host, typo,
				example(exampleURL(u, func(q neturl.Values) { v := q.Get(typo); q.Del(typo); q.Set("sslmode", v) })))
		}
		return fmt.Sprintf("the server at %s takes no SSL connections; turn SSL on in its postgresql.conf, or, on a network you trust, connect without it, e.g. %s", u.Host,
			example(exampleURL(u, func(q neturl.Values) { q.Set("sslmode", "disable") })))
	}
	return ""
}

// sqliteUnusable says why SQLite could not open file, and what to do.
func sqliteUnusable(file string, err error, example func(string) string) string {
	dir := filepath.Dir(file)
	if file == "~" || strings.HasPrefix(file, "~/") {
		if home, herr := os.UserHomeDir(); herr == nil {
			return fmt.Sprintf("%s begins with ~, which a shell expands only at the start of a word, not after sqlite:; write the path out, e.g. %s",
				file, example("sqlite:"+filepath.Join(home, strings.TrimPrefix(file, "~"))))
		}
	}
	if isDir(file) {
		return fmt.Sprintf("%s is a directory; name a file in it, e.g. %s", file, example("sqlite:"+filepath.Join(file, "quartermaster.db")))
	}
	if !isDir(dir) {
		return fmt.Sprintf("the directory %s does not exist; create it (mkdir -p %s), or name a file in a directory that exists, e.g. %s", dir, dir,
			example("sqlite:"+filepath.Join(store.SQLiteDirInstead(dir), filepath.Base(file))))
	}
	// SQLite writes the file and its journal beside it: the directory must take new files.
	probe, werr := os.CreateTemp(dir, ".quartermaster-write-check-*")
	if werr == nil {
		probe.Close()
		_ = os.Remove(probe.Name())
	} else {
		why := werr
		var pe *fs.PathError
		if errors.As(werr, &pe) {
			why = pe.Err
		}
		return fmt.Sprintf("this user cannot write the directory %s (%v), where SQLite keeps the file and its journal; make it writable by the user the service runs as, or name a file in a directory it can write", dir, why)
	}
	return oneLine(err.Error())
}

func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}
