package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPredictUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(trace, []byte("job_id,submit_time,start_time,end_time,gpus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.dat"), []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no verb", nil, "predict needs a command: eval, e.g. quartermaster predict eval --trace"},
		{"wrong verb", []string{"run"}, `"run" is not a predict command; predict takes eval, e.g. quartermaster predict eval --trace`},
		{"no trace", []string{"eval"}, "predict eval needs --trace"},
		{"bad format", []string{"eval", "--trace", trace, "--format", "xml"}, `--format is swf, csv, sacct or philly, not "xml"; e.g. quartermaster predict eval --trace`},
		{"bad fraction", []string{"eval", "--trace", trace, "--train-fraction", "1"}, "--train-fraction is a number from 0 up to (not including) 1, not 1; e.g."},
		{"unknown flag", []string{"eval", "--trace", trace, "--fast"}, "--fast is not a flag of quartermaster predict eval"},
		{"extra argument", []string{"eval", "--trace", trace, "more"}, `predict eval takes no more words, but got "more"; e.g. quartermaster predict eval --trace`},
		{"unknown extension", []string{"eval", "--trace", filepath.Join(dir, "t.dat")}, "--format swf, --format csv, --format sacct or --format philly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			err := runPredict(context.Background(), tc.args, nil, &out, &errw)
			var u errUsage
			if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

func TestPredictEval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := filepath.Join(dir, "tiny.swf")
	swf := "; MaxProcs: 2\n" +
		"1 0 0 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n" +
		"2 10 0 100 1 -1 -1 1 100 -1 1 2 2 -1 -1 -1 -1 -1\n" +
		"3 20 80 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n" +
		"4 30 170 50 1 -1 -1 1 100 -1 1 2 2 -1 -1 -1 -1 -1\n" +
		"5 35 -1 50 1 -1 -1 1 100 -1 1 2 2 -1 -1 -1 -1 -1\n" // ran, but its wait is not recorded
	if err := os.WriteFile(trace, []byte(swf), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runPredict(context.Background(), []string{"eval", "--trace", trace, "--train-fraction", "0.5", "--json"}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Trace   string `json:"trace"`
		Jobs    int    `json:"jobs"`
		Scored  int    `json:"scored"`
		Skipped int    `json:"skipped"`
		Results []struct {
			Predictor string          `json:"predictor"`
			MAE       *float64        `json:"mae_minutes"`
			MedianAE  *float64        `json:"median_ae_minutes"`
			Within    *float64        `json:"within_15pct_or_60s"`
			Band      *float64        `json:"band_accuracy"`
			Coverage  *float64        `json:"p90_coverage"`
			OfStarted *float64        `json:"p90_coverage_started"`
			Unbounded *float64        `json:"p90_unbounded"`
			Tightness json.RawMessage `json:"p90_tightness"` // null when more than half the bounds say "may not start"
			Matched   *float64        `json:"p90_tightness_matched"`
			QuantileM *float64        `json:"p90_quantile_matched"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if rep.Trace != "tiny.swf" || rep.Jobs != 4 || rep.Scored != 2 || rep.Skipped != 1 {
		t.Errorf("trace %q, jobs %d, scored %d, skipped %d; want tiny.swf, 4, 2, 1", rep.Trace, rep.Jobs, rep.Scored, rep.Skipped)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Predictor)
		if (r.Predictor == "qbets") != (r.Matched != nil && r.QuantileM != nil) {
			t.Errorf("%s: p90_tightness_matched %v, p90_quantile_matched %v; want them on qbets alone", r.Predictor, r.Matched, r.QuantileM)
		}
		if r.MAE == nil || r.MedianAE == nil || r.Within == nil || r.Band == nil || r.Coverage == nil || r.OfStarted == nil ||
			r.Unbounded == nil || len(r.Tightness) == 0 {
			t.Errorf("%s: a metric is missing in %s", r.Predictor, out.String())
		}
	}
	if got := strings.Join(names, ","); got != "quartermaster,zero,recent100,user_recent,qbets" {
		t.Errorf("predictors %s", got)
	}

	out.Reset()
	if err := runPredict(context.Background(), []string{"eval", "--trace", trace}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "tiny.swf: 4 jobs, 3 scored") || !strings.Contains(out.String(), "user_recent") ||
		!strings.Contains(out.String(), "1 records left out: 1 ran but have no recorded wait (field 3 is -1), the first on line 6") ||
		!strings.Contains(out.String(), "may not start") || !strings.Contains(out.String(), "at the same coverage") {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestPredictEvalBadTrace(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(trace, []byte("job_id,submit_time,start_time,end_time,gpus\n1,0,zero,5,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runPredict(context.Background(), []string{"eval", "--trace", trace}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "1 of 1 records cannot be replayed (1 hold a time that is neither seconds from the trace's start nor a date and time, the first on line 2)") {
		t.Fatalf("err = %v", err)
	}
	// LLNL Thunder records when jobs started but not when they arrived: nothing to score, and
	// the file says so in one sentence.
	err = runPredict(context.Background(), []string{"eval", "--trace", filepath.Join("..", "..", "testdata", "traces", "LLNL-Thunder-2007-1.1-cln.swf.gz")}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "120958 of 121039 records cannot be replayed (118710 ran but have no recorded wait (field 3 is -1), the first on line 27)") {
		t.Fatalf("err = %v", err)
	}
}

// TestPredictEvalSacct: a Slurm cluster's sacct --parsable2 output replays as it is, with no
// --format; its job steps are not jobs, and CPU jobs of a GPU cluster are left out and said so.
func TestPredictEvalSacct(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("JobID|User|Partition|Submit|Start|End|Timelimit|ReqTRES|State\n")
	for i := range 8 {
		fmt.Fprintf(&b, "%d|u%d|gpu|2024-01-01T10:%02d:00|2024-01-01T10:%02d:30|2024-01-01T11:00:00|01:00:00|billing=8,cpu=8,gres/gpu=1,gres/gpu:a100=1,mem=8G,node=1|COMPLETED\n", 10+i, i%2, i, i)
		fmt.Fprintf(&b, "%d.batch|||2024-01-01T10:%02d:30|2024-01-01T10:%02d:30|2024-01-01T11:00:00|||COMPLETED\n", 10+i, i, i)
	}
	b.WriteString("30|u0|cpu|2024-01-01T10:20:00|2024-01-01T10:20:00|2024-01-01T10:30:00|10|billing=1,cpu=1,mem=1G,node=1|COMPLETED\n")
	trace := filepath.Join(t.TempDir(), "jobs.txt")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"eval", "--trace", trace}, {"eval", "--trace", trace, "--format", "sacct"}} {
		var out bytes.Buffer
		if err := runPredict(context.Background(), args, nil, &out, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "jobs.txt: 8 jobs") || !strings.Contains(out.String(), "1 records left out: 1 ask for no GPU, the first on line 18") {
			t.Errorf("%v:\n%s", args, out.String())
		}
	}
}

// TestPredictEvalPhilly: Philly's job log replays as published, told by its name, by its first
// character, or by --format philly, though its jobs are not in submit order.
func TestPredictEvalPhilly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("[\n")
	for i := range 12 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `    {"status": "Pass", "vc": "vc%d", "jobid": "application_1506638472019_%d", "attempts": [{"start_time": "2017-10-03 05:%02d:30", "end_time": "2017-10-03 06:00:00", "detail": [{"ip": "m%d", "gpus": ["gpu0", "gpu1"]}]}], "submitted_time": "2017-10-03 05:%02d:00", "user": "u%d"}`,
			i%2, i, 50-4*i, i, 50-4*i, i%3)
	}
	b.WriteString(",\n    {\"status\": \"Killed\", \"vc\": \"vc0\", \"jobid\": \"application_1506638472019_99\", \"attempts\": [], \"submitted_time\": \"None\", \"user\": \"u0\"}\n]\n")
	for _, name := range []string{"cluster_job_log", "jobs.json", "jobs.txt"} {
		trace := filepath.Join(dir, name)
		if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"eval", "--trace", trace}, {"eval", "--trace", trace, "--format", "philly"}} {
			var out bytes.Buffer
			if err := runPredict(context.Background(), args, nil, &out, &out); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			if !strings.Contains(out.String(), name+": 12 jobs") || !strings.Contains(out.String(), "1 records left out: 1 have no submitted_time, the first on line 14") {
				t.Errorf("%v:\n%s", args, out.String())
			}
		}
	}
}
