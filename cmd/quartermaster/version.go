package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/acme/quartermaster/internal/buildinfo"
)

func init() {
	registerCommand("version", subcommand{
		summary: "the version, commit and Go version of this binary",
		usage:   "quartermaster version [--short]",
		flags:   func() *flag.FlagSet { fs, _ := versionFlags(); return fs },
		run:     runVersion,
		checks:  true, // it only prints
	})
}

func versionFlags() (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	short := fs.Bool("short", false, "print the version alone")
	return fs, short
}

func runVersion(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs, short := versionFlags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return flagMistake(fs, "quartermaster version", []string{"quartermaster", "version"}, args, err)
	}
	if fs.NArg() > 0 {
		return strayWords(fs, "version", fs.Args(), args)
	}
	b := buildinfo.Get()
	if *short {
		fmt.Fprintln(stdout, b.Version)
		return nil
	}
	fmt.Fprintf(stdout, "quartermaster %s\ncommit:  %s\ngo:      %s %s\n", b.Version, b.Commit, b.GoVersion, b.Platform)
	return nil
}
