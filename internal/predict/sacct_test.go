package predict

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sacctSample is what sacct --allusers --parsable2 --format
// JobID,User,Partition,Submit,Start,End,Timelimit,ReqTRES,State writes for a small GPU cluster:
// jobs with their steps, an array task, a heterogeneous job's component, a pending job and one
// cancelled while pending.
const sacctSample = `JobID|User|Partition|Submit|Start|End|Timelimit|ReqTRES|State
100|alice|gpu|2024-01-01T10:00:00|2024-01-01T10:05:00|2024-01-01T11:05:00|01:30:00|billing=8,cpu=8,gres/gpu=2,gres/gpu:a100=2,mem=64G,node=1|COMPLETED
100.batch|||2024-01-01T10:05:00|2024-01-01T10:05:00|2024-01-01T11:05:00|||COMPLETED
100.extern|||2024-01-01T10:05:00|2024-01-01T10:05:00|2024-01-01T11:05:00|||COMPLETED
100.0|||2024-01-01T10:06:00|2024-01-01T10:06:00|2024-01-01T11:04:00|||COMPLETED
101_3|bob|gpu|2024-01-01T10:01:00|2024-01-01T10:02:00|2024-01-01T12:00:00|2-00:00:00|billing=4,cpu=4,gres/gpu:v100=1,mem=16G,node=1|TIMEOUT
101_3.batch|||2024-01-01T10:02:00|2024-01-01T10:02:00|2024-01-01T12:00:00|||CANCELLED
102|carol|gpu|2024-01-01T10:02:00|Unknown|Unknown|UNLIMITED|billing=16,cpu=16,gres/gpu=4,mem=128G,node=1|PENDING
103|alice|gpu|2024-01-01T10:03:00|None|2024-01-01T10:20:00|30|billing=2,cpu=2,gres/gpu=1,mem=8G,node=1|CANCELLED by 1001
104+0|dave|gpu|2024-01-01T10:04:00|2024-01-01T10:04:30|Unknown|1-12:00:00|billing=64,cpu=64,gres/gpu=8,mem=512G,node=1|RUNNING
104+0.batch|||2024-01-01T10:04:30|2024-01-01T10:04:30|Unknown|||RUNNING
105|erin|debug|2024-01-01T10:05:00|2024-01-01T10:05:00|2024-01-01T10:06:00|Partition_Limit|billing=2,cpu=2,gres/gpu:a100=1,gres/gpu:h100=1,mem=8G,node=1|FAILED
`

// sacctWant are sacctSample's jobs, in seconds since 1970.
func sacctWant() []Job {
	at := func(hms string) int64 {
		t, err := time.Parse(time.DateTime, "2024-01-01 "+hms)
		if err != nil {
			panic(err)
		}
		return t.Unix()
	}
	return []Job{
		{Submit: at("10:00:00"), Start: at("10:05:00"), End: at("11:05:00"), GPUs: 2, User: "alice", Queue: "gpu", Requested: 5400},
		{Submit: at("10:01:00"), Start: at("10:02:00"), End: at("12:00:00"), GPUs: 1, User: "bob", Queue: "gpu", Requested: 2 * 86400},
		{Submit: at("10:02:00"), Start: -1, End: -1, GPUs: 4, User: "carol", Queue: "gpu"},                              // pending
		{Submit: at("10:03:00"), Start: -1, End: at("10:20:00"), GPUs: 1, User: "alice", Queue: "gpu", Requested: 1800}, // cancelled while pending; 30 is minutes
		{Submit: at("10:04:00"), Start: at("10:04:30"), End: -1, GPUs: 8, User: "dave", Queue: "gpu", Requested: 36 * 3600},
		{Submit: at("10:05:00"), Start: at("10:05:00"), End: at("10:06:00"), GPUs: 2, User: "erin", Queue: "debug"},
	}
}

