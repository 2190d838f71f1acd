package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"sort"
	"strings"
	"testing"
)

// A command's --help usage lines name every flag its flag list has (console's --backend and
// --reports among them), so that the synopsis is the whole command.
func TestEveryFlagOfACommandIsInItsUsage(t *testing.T) {
	var names []string
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		sc := subcommands[name]
		if sc.flags == nil {
			continue
		}
		var out bytes.Buffer
		if code := run(context.Background(), []string{name, "--help"}, nil, &out, io.Discard); code != 0 {
			t.Errorf("%s --help: exit %d", name, code)
			continue
		}
		usage, _, _ := strings.Cut(out.String(), "\nflags:")
		_, usage, _ = strings.Cut(usage, "usage:")
		sc.flags().VisitAll(func(f *flag.Flag) {
			if !strings.Contains(usage, "--"+f.Name+" ") && !strings.Contains(usage, "--"+f.Name+"]") && !strings.Contains(usage, "--"+f.Name+"\n") && !strings.Contains(usage, "--"+f.Name+"=") {
				t.Errorf("%s --help: its usage does not name --%s, which its flags list has:%s", name, f.Name, usage)
			}
		})
	}
}
