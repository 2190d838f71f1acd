package predict

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// phillyAt is a time of testdata/cluster_job_log, in seconds since 1970.
func phillyAt(t *testing.T, s string) int64 {
	t.Helper()
	at, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		t.Fatal(err)
	}
	return at.Unix()
}

// The Philly log reads as published: the wait runs to the first attempt's start, the size is the
// GPUs the first attempt was placed on, the end is the last attempt's end, the queue is the
// virtual cluster; a job with no attempt never started and leaves at once, its size unknown.
func TestReadPhilly(t *testing.T) {
	tr, err := ReadTraceFile(filepath.Join("testdata", "cluster_job_log"), "")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) int64 { return phillyAt(t, "2017-10-03 "+s) }
	want := []Job{
		{Submit: at("04:30:00"), Start: at("04:40:00"), End: at("06:00:00"), GPUs: 16, User: "6c1f29", Queue: "b436b2"}, // two machines
		{Submit: at("04:34:49"), Start: at("04:35:19"), End: at("05:35:19"), GPUs: 8, User: "ce2f4c", Queue: "ee9e8c"},
		{Submit: at("04:50:00"), Start: -1, End: at("04:50:00"), GPUs: 0, User: "ce2f4c", Queue: "ee9e8c"},             // no attempt
		{Submit: at("05:00:00"), Start: at("05:00:10"), End: at("05:30:00"), GPUs: 2, User: "0f8bd3", Queue: "b436b2"}, // two attempts
		{Submit: at("05:10:00"), Start: at("05:20:00"), End: -1, GPUs: 1, User: "ce2f4c", Queue: "ee9e8c"},             // still running
		{Submit: at("06:02:00"), Start: at("06:10:00"), End: at("06:10:00"), GPUs: 4, User: "ce2f4c", Queue: "ee9e8c"}, // ends before its start
		{Submit: at("06:14:00"), Start: at("06:15:00"), End: at("06:16:00"), GPUs: 0, User: "0f8bd3", Queue: "ee9e8c"}, // no machine recorded
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs\n%+v\nwant\n%+v", tr.Jobs, want)
	}
	waits := []int64{600, 30, -1, 10, 600, 480, 60}
	for i, j := range tr.Jobs {
		if w := waits[i]; (w < 0) == j.Started() || (j.Started() && j.Wait() != w) {
			t.Errorf("job %d: started %v, wait %d; want %d", i, j.Started(), j.Wait(), w)
		}
	}
	// Left out: a first attempt with no start, no submit time, a start before the submit, an
	// attempt on no GPU (by choice), a time that is not one, gpus that are not a list.
	if tr.Skipped != 6 || tr.Why != "1 ran but have no recorded start (the first attempt's start_time is None), the first on line 100" {
		t.Errorf("left out %d: %q", tr.Skipped, tr.Why)
	}
	var sk skips
	f, err := os.Open(filepath.Join("testdata", "cluster_job_log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := readRows(f, FormatPhilly, &sk, func(*row) {}); err != nil {
		t.Fatal(err)
	}
	for reason, line := range map[string]int{
		"ran but have no recorded start (the first attempt's start_time is None)": 100,
		"have no submitted_time":                   119,
		"start before they were submitted":         127,
		"hold a time that is not a date and time":  198,
		"are not jobs as Philly's log writes them": 217,
	} {
		if sk.n[reason] != 1 || sk.first[reason] != line {
			t.Errorf("%q: %d, first on line %d; want 1 on line %d (all: %v %v)", reason, sk.n[reason], sk.first[reason], line, sk.n, sk.first)
		}
	}
}

