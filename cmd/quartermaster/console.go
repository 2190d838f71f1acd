package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/acme/quartermaster/bot/console"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/store"
	"golang.org/x/term"
)

func init() {
	registerCommand("console", subcommand{
		summary: "the bot in a terminal, on the embedded default (SQLite, sim cluster, example policy)",
		usage: "quartermaster console [--policy FILE] [--db URL] [--backend sim|slurm|kubernetes] [--json] [--clock RFC3339]\n" +
			"                      [--reports DIR] < script\n" +
			"lines are USER: TEXT, USER someone of the policy's directory, e.g. USER: /gpu request for 2h;\n" +
			":advance 45m moves the clock; a line it cannot read is answered with one from the policy",
		flags: func() *flag.FlagSet { fs, _, _, _, _ := consoleFlags(); return fs },
		run:   runConsole,
	})
}

func consoleFlags() (fs *flag.FlagSet, o *appOptions, asJSON *bool, clock, reportsDir *string) {
	fs = flag.NewFlagSet("console", flag.ContinueOnError)
	o = &appOptions{}
	o.flags.register(fs)
	asJSON = fs.Bool("json", false, "print one JSON object per bot message")
	reportsDir = fs.String("reports", filepath.Join(dataDir(), "reports"), "where the weekly showback's chart and CSV are written")
	clock = fs.String("clock", "", "start the simulated clock at this RFC3339 instant (default: now, or the last change the database records if that is later)")
	return fs, o, asJSON, clock, reportsDir
}

// runConsole runs the console until its input ends or a signal comes: on SIGTERM, SIGINT or
// SIGHUP (its terminal closed) it stops what it runs, closes its database and exits 0 on SIGTERM,
// 130 (128 + SIGINT) on SIGINT, as a shell would on Ctrl-C, and 129 (128 + SIGHUP) on SIGHUP.
func runConsole(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// The session ends on the signal this function receives, not on the caller's context, which
	// the same signal cancels: so the signal that ended it is known, and with it the exit code.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	got := make(chan os.Signal, 1)
	go func() {
		select {
		case s := <-sigs:
			got <- s
			cancel()
		case <-ctx.Done():
		}
	}()
	err := consoleSession(ctx, args, stdin, stdout, stderr) // its database closed on return
	select {
	case s := <-got:
		switch s {
		case os.Interrupt:
			exitConsole(130)
		case syscall.SIGHUP:
			exitConsole(129)
		}
		return nil
	default:
		return err
	}
}

// clockExample is the --clock a refusal offers: 2026-11-30T09:00:00Z, or, where the database the
// flags name is a SQLite file whose history runs past it, where that history stops, since the
// simulated clock never goes back. A server is not waited on to word a refusal.
func clockExample(ctx context.Context, f commonFlags) string {
	ex := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if f.resolveSecrets() != nil {
		return ex.Format(time.RFC3339)
	}
	url := cmp.Or(f.db, "sqlite:"+filepath.Join(dataDir(), "quartermaster.db"))
	if file := store.SQLiteFile(url); file == "" || !isFile(file) {
		return ex.Format(time.RFC3339)
	}
	st, err := store.Open(ctx, url, nil)
	if err != nil {
		return ex.Format(time.RFC3339)
	}
	defer st.Close()
	if last, err := st.HistoryEnd(ctx); err == nil && last.After(ex) {
		ex = last
	}
	return ex.UTC().Format(time.RFC3339)
}

// exitConsole ends the process with a code of its own (130 after SIGINT, 129 after SIGHUP).
var exitConsole = os.Exit

