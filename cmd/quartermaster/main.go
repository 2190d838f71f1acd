// Command quartermaster is the service, the console and the admin tools.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// subcommand is one verb of the quartermaster command line.
type subcommand struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

var subcommands = map[string]subcommand{}

// register adds a verb; each verb lives in its own file.
func register(name, summary string, run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error) {
	subcommands[name] = subcommand{summary: summary, run: run}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks an error whose message already says how to call the command.
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "quartermaster: unknown command %q; try `quartermaster console`.\n", args[0])
		usage(stderr)
		return 2
	}
	if err := sc.run(ctx, args[1:], stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "quartermaster %s: %v\n", args[0], err)
		if _, ok := err.(errUsage); ok {
			return 2
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: quartermaster COMMAND [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, subcommands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.TrimSpace(`Every command takes --policy FILE and --db URL, or QM_POLICY and QM_DATABASE_URL.`))
}