// TestReadSacct: sacct --parsable2 output reads as its jobs, steps passed over and not counted
// as left out; --parsable's trailing '|' and a file found to be sacct's by its header (read as
// CSV, or with no format, gzip-compressed or not) read the same.
func TestReadSacct(t *testing.T) {
	want := Trace{Jobs: sacctWant()}
	parsable := strings.ReplaceAll(sacctSample, "\n", "|\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(sacctSample))
	zw.Close()
	for _, tc := range []struct {
		name, format, in string
	}{
		{"parsable2", FormatSacct, sacctSample},
		{"parsable", FormatSacct, parsable},
		{"CRLF", FormatSacct, strings.ReplaceAll(sacctSample, "\n", "\r\n")},
		{"told by its header as csv", FormatCSV, sacctSample},
		{"told by its header", "", parsable},
		{"gzip told by its header", "", gz.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTrace(strings.NewReader(tc.in), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestReadSacctFile: `predict eval --trace jobs.txt` needs no --format for sacct's output.
func TestReadSacctFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.txt")
	if err := os.WriteFile(path, []byte(sacctSample), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTraceFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Jobs, sacctWant()) {
		t.Errorf("got %+v", got.Jobs)
	}
	if err := os.WriteFile(path, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTraceFile(path, ""); !errors.Is(err, ErrFormatUnknown) || !strings.Contains(err.Error(), path) {
		t.Errorf("a file that is no trace: err = %v", err)
	}
}

// TestReadSacctCommas: with --delimiter=, a TRES list's commas split its record unless it is
// quoted; unquoted, the records are counted as such and the file refused, with the way out.
func TestReadSacctCommas(t *testing.T) {
	quote := func(line string) string {
		f := strings.Split(line, "|")
		f[7] = `"` + f[7] + `"`
		return strings.Join(f, ",")
	}
	var quoted, plain strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(sacctSample, "\n"), "\n") {
		if i == 0 {
			quoted.WriteString(strings.ReplaceAll(line, "|", ",") + "\n")
		} else {
			quoted.WriteString(quote(line) + "\n")
		}
		plain.WriteString(strings.ReplaceAll(line, "|", ",") + "\n")
	}
	got, err := ReadTrace(strings.NewReader(quoted.String()), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Jobs, sacctWant()) {
		t.Errorf("quoted: got %+v", got.Jobs)
	}
	_, err = ReadTrace(strings.NewReader(plain.String()), FormatSacct)
	if err == nil || !strings.Contains(err.Error(), "6 of 6 records cannot be replayed") || !strings.Contains(err.Error(), "--parsable2") {
		t.Errorf("unquoted: err = %v", err)
	}
}

// TestReadSacctCPUCluster: in the records of a cluster without GPUs a job's size is its CPUs,
// as SWF's processors are.
func TestReadSacctCPUCluster(t *testing.T) {
	in := "JobIDRaw|User|Partition|Submit|Start|End|Timelimit|ReqTRES|NCPUS\n" +
		"7|u|compute|2024-03-01T00:00:00|2024-03-01T00:00:10|2024-03-01T01:00:00|02:00:00|billing=32,cpu=32,mem=100G,node=1|32\n" +
		"7.batch|||2024-03-01T00:00:10|2024-03-01T00:00:10|2024-03-01T01:00:00|||32\n" +
		"8|v|compute|2024-03-01T00:01:00|Unknown|Unknown|00:30|billing=4,cpu=4,node=1|4\n" +
		"9|v|compute|2024-03-01T00:02:00|2024-03-01T00:03:00|2024-03-01T00:04:00|10:00||6\n"
	tr, err := ReadTrace(strings.NewReader(in), FormatSacct)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []float64
	for _, j := range tr.Jobs {
		sizes = append(sizes, j.GPUs)
	}
	if want := []float64{32, 4, 6}; !reflect.DeepEqual(sizes, want) || tr.Skipped != 0 {
		t.Errorf("sizes %v, %d skipped; want %v, none", sizes, tr.Skipped, want)
	}
	if tr.Jobs[1].Requested != 30 || tr.Jobs[2].Requested != 600 {
		t.Errorf("requested %d and %d s; want 30 (00:30 is MM:SS) and 600", tr.Jobs[1].Requested, tr.Jobs[2].Requested)
	}
}

// TestReadSacctLeavesOutCPUJobs: in the records of a cluster with GPUs the jobs that ask for
// none are left out and counted, and do not make the file unreadable even when they are most
// of it; older Slurm's GRES fields give the GPUs.
func TestReadSacctLeavesOutCPUJobs(t *testing.T) {
	in := "JobID|User|Partition|Submit|Start|End|Timelimit|ReqGRES|AllocGRES|ReqCPUS\n" +
		"1|u|cpu|2024-03-01T00:00:00|2024-03-01T00:00:00|2024-03-01T01:00:00|01:00:00|||8\n" +
		"2|u|gpu|2024-03-01T00:00:01|2024-03-01T00:00:05|2024-03-01T01:00:00|01:00:00|gpu:a100:2|gpu:a100:2(IDX:0,1)|8\n" +
		"2.batch|||2024-03-01T00:00:05|2024-03-01T00:00:05|2024-03-01T01:00:00||||8\n" +
		"3|u|cpu|2024-03-01T00:00:02|2024-03-01T00:00:02|2024-03-01T01:00:00|01:00:00|||8\n" +
		"4|v|gpu|2024-03-01T00:00:03|Unknown|Unknown|01:00:00|gpu:1||8\n" +
		"5|v|cpu|2024-03-01T00:00:04|2024-03-01T00:00:04|2024-03-01T01:00:00|01:00:00|||8\n" +
		"6|v|cpu|2024-03-01T00:00:05|2024-03-01T00:00:05|2024-03-01T01:00:00|01:00:00|mps:100||8\n"
	tr, err := ReadTrace(strings.NewReader(in), FormatSacct)
	if err != nil {
		t.Fatal(err)
	}
	var gpus []float64
	for _, j := range tr.Jobs {
		gpus = append(gpus, j.GPUs)
	}
	if want := []float64{2, 1}; !reflect.DeepEqual(gpus, want) {
		t.Errorf("GPUs %v, want %v", gpus, want)
	}
	if want := "4 ask for no GPU, the first on line 2"; tr.Skipped != 4 || tr.Why != want {
		t.Errorf("%d skipped (%s); want 4 (%s)", tr.Skipped, tr.Why, want)
	}
}

// TestReadSacctSkips: a record that cannot place its job is left out and counted, with the line.
func TestReadSacctSkips(t *testing.T) {
	for _, tc := range []struct{ name, line, why string }{
		{"no submit", "9|u|gpu|Unknown|Unknown|Unknown|01:00:00|gres/gpu=1|PENDING", "1 have no submit time, the first on line 13"},
		{"bad time", "9|u|gpu|yesterday|Unknown|Unknown|01:00:00|gres/gpu=1|PENDING", "1 hold a time that is neither a date and time nor Unknown, the first on line 13"},
		{"start before submit", "9|u|gpu|2024-01-01T10:00:00|2024-01-01T09:00:00|Unknown|01:00:00|gres/gpu=1|RUNNING", "1 start before they were submitted, the first on line 13"},
		{"fields", "9|u|gpu|2024-01-01T10:00:00", "1 do not have the header's 9 fields, the first on line 13"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadTrace(strings.NewReader(sacctSample+tc.line+"\n"), FormatSacct)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Jobs) != 6 || tr.Skipped != 1 || tr.Why != tc.why {
				t.Errorf("%d jobs, %d skipped (%s); want 6, 1 (%s)", len(tr.Jobs), tr.Skipped, tr.Why, tc.why)
			}
		})
	}
	for _, tc := range []struct{ name, in, want string }{
		{"no size", "JobID|Submit|Start|End\n1|2024-01-01T10:00:00|Unknown|Unknown\n", "sacct header lacks reqtres"},
		{"not sacct", "JobID Submit Start End\n", "not sacct's header"},
		{"job table without a size", "id_job,time_submit,time_start,time_end,state\n1,1600000000,0,0,0\n", "Slurm job table header lacks tres_req; want at least id_job,time_submit,time_start,time_end and one of tres_req"},
	} {
		if _, err := ReadTrace(strings.NewReader(tc.in), FormatSacct); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestReadTraceNotSacct: a generic CSV, even one whose header has sacct's names and a gpus
// column, is read as before; a CSV time may be Unknown, as sacct writes it; a file of neither
// kind with no format is not guessed at.
func TestReadTraceNotSacct(t *testing.T) {
	in := "jobid,submit,start,end,gpus,user\n1,0,10,100,1,u\n2,5,Unknown,50,2,v\n"
	got, err := ReadTrace(strings.NewReader(in), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	want := Trace{Jobs: []Job{{Submit: 0, Start: 10, End: 100, GPUs: 1, User: "u"}, {Submit: 5, Start: -1, End: 50, GPUs: 2, User: "v"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for _, in := range []string{in, swfSample} {
		if _, err := ReadTrace(strings.NewReader(in), ""); !errors.Is(err, ErrFormatUnknown) {
			t.Errorf("no format: err = %v", err)
		}
	}
}

func TestSacctFields(t *testing.T) {
	for s, want := range map[string]int64{
		"1-00:00:00": 86400, "2-12": 216000, "1-02:30": 95400, "12:00:00": 43200, "45:30": 2730, "90": 5400,
		"UNLIMITED": 0, "Partition_Limit": 0, "": 0, "soon": 0, "1:2:3:4": 0, "-5": 0,
	} {
		if got := sacctLimit(s); got != want {
			t.Errorf("sacctLimit(%q) = %d, want %d", s, got, want)
		}
	}
	for s, want := range map[string]float64{
		"billing=4,cpu=4,gres/gpu=2,gres/gpu:a100=2,mem=16G,node=1": 2,
		"gres/gpu:a100=1,gres/gpu:v100=2":                           3,
		"cpu=1,gres/gpumem=40G,gres/gpuutil=90,gres/gpu=1":          1,
		"cpu=8,mem=4G": 0, "gres/gpu=x": 0, "": 0,
	} {
		if got := tresCount(s, "gpu"); got != want {
			t.Errorf("tresCount(%q, gpu) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]float64{
		"gpu:2": 2, "gpu:a100:2": 2, "gpu:a100:2(IDX:0,2)": 2, "gpu:2,mps:100": 2, "gpu": 1, "gpu:a100": 1,
		"gpu:a100:1,gpu:v100:2": 3, "gres/gpu=4": 4, "mps:100": 0, "": 0,
	} {
		if got := gresGPUs(s); got != want {
			t.Errorf("gresGPUs(%q) = %v, want %v", s, got, want)
		}
	}
}

// sacctOf writes tr's jobs as sacct --parsable2 output from 2024-01-01 on, each job with its
// batch and extern steps.
func sacctOf(tr Trace) string {
	origin := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int64) string {
		if s < 0 {
			return "Unknown"
		}
		return origin.Add(time.Duration(s) * time.Second).Format("2006-01-02T15:04:05")
	}
	limit := func(s int64) string {
		if d := s / 86400; d > 0 {
			return fmt.Sprintf("%d-%02d:%02d:%02d", d, s%86400/3600, s%3600/60, s%60)
		}
		return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	var b strings.Builder
	b.WriteString("JobID|User|Partition|Submit|Start|End|Timelimit|ReqTRES|State\n")
	for i, j := range tr.Jobs {
		fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|%s|billing=%d,cpu=%d,gres/gpu=%d,gres/gpu:a100=%d,mem=64G,node=1|COMPLETED\n",
			1000+i, j.User, j.Queue, at(j.Submit), at(j.Start), at(j.End), limit(j.Requested), int(j.GPUs)*8, int(j.GPUs)*8, int(j.GPUs), int(j.GPUs))
		for _, step := range []string{"batch", "extern"} {
			fmt.Fprintf(&b, "%d.%s|||%s|%s|%s||cpu=8,gres/gpu=%d,mem=64G,node=1|COMPLETED\n", 1000+i, step, at(j.Start), at(j.Start), at(j.End), int(j.GPUs))
		}
	}
	return b.String()
}

// TestReplaySacct: a few thousand jobs of sacct's output are read as the jobs they were written
// from and scored end to end.
func TestReplaySacct(t *testing.T) {
	orig, _ := deepQueueTrace(3000, 64)
	origin := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	tr, err := ReadTrace(strings.NewReader(sacctOf(orig)), FormatSacct)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != len(orig.Jobs) || tr.Skipped != 0 {
		t.Fatalf("%d jobs, %d skipped (%s); want %d, none", len(tr.Jobs), tr.Skipped, tr.Why, len(orig.Jobs))
	}
	for i, j := range tr.Jobs {
		w := orig.Jobs[i]
		w.Submit, w.Start, w.End = w.Submit+origin, w.Start+origin, w.End+origin
		if j != w {
			t.Fatalf("job %d: got %+v, want %+v", i, j, w)
		}
	}
	rep := Evaluate(tr, "sacct", DefaultTrainFraction)
	if rep.Jobs != len(orig.Jobs) || rep.Scored == 0 || rep.Started == 0 {
		t.Fatalf("report: %d jobs, %d scored, %d started", rep.Jobs, rep.Scored, rep.Started)
	}
}

// TestReadSacctCancelledPendingWithAStart: where Slurm gives a job cancelled while pending its
// cancel time as its start too, the job had no nodes, and it never started.
func TestReadSacctCancelledPendingWithAStart(t *testing.T) {
	in := "JobID|Submit|Start|End|ReqTRES|State|NodeList\n" +
		"1|2024-01-01T10:00:00|2024-01-01T10:00:00|2024-01-01T11:00:00|gres/gpu=1|COMPLETED|node1\n" +
		"2|2024-01-01T10:00:00|2024-01-01T10:30:00|2024-01-01T10:30:00|gres/gpu=1|CANCELLED by 1001|None assigned\n" +
		"3|2024-01-01T10:00:00|2024-01-01T10:40:00|2024-01-01T10:40:00|gres/gpu=1|CANCELLED by 1001|node1\n"
	tr, err := ReadTrace(strings.NewReader(in), FormatSacct)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 3 || tr.Jobs[1].Started() || tr.Jobs[1].End != tr.Jobs[1].Submit+1800 || !tr.Jobs[2].Started() {
		t.Errorf("got %+v; want job 2 never started, leaving the queue at 10:30, and job 3 started", tr.Jobs)
	}
}

// jobTableSample is Slurm's job table as slurmdbd keeps it (its own column names, times in
// seconds since 1970 with 0 for none, TRES by number, the state by number), exported to CSV as
// published job logs of Slurm GPU clusters are (MIT SuperCloud's scheduler log, for one): a GPU
// job, a CPU job, one cancelled while pending, one still pending, a GPU of another kind with no
// time limit, and a job whose GPUs are counted under two numbers, in all and by kind.
const jobTableSample = `id_job,id_user,partition,state,timelimit,time_submit,time_eligible,time_start,time_end,nodes_alloc,nodelist,cpus_req,tres_req,tres_alloc
7001,4012,gpu-volta,3,720,1600000000,1600000000,1600000060,1600003600,1,g-1-1,20,"1=20,2=192000,4=1,1002=2","1=20,2=192000,4=1,5=20,1002=2"
7002,4012,cpu-xeon,3,60,1600000010,1600000010,1600000010,1600000900,1,c-2-4,40,"1=40,2=384000,4=1","1=40,2=384000,4=1,5=40"
7003,4020,gpu-volta,4,120,1600000100,1600000100,1600000500,1600000500,0,None assigned,10,"1=10,2=96000,4=1,1002=1",
7004,4020,gpu-volta,0,120,1600000200,1600000200,0,0,0,None assigned,10,"1=10,2=96000,4=1,1002=4",
7005,4031,gpu-tesla,6,4294967295,1600000300,1600000300,1600000301,1600090000,1,t-1,8,"1=8,2=64000,4=1,1001=1","1=8,2=64000,4=1,1001=1"
7006,4031,gpu-volta,3,30,1600000400,1600000400,1600001000,1600002000,2,"g-1-[2-3]",40,"1=40,4=2,1001=4,1002=4","1=40,4=2,1001=4,1002=4"
`

// TestReadSlurmJobTable: Slurm's job table, exported from slurmdbd's database as CSV, reads as
// sacct's records do, under its own names: no --format needed, 0 is no time, a TRES numbered
// from 1001 on counts GPUs, a job cancelled while pending never started, and the jobs that ask
// for no GPU are left out.
func TestReadSlurmJobTable(t *testing.T) {
	want := []Job{
		{Submit: 1600000000, Start: 1600000060, End: 1600003600, GPUs: 2, User: "4012", Queue: "gpu-volta", Requested: 720 * 60},
		{Submit: 1600000100, Start: -1, End: 1600000500, GPUs: 1, User: "4020", Queue: "gpu-volta", Requested: 120 * 60},
		{Submit: 1600000200, Start: -1, End: -1, GPUs: 4, User: "4020", Queue: "gpu-volta", Requested: 120 * 60},
		{Submit: 1600000300, Start: 1600000301, End: 1600090000, GPUs: 1, User: "4031", Queue: "gpu-tesla"},
		{Submit: 1600000400, Start: 1600001000, End: 1600002000, GPUs: 4, User: "4031", Queue: "gpu-volta", Requested: 30 * 60},
	}
	for _, format := range []string{"", FormatCSV, FormatSacct} {
		tr, err := ReadTrace(strings.NewReader(jobTableSample), format)
		if err != nil {
			t.Fatalf("format %q: %v", format, err)
		}
		if !reflect.DeepEqual(tr.Jobs, want) {
			t.Errorf("format %q: jobs\n%+v\nwant\n%+v", format, tr.Jobs, want)
		}
		if w := "1 ask for no GPU, the first on line 3"; tr.Skipped != 1 || tr.Why != w {
			t.Errorf("format %q: %d skipped (%s); want 1 (%s)", format, tr.Skipped, tr.Why, w)
		}
	}
}