// The format is told by the name (cluster_job_log, .json), by the first character of the file
// ('[' for the log's array, '{' for one job after another), or by --format philly.
func TestPhillyFormat(t *testing.T) {
	for path, want := range map[string]string{
		"trace-data/cluster_job_log": FormatPhilly, "cluster_job_log.gz": FormatPhilly, "jobs.json": FormatPhilly,
		"jobs.JSON.gz": FormatPhilly, "cluster_gpu_util": "",
	} {
		if got := FormatFromPath(path); got != want {
			t.Errorf("FormatFromPath(%q) = %q, want %q", path, got, want)
		}
	}
	one := `{"status": "Pass", "vc": "v", "jobid": "a_1", "user": "u", "submitted_time": "2017-10-03 04:34:49",
 "attempts": [{"start_time": "2017-10-03 04:35:19", "end_time": "2017-10-03 05:35:19", "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]}]}`
	two := strings.ReplaceAll(strings.ReplaceAll(one, "a_1", "a_2"), "04:34:49", "04:34:50")
	for name, text := range map[string]string{
		"array":         "[" + one + ",\n" + two + "]\n",
		"lines":         one + "\n" + two + "\n",
		"blank first":   "\n\t [" + one + ", " + two + "]",
		"byte order":    "\ufeff[" + one + "," + two + "]",
		"compact array": "[" + strings.ReplaceAll(one, "\n", "") + "," + strings.ReplaceAll(two, "\n", "") + "]",
	} {
		for _, format := range []string{"", FormatPhilly} {
			tr, err := ReadTrace(strings.NewReader(text), format)
			if err != nil {
				t.Errorf("%s, format %q: %v", name, format, err)
				continue
			}
			if len(tr.Jobs) != 2 || tr.Skipped != 0 || tr.Jobs[0].GPUs != 2 || tr.Jobs[0].Wait() != 30 || tr.Jobs[1].Wait() != 29 {
				t.Errorf("%s, format %q: %+v", name, format, tr)
			}
		}
	}
	// --format philly reads a file whatever its name.
	path := filepath.Join(t.TempDir(), "trace.dat")
	if err := os.WriteFile(path, []byte("["+one+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tr, err := ReadTraceFile(path, FormatPhilly); err != nil || len(tr.Jobs) != 1 {
		t.Errorf("--format philly: %+v, %v", tr, err)
	}
	// A CSV is still a CSV, and sacct's output still sacct's.
	if tr, err := ReadTrace(strings.NewReader("job_id,submit_time,start_time,end_time,gpus\n1,0,5,9,1\n"), FormatCSV); err != nil || len(tr.Jobs) != 1 {
		t.Errorf("csv: %+v, %v", tr, err)
	}
}

func TestReadPhillyErrors(t *testing.T) {
	job := func(submit, start string) string {
		return fmt.Sprintf(`{"vc": "v", "user": "u", "submitted_time": %q, "attempts": [{"start_time": %q, "end_time": "None", "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]}`, submit, start)
	}
	good := job("2017-10-03 04:00:00", "2017-10-03 04:01:00")
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "line 1: empty file; want Philly's cluster_job_log, a JSON array of jobs"},
		{"not json", "job_id,submit_time\n1,2\n", "line 1: not Philly's cluster_job_log, a JSON array of jobs"},
		{"mostly no start", "[\n" + good + ",\n" + job("2017-10-03 04:00:00", "None") + ",\n" + job("2017-10-03 04:00:00", "None") + "\n]",
			"2 of 3 records cannot be replayed (2 ran but have no recorded start (the first attempt's start_time is None), the first on line 3): a job needs its submit time, its size and its wait or start time"},
		{"broken", "[\n{\"vc\": ]", "1 of 1 records cannot be replayed (1 cannot be read as JSON, the first on line 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.in), FormatPhilly)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.Count(err.Error(), ". ") > 0 || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %q, want one sentence", err)
			}
		})
	}
	// A file cut short keeps the jobs before the cut.
	tr, err := ReadTrace(strings.NewReader("[\n"+good+",\n"+good+",\n"+good+",\n{\"vc\": \"v\", \"sub"), FormatPhilly)
	if err != nil || len(tr.Jobs) != 3 || tr.Skipped != 1 || tr.Why != "1 cannot be read as JSON, the first on line 5" {
		t.Errorf("cut short: %+v, %v", tr, err)
	}
}

// phillyOf writes tr as Philly's cluster_job_log, its jobs in the given order.
func phillyOf(tr Trace, order []int) string {
	origin := time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int64) string {
		if s < 0 {
			return "None"
		}
		return origin.Add(time.Duration(s) * time.Second).Format("2006-01-02 15:04:05")
	}
	var b strings.Builder
	b.WriteString("[\n")
	for k, i := range order {
		j := tr.Jobs[i]
		var gpus []string
		for g := range int(j.GPUs) {
			gpus = append(gpus, fmt.Sprintf("%q", fmt.Sprintf("gpu%d", g)))
		}
		if k > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `    {"status": "Pass", "vc": %q, "jobid": "application_%d", "attempts": [{"start_time": %q, "end_time": %q, "detail": [{"ip": "m%d", "gpus": [%s]}]}], "submitted_time": %q, "user": %q}`,
			j.Queue, i, at(j.Start), at(j.End), i%40, strings.Join(gpus, ", "), at(j.Submit), j.User)
	}
	b.WriteString("\n]\n")
	return b.String()
}

// Philly's log is not in submit order: EvaluateFile reads it into memory and reports what
// Evaluate does.
func TestEvaluatePhillyFile(t *testing.T) {
	orig, _ := deepQueueTrace(2000, 64)
	order := make([]int, len(orig.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.Reverse(order[:len(order)/2]) // the first half backwards
	path := filepath.Join(t.TempDir(), "cluster_job_log")
	if err := os.WriteFile(path, []byte(phillyOf(orig, order)), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := EvaluateFile(path, "", "x", DefaultTrainFraction)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTraceFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != len(orig.Jobs) || tr.Jobs[0].Wait() != orig.Jobs[0].Wait() || tr.Jobs[0].GPUs != orig.Jobs[0].GPUs {
		t.Fatalf("read %d jobs (first %+v), want %d (first %+v)", len(tr.Jobs), tr.Jobs[0], len(orig.Jobs), orig.Jobs[0])
	}
	if want := Evaluate(tr, "x", DefaultTrainFraction); !reflect.DeepEqual(got, want) {
		t.Errorf("from the file\n%+v\nin memory\n%+v", got, want)
	}
	if got.Scored == 0 {
		t.Errorf("nothing scored: %+v", got)
	}
}