func consoleSession(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, o, asJSON, clock, reportsDir := consoleFlags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return flagMistakeIn(fs, "quartermaster console", []string{"quartermaster", "console"}, args, map[string]string{
			"policy": "docs/quartermaster.example.yaml", "clock": clockExample(ctx, o.flags)}, err)
	}
	if fs.NArg() > 0 {
		return consoleTakesNoWords(fs, o, args, fs.Arg(0))
	}
	if err := checkBackend(settingOf(fs, []string{"quartermaster", "console"}, args, "backend", "QM_BACKEND"), o.flags.backend); err != nil {
		return err
	}
	if err := checkBackendMappings(settingOf(fs, []string{"quartermaster", "console"}, args, "backend", "QM_BACKEND"), o.flags); err != nil {
		return err
	}
	if err := checkBackendHost(settingOf(fs, []string{"quartermaster", "console"}, args, "backend", "QM_BACKEND"), o.flags); err != nil {
		return err
	}
	if *clock != "" {
		t, err := time.Parse(time.RFC3339, *clock)
		if err != nil {
			return refusal(fmt.Sprintf("--clock %q is not an RFC3339 instant", *clock), "console", withFlag(fs, args, "clock", clockExample(ctx, o.flags)))
		}
		o.start = t
	}
	o.simClock = true // on the sim backend; a real scheduler runs on the real clock
	a, err := NewApp(ctx, *o)
	if err != nil {
		return err
	}
	defer a.Close()
	// The console's log is its chat, so the policy's warnings go to standard error, as policy
	// check writes them.
	for _, w := range a.Policy.Warnings {
		fmt.Fprintf(stderr, "warning: %s:%d: %s\n", a.Policy.Source, w.Line, w.Msg)
	}
	c := &console.Console{Handler: a.Handler, Out: stdout, JSON: *asJSON, Prompt: isTerminal(stdin),
		Controls: console.Controls{Now: func() time.Time { return a.Clock.Now().In(a.Policy.Location) }}, FilesDir: *reportsDir}
	if a.Sim != nil {
		c.Controls.Util = a.SetUtilization // a real scheduler's utilization comes from its node agents
	}
	c.ExampleUser, c.ExampleClass = consoleExample(a.Policy)
	for _, e := range a.Policy.Directory {
		c.People = append(c.People, e.User) // whom :as takes
	}
	a.Sender = c
	if a.SimClk != nil {
		c.Controls.Advance = a.Advance
	} else {
		// A real scheduler: the same loops as serve, on the real clock, so a workspace that
		// fails is reported here as it would be in chat.
		stop := startLoops(a, loopOptions{tick: consoleTick}, a.Logger)
		defer stop()
		c.Controls.Wait = func(ctx context.Context, d time.Duration) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
				return nil
			}
		}
	}
	if a.Showback, err = a.publisher(c, replicaName("console")); err != nil {
		return err
	}
	// Where the simulated clock starts is kept, so that the next console goes on from there even
	// when this one changes nothing else; the usage of the time it moved on since the last console
	// is recorded first, as a step of :advance records it.
	if a.SimClk != nil {
		if a.Meter != nil {
			if err := a.Meter.Record(ctx, a.SimClk.Now()); err != nil {
				return err
			}
		}
		if err := a.Store.NoteClock(ctx, a.SimClk.Now()); err != nil {
			return err
		}
	}
	// Whatever fell due while the console was closed happens first, a missed showback included.
	if err := a.Service.Tick(ctx); err != nil {
		return err
	}
	if a.Showback != nil {
		if err := a.Showback.RunDue(ctx); err != nil {
			return err
		}
	}
	return c.Run(ctx, stdin)
}

// consoleTick is how often the console on a real backend looks at what fell due.
const consoleTick = 5 * time.Second

// isTerminal reports whether r is a terminal, as the terminal's own ioctl says: a character
// device is not enough (/dev/null is one), so /dev/null, a pipe and a file read as scripts. The
// descriptor is read through SyscallConn, which leaves its blocking mode as it is (Fd would not).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	if err := sc.Control(func(fd uintptr) { tty = term.IsTerminal(int(fd)) }); err != nil {
		return false
	}
	return tty
}

// consoleExample is whom and which class the console's examples name: the first person of the
// policy's directory who belongs to a team (else the first at all), and its first class.
func consoleExample(p *policy.Policy) (user, class string) {
	if len(p.Classes) > 0 {
		class = p.Classes[0].Name
	}
	for _, t := range p.Teams {
		for _, g := range t.IDPGroups {
			if m := p.Members(g); len(m) > 0 {
				return m[0], class
			}
		}
	}
	if len(p.Directory) > 0 {
		user = p.Directory[0].User
	}
	return user, class
}

// consoleTakesNoWords refuses a word on the console's command line, naming it and the flags the
// console takes, with an input line of the policy given (else the embedded example) that works.
func consoleTakesNoWords(fs *flag.FlagSet, o *appOptions, args []string, word string) error {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	// The console as typed, less the word: its flags, --policy among them where it can be read.
	kept := withoutWords(fs, args, []string{word})
	p, err := o.flags.loadPolicy()
	if err != nil {
		kept = withoutPlaces(kept, flagPlaces(fs, kept, "policy")) // the line is the embedded example's
		if p, err = (&commonFlags{}).loadPolicy(); err != nil {
			return errUsage{fmt.Sprintf("console takes no words, but got %q: it reads USER: TEXT lines from standard input and takes only the flags %s", word, policy.JoinList(names, "and"))}
		}
	}
	command := append([]string{"quartermaster", "console"}, kept...)
	user, class := consoleExample(p)
	line := user + ": /gpu request for 2h"
	if class != "" {
		line = fmt.Sprintf("%s: /gpu request 1 %s for 2h", user, class)
	}
	return errUsage{fmt.Sprintf("console takes no words, but got %q: it reads USER: TEXT lines from standard input and takes only the flags %s, e.g. echo %s | %s",
		word, policy.JoinList(names, "and"), shellword.Quote(line), shellword.Join(command))}
}
