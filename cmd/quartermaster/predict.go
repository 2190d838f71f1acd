package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/acme/quartermaster/internal/predict"
	"github.com/acme/quartermaster/internal/shellword"
)

func init() {
	registerCommand("predict", subcommand{
		summary: "evaluate the queue-wait predictor on a trace",
		usage:   strings.TrimPrefix(predictUsage, "usage: "),
		flags:   func() *flag.FlagSet { return predictFlags(&predictOptions{}) },
		run:     runPredict,
		checks:  true, // it stops before it reads the trace
	})
}

type predictOptions struct {
	trace, format string
	train         float64
	asJSON        bool
}

func predictFlags(o *predictOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("predict eval", flag.ContinueOnError)
	fs.StringVar(&o.trace, "trace", "", "job trace to replay (.swf, .swf.gz, .csv, sacct's output or Slurm's job table, or Philly's cluster_job_log)")
	fs.StringVar(&o.format, "format", "", "trace format: swf, csv, sacct or philly (default: from the file name, or else from the first line: sacct's header, or the '[' of Philly's JSON job log)")
	fs.Float64Var(&o.train, "train-fraction", predict.DefaultTrainFraction, "share of jobs replayed before scoring starts")
	fs.BoolVar(&o.asJSON, "json", false, "print the results as JSON")
	return fs
}

// predictExamples are values of eval's flags that work, each with the --trace eval needs, for the
// examples of a flag mistake.
var predictExamples = map[string]string{
	"trace":          predictTrace,
	"format":         "swf --trace " + predictTrace,
	"train-fraction": "0.3 --trace " + predictTrace,
	"json":           "--trace " + predictTrace,
}

// predictTrace is a trace the repository ships.
const predictTrace = "testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz"

const predictUsage = "usage: quartermaster predict eval --trace FILE [--format swf|csv|sacct|philly] [--train-fraction 0.3] [--json]"

// runPredict implements `quartermaster predict eval`: it replays a job trace in time order and
// prints how the queue-wait predictor and the baselines did on the jobs after the training part.
func runPredict(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "eval" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(stdout, predictUsage)
			return nil
		}
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			var needs []string
			if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "trace") }) {
				needs = []string{"--trace", predictTrace}
			}
			return needsVerb("predict", true, []string{"eval"}, "eval", args, needs)
		}
		return notAVerb("predict", args[0], []string{"eval"}, args, []string{"eval", "--trace", predictTrace})
	}
	var o predictOptions
	fs := predictFlags(&o)
	fs.SetOutput(io.Discard)
	trace, format, train, asJSON := &o.trace, &o.format, &o.train, &o.asJSON
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, predictUsage)
			return nil
		}
		return flagMistakeIn(fs, "quartermaster predict eval", []string{"quartermaster", "predict", "eval"}, args[1:], predictExamples, err)
	}
	switch {
	case fs.NArg() > 0:
		rest := withoutWords(fs, args[1:], fs.Args()[:1])
		if len(flagPlaces(fs, rest, "trace")) == 0 {
			rest = append(rest, "--trace", predictTrace)
		}
		return errUsage{fmt.Sprintf("predict eval takes no more words, but got %q; e.g. %s", fs.Arg(0), shellword.Join(append([]string{"quartermaster", "predict", "eval"}, rest...)))}
	}
	// A flag's value put right, its example gives --trace where none was typed: one that runs.
	withTrace := func(rest []string) string {
		if *trace == "" {
			rest = append(withoutPlaces(rest, flagPlaces(fs, rest, "trace")), "--trace", predictTrace)
		}
		return shellword.Join(append([]string{"quartermaster", "predict", "eval"}, rest...))
	}
	switch {
	case *format != "" && *format != predict.FormatSWF && *format != predict.FormatCSV && *format != predict.FormatSacct && *format != predict.FormatPhilly:
		return errUsage{fmt.Sprintf("--format is swf, csv, sacct or philly, not %q; e.g. %s", *format, withTrace(withFlag(fs, args[1:], "format", predict.FormatSWF)))}
	case !(*train >= 0 && *train < 1): // NaN too
		return errUsage{fmt.Sprintf("--train-fraction is a number from 0 up to (not including) 1, not %v; e.g. %s", *train, withTrace(withFlag(fs, args[1:], "train-fraction", "0.3")))}
	case *trace == "":
		return errUsage{"predict eval needs --trace, the job trace to replay, e.g. " + shellword.Join(append(append([]string{"quartermaster", "predict", "eval"}, args[1:]...), "--trace", predictTrace))}
	}
	if checking(ctx) {
		return nil // the flags are right; the trace is read where the command runs
	}
	// A trace that is not there is a mistake of the command line, answered with one that is.
	if fi, err := os.Stat(*trace); err != nil || fi.IsDir() {
		what := "does not exist"
		switch {
		case err == nil:
			what = "is a directory, not a trace file"
		case !errors.Is(err, os.ErrNotExist):
			what = "cannot be read: " + oneLine(err.Error())
		}
		return refusal(fmt.Sprintf("--trace %s %s", *trace, what), "predict", append([]string{"eval"}, withFlag(fs, args[1:], "trace", predictTrace)...))
	}
	// A replay runs once and churns through short-lived jobs and events: the collector runs
	// when the heap has grown by half rather than doubled (unless GOGC says otherwise), which
	// keeps the peak lower for a few percent more CPU (docs/benchmarks.md).
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(50))
	}
	rep, err := predict.EvaluateFile(*trace, *format, filepath.Base(*trace), *train)
	if errors.Is(err, predict.ErrFormatUnknown) {
		return refusal(fmt.Sprintf("cannot tell the format of %s from its name or its first line; add --format swf, --format csv, --format sacct or --format philly", *trace),
			"predict", append(append([]string{"eval"}, onceEach(fs, args[1:])...), "--format", predict.FormatSWF))
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printReport(stdout, rep)
}

func printReport(w io.Writer, rep predict.Report) error {
	fmt.Fprintf(w, "%s: %d jobs, %d scored (%d started)\n", rep.Trace, rep.Jobs, rep.Scored, rep.Started)
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "%d records left out: %s\n", rep.Skipped, rep.Why)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "predictor\tMAE min\tmedian AE min\twithin 15%/60s\tband acc\tP90 coverage\tof started\tmay not start\tP90 tightness\t")
	var matched *predict.Matched
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t\n", r.Predictor, r.MAEMinutes, r.MedianAEMinutes,
			r.Within15, r.BandAccuracy, r.P90Coverage, r.P90CoverageStarted, r.P90Unbounded, r.P90Tightness)
		if r.Matched != nil {
			matched = r.Matched
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if matched != nil && len(rep.Results) > 0 {
		q := rep.Results[0]
		fmt.Fprintf(w, "\nP90 tightness at the same coverage (%.3f): %s %.2f, qbets %.2f (its quantile set to %.4f after the fact)\n",
			matched.Coverage, q.Predictor, q.P90Tightness, matched.Tightness, matched.Quantile)
	}
	return nil
}
