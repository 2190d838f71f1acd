package predict

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const swfSample = `; Version: 2.2
; MaxNodes: 64
; MaxProcs: 128
;
    1      0     10    100    4     -1    -1    4    600    -1  1   7   7  -1  1 -1 -1 -1
    2      5     -1     -1   -1     -1    -1    8   3600    -1  5   8   8  -1 -1 -1 -1 -1
    3      3      0     -1    2     -1    -1    2    120    -1  0  -1  -1  -1  2  3 -1 -1
    4      6     -1    300    2     -1    -1    2    600    -1  1   9   9  -1  1 -1 -1 -1
    5      7      0     10   -1     -1    -1   -1     60    -1  1   9   9  -1  1 -1 -1 -1
`

func TestReadSWF(t *testing.T) {
	// Job 2 was cancelled in the queue: it never started and leaves the replay's queue at once.
	// Job 4 ran but its wait is unknown, job 5's size is unknown: both are left out.
	want := Trace{Capacity: 128, Skipped: 2, Why: "1 ran but have no recorded wait (field 3 is -1), the first on line 8", Jobs: []Job{
		{Submit: 0, Start: 10, End: 110, GPUs: 4, User: "7", Queue: "1", Requested: 600},
		{Submit: 3, Start: 3, End: 123, GPUs: 2, Queue: "2@3", Requested: 120}, // queue 2 of partition 3
		{Submit: 5, Start: -1, End: 5, GPUs: 8, User: "8", Requested: 3600},
	}}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(swfSample))
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain", []byte(swfSample)},
		{"gzip", gz.Bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTrace(bytes.NewReader(tc.data), FormatSWF)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestReadCSV(t *testing.T) {
	in := "queue,job_id,submit_time,start_time,end_time,gpus,user,requested_seconds\n" +
		"LS,a,100,160.7,400.2,0.5,,\n" +
		"BE,b,50,,90,1,u1,3600\n" +
		"-1,c,70,70,80,-1,-1,-1\n"
	want := Trace{Jobs: []Job{
		{Submit: 50, Start: -1, End: 90, GPUs: 1, User: "u1", Queue: "BE", Requested: 3600},
		{Submit: 70, Start: 70, End: 80, GPUs: 0},
		{Submit: 100, Start: 160, End: 400, GPUs: 0.5, Queue: "LS"},
	}}
	got, err := ReadTrace(strings.NewReader(in), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestReadCSVDates: a trace that gives dates and times, as GPU cluster traces often do, reads as
// the same jobs as one in seconds, shifted to 1970; None, null and NaN are unknown, as -1 is.
func TestReadCSVDates(t *testing.T) {
	const head = "job_id,submit_time,start_time,end_time,gpus,user,queue,requested_seconds\n"
	secs := head + "a,0,60,3600,1,u,q,\nb,30,,90,2,u,q,-1\nc,40,100,7200,1,v,q,\n"
	dates := head + "a,2020-04-01 00:00:00,2020-04-01 00:01:00,2020-04-01T01:00:00Z,1,u,q,\n" +
		"b,2020-04-01 00:00:30,None,2020-04-01T02:01:30+02:00,2,u,q,null\n" +
		"c,2020-04-01 00:00:40.75,2020-04-01 00:01:40,2020-04-01 02:00:00,1,v,q,NaN\n"
	a, err := ReadTrace(strings.NewReader(secs), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadTrace(strings.NewReader(dates), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	origin := time.Date(2020, 4, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := range b.Jobs {
		for _, t := range []*int64{&b.Jobs[i].Submit, &b.Jobs[i].Start, &b.Jobs[i].End} {
			if *t >= 0 {
				*t -= origin
			}
		}
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("in dates:   %+v\nin seconds: %+v", b, a)
	}
}

// TestReadCSVOtherColumnNames: a GPU cluster trace with its own column names (here as Helios
// and Acme write them: gpu_num, vc, a run time in place of the end) reads as the same jobs as
// the generic CSV, and one that lacks a time names the column and the names taken for it.
func TestReadCSVOtherColumnNames(t *testing.T) {
	generic := "job_id,submit_time,start_time,end_time,gpus,user,queue,requested_seconds\n" +
		"a,0,60,3660,8,u1,vc1,\nb,30,,,2,u2,vc2,\nc,40,100,160,1,u1,vc1,\n"
	helios := "job_id,user,gpu_num,cpu_num,node_num,state,submit_time,start_time,duration,vc\n" +
		"a,u1,8,64,1,COMPLETED,0,60,3600,vc1\nb,u2,2,16,1,CANCELLED,30,,0,vc2\nc,u1,1,8,1,FAILED,40,100,60,vc1\n"
	a, err := ReadTrace(strings.NewReader(generic), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadTrace(strings.NewReader(helios), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("with other names: %+v\ngeneric:          %+v", b, a)
	}
	// Helios's own logs also carry "queue", the seconds each job waited: that is not a queue
	// name (one queue per wait would hand every model the answer), and vc stays the queue.
	helios = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n" +
		"a,u1,vc1,8,64,1,COMPLETED,1970-01-01 00:00:00,1970-01-01 00:01:00,1970-01-01 01:01:00,3600,60\n" +
		"b,u2,vc2,2,16,1,CANCELLED,1970-01-01 00:00:30,,,0,\n" +
		"c,u1,vc1,1,8,1,FAILED,1970-01-01 00:00:40,1970-01-01 00:01:40,1970-01-01 00:02:40,60,60\n"
	if b, err = ReadTrace(strings.NewReader(helios), FormatCSV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("Helios with its queue delays: %+v\ngeneric:                      %+v", b, a)
	}
	// Acme's logs have the delay and no other queue: every job is in the one queue.
	acme := "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time\n" +
		"a,u1,1,8,64,SFT,COMPLETED,2023-05-17 11:00:58+00:00,2023-05-17 11:01:08+00:00,2023-05-17 12:01:08+00:00,3600,10.0,8\n" +
		"b,u2,1,1,8,Debug,COMPLETED,2023-05-17 11:02:00+00:00,2023-05-17 11:02:00+00:00,2023-05-17 11:03:00+00:00,60,0.0,1\n"
	if b, err = ReadTrace(strings.NewReader(acme), FormatCSV); err != nil {
		t.Fatal(err)
	}
	for _, j := range b.Jobs {
		if j.Queue != "" {
			t.Errorf("Acme job read into queue %q from its queue delay", j.Queue)
		}
	}
	// Queues named by numbers stay queues, even where most jobs start at once.
	numbered := "job_id,submit_time,start_time,end_time,gpus,queue\n1,0,60,100,1,2\n" + strings.Repeat("2,10,10,100,1,0\n3,30,31,400,1,1\n4,40,41,50,1,1\n", 3)
	if b, err = ReadTrace(strings.NewReader(numbered), FormatCSV); err != nil {
		t.Fatal(err)
	}
	queues := map[string]int{}
	for _, j := range b.Jobs {
		queues[j.Queue]++
	}
	if want := map[string]int{"0": 3, "1": 6, "2": 1}; !reflect.DeepEqual(queues, want) {
		t.Errorf("numbered queues read as %v, want %v", queues, want)
	}
	// A trace that records each job's wait and run time, as SWF's fields are, in place of its
	// start and end: the same jobs. An unknown wait is a job that never started, unless it ran.
	waits := "job_id,submit_time,wait_time,run_time,gpus,user,queue\n" +
		"a,0,60,3600,8,u1,vc1\nb,30,-1,0,2,u2,vc2\nc,40,60.4,60,1,u1,vc1\nd,50,,3600,1,u2,vc2\n"
	if b, err = ReadTrace(strings.NewReader(waits), FormatCSV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Jobs, b.Jobs) || b.Skipped != 1 || b.Why != "1 ran but have no recorded wait, the first on line 5" {
		t.Errorf("with waits and run times: %+v, left out %d (%s)\ngeneric:                  %+v", b.Jobs, b.Skipped, b.Why, a.Jobs)
	}
	// A wait with no submit time started at no known moment: it cannot be placed, and is not
	// taken for one that was there before the trace began.
	if _, err = ReadTrace(strings.NewReader("job_id,submit_time,wait_time,run_time,gpus\na,0,5,5,1\nb,,30,60,1\nc,,30,60,1\n"), FormatCSV); err == nil || !strings.Contains(err.Error(), "2 of 3 records cannot be replayed (2 have no submit_time") {
		t.Errorf("mostly waits with no submit time: %v", err)
	}
	_, err = ReadTrace(strings.NewReader("job,user,gpu_num,submit_time,run_time\n1,u,1,0,5\n"), FormatCSV)
	if err == nil || !strings.Contains(err.Error(), `header lacks column "start_time" (or start, scheduled_time, begin_time, or a wait: wait_time,`) {
		t.Errorf("a trace without starts: %v", err)
	}
	_, err = ReadTrace(strings.NewReader("job,user,gpu_num,submit_time,start_time\n1,u,1,0,5\n"), FormatCSV)
	if err == nil || !strings.Contains(err.Error(), `header lacks column "end_time" (or end, finish_time,`) || !strings.Contains(err.Error(), "duration") {
		t.Errorf("a trace without ends: %v", err)
	}
}

// Alibaba's GPU pod lists as published: a pod's GPUs are num_gpu shares of gpu_milli
// thousandths each, and the CPU pods among them ask for no GPU. Those are not requests for the
// GPU pool: they are left out and counted, and a list of mostly CPU pods is still replayed.
func TestReadAlibabaPodList(t *testing.T) {
	list := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p0,8000,16000,1,500,,LS,Succeeded,0,600,60\n" + // half a GPU
		"p1,4000,8000,0,0,,LS,Running,10,,10\n" + // a CPU pod
		"p2,32000,64000,2,1000,V100M32,BE,Succeeded,20,900,300\n" + // two whole GPUs
		"p3,4000,8000,0,0,,BE,Succeeded,30,90,30\n" + // a CPU pod
		"p4,4000,8000,1,230,,BE,Pending,40,,\n" + // still pending at the end
		"p5,4000,8000,0,0,,LS,Succeeded,50,99,50\n" + // a CPU pod
		"p6,4000,8000,0,0,,LS,Succeeded,60,99,60\n" // a CPU pod
	tr, err := ReadTrace(strings.NewReader(list), FormatCSV)
	if err != nil {
		t.Fatalf("a pod list of more CPU pods than GPU pods: %v", err)
	}
	want := []Job{
		{Submit: 0, Start: 60, End: 600, GPUs: 0.5, Queue: "LS"},
		{Submit: 20, Start: 300, End: 900, GPUs: 2, Queue: "BE"},
		{Submit: 40, Start: -1, End: -1, GPUs: 0.23, Queue: "BE"},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs %+v\nwant %+v", tr.Jobs, want)
	}
	if tr.Skipped != 4 || tr.Why != "4 ask for no GPU, the first on line 3" {
		t.Errorf("left out %d: %q, want the 4 CPU pods", tr.Skipped, tr.Why)
	}
	// A trace whose sizes are all 0 or unknown keeps its jobs: the size is not known.
	tr, err = ReadTrace(strings.NewReader("job_id,submit_time,start_time,end_time,gpus\n1,0,5,9,0\n2,1,5,9,\n"), FormatCSV)
	if err != nil || len(tr.Jobs) != 2 || tr.Skipped != 0 {
		t.Errorf("sizes all 0 or unknown: %d jobs, %d left out, %v", len(tr.Jobs), tr.Skipped, err)
	}
}

// TestReadInstanceList: a Kubernetes cluster's instance list as Alibaba publishes its
// GPU-disaggregated serving trace (instance_sn, role, app_name, gpu_request, creation_time,
// scheduled_time, deletion_time, times in seconds with a fraction) reads as its GPU instances:
// an instance's application stands for its user, since an application's instances are created
// and wait together as a user's jobs do; the CPU instances are left out, and so is an instance
// that existed before the trace began (no creation time, and no scheduled time or one before the
// first creation): by choice, so that a list of a cluster that ran long before its trace began
// is not refused for them. An instance with no creation time scheduled during the trace cannot
// be placed.
func TestReadInstanceList(t *testing.T) {
	list := "instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,creation_time,scheduled_time,deletion_time\n" +
		"instance_0,HN,app_7,12,12,1,1,,,5400.0\n" + // there before the trace began
		"instance_1,CN,app_7,48,48,0,0,100.0,100.0,900.0\n" + // a CPU instance
		"instance_2,HN,app_7,8,8,1,1,120.0,180.0,1800.0000000002\n" +
		"instance_3,HN,app_9,8,8,1,1,130.5,130.5,\n" // still running at the end
	tr, err := ReadTrace(strings.NewReader(list), FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{Submit: 120, Start: 180, End: 1800, GPUs: 1, User: "app_7"},
		{Submit: 130, Start: 130, End: -1, GPUs: 1, User: "app_9"},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs %+v\nwant %+v", tr.Jobs, want)
	}
	if tr.Skipped != 2 || tr.Why != "1 were there before the trace began (no submit_time), the first on line 2" {
		t.Errorf("left out %d: %q", tr.Skipped, tr.Why)
	}
	// CPU instances that were there before the trace began are left out as CPU instances, by
	// choice: however many there are, they do not make the file unreadable.
	list += strings.Repeat("instance_9,CN,app_7,48,48,0,0,,,600.0\n", 5)
	if tr, err = ReadTrace(strings.NewReader(list), FormatCSV); err != nil {
		t.Fatalf("with CPU instances from before the trace: %v", err)
	}
	if !reflect.DeepEqual(tr.Jobs, want) || tr.Skipped != 7 || tr.Why != "6 ask for no GPU, the first on line 3" {
		t.Errorf("with CPU instances from before the trace: jobs %+v, left out %d: %q", tr.Jobs, tr.Skipped, tr.Why)
	}
	// So are GPU instances from before the trace, however many: running throughout, or
	// scheduled before the first creation.
	list += strings.Repeat("instance_10,HN,app_9,8,8,1,1,,,\n", 4) + strings.Repeat("instance_11,HN,app_9,8,8,1,1,,60.0,3000.0\n", 4)
	if tr, err = ReadTrace(strings.NewReader(list), FormatCSV); err != nil {
		t.Fatalf("with GPU instances from before the trace: %v", err)
	}
	if !reflect.DeepEqual(tr.Jobs, want) || tr.Skipped != 15 || tr.Why != "9 were there before the trace began (no submit_time), the first on line 2" {
		t.Errorf("with GPU instances from before the trace: jobs %+v, left out %d: %q", tr.Jobs, tr.Skipped, tr.Why)
	}
	// One with no creation time, scheduled after the trace began, cannot be placed: more of
	// those than of instances placed, and the file is refused.
	list += strings.Repeat("instance_12,HN,app_9,8,8,1,1,,150.0,3000.0\n", 3)
	want3 := "3 of 5 records cannot be replayed (3 have no submit_time, the first on line 19)"
	if _, err = ReadTrace(strings.NewReader(list), FormatCSV); err == nil || !strings.Contains(err.Error(), want3) {
		t.Errorf("with instances scheduled during the trace but never created: err = %v, want %q", err, want3)
	}
}

func TestReadTraceErrors(t *testing.T) {
	const head = "job_id,submit_time,start_time,end_time,gpus,user,queue,requested_seconds\n"
	const good = "1,0,0,10,1,u,q,60\n"
	for _, tc := range []struct {
		name, format, in, want string
	}{
		{"csv empty", FormatCSV, "", "line 1: empty file"},
		{"csv missing column", FormatCSV, "job_id,submit_time,start_time,gpus\n", `line 1: header lacks column "end_time"`},
		{"unknown format", "json", good, `unknown trace format "json"`},
		// A file whose records mostly cannot be placed says so, with the commonest reason.
		{"swf mostly short lines", FormatSWF, "; MaxProcs: 4\n1 0 0 10 1\n2 0 0 10 1\n" + strings.Repeat("3 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n", 1),
			"2 of 3 records cannot be replayed (2 are not 18 fields, the first on line 2): a job needs its submit time, its size and its wait or start time"},
		{"swf no waits", FormatSWF, "1 0 -1 100 4 -1 -1 4 600 -1 1 7 7 -1 1 -1 -1 -1\n2 5 -1 100 4 -1 -1 4 600 -1 1 7 7 -1 1 -1 -1 -1\n",
			"2 of 2 records cannot be replayed (2 ran but have no recorded wait (field 3 is -1), the first on line 1)"},
		{"csv no submit times", FormatCSV, head + "1,,40,60,1,u,q,60\n2,-1,40,60,1,u,q,60\n" + good,
			"2 of 3 records cannot be replayed (2 have no submit_time, the first on line 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.in), tc.format)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.Count(err.Error(), ". ") > 0 || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %q, want one sentence", err)
			}
		})
	}
}

// A record a job cannot be placed from is left out and counted, never a failure of the file.
func TestReadTraceSkips(t *testing.T) {
	const head = "job_id,submit_time,start_time,end_time,gpus,user,queue,requested_seconds\n"
	var good strings.Builder
	for i := range 6 {
		fmt.Fprintf(&good, "%d,%d,%d,%d,1,u,q,60\n", i, 10*i, 10*i+5, 10*i+50)
	}
	for _, tc := range []struct {
		name, format, in, why string
		jobs                  int
	}{
		{"swf unknown submit", FormatSWF, swfSample + "    6     -1     0    10    1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n", "", 3},
		{"swf bad number", FormatSWF, swfSample + "    6  x     0    10    1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n", "", 3},
		{"csv bad start", FormatCSV, head + good.String() + "9,5,soon,10,1,u,q,60\n",
			"1 hold a time that is neither seconds from the trace's start nor a date and time, the first on line 8", 6},
		{"csv negative time", FormatCSV, head + good.String() + "9,-5,0,10,1,u,q,60\n",
			"1 hold a time that is neither seconds from the trace's start nor a date and time, the first on line 8", 6},
		{"csv bad gpus", FormatCSV, head + good.String() + "9,5,6,10,many,u,q,60\n", "1 hold gpus that are not a non-negative number, the first on line 8", 6},
		{"csv field count", FormatCSV, head + good.String() + "9,0,0,10\n", "1 do not have the header's 8 fields, the first on line 8", 6},
		{"csv start before submit", FormatCSV, head + good.String() + "9,50,40,60,1,u,q,60\n", "1 start before they were submitted, the first on line 8", 6},
		{"csv empty submit", FormatCSV, head + good.String() + "9,,40,60,1,u,q,60\n", "1 have no submit_time, the first on line 8", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadTrace(strings.NewReader(tc.in), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			skipped := 1
			if tc.format == FormatSWF {
				skipped = 3 // and the two of swfSample
			}
			if len(tr.Jobs) != tc.jobs || tr.Skipped != skipped || (tc.why != "" && tr.Why != tc.why) {
				t.Fatalf("%d jobs, %d skipped (%s); want %d jobs, %d skipped (%s)", len(tr.Jobs), tr.Skipped, tr.Why, tc.jobs, skipped, tc.why)
			}
		})
	}
}

func TestFormatFromPath(t *testing.T) {
	for path, want := range map[string]string{
		"a/KTH.swf.gz": FormatSWF, "x.SWF": FormatSWF, "t.csv": FormatCSV, "t.csv.gz": FormatCSV,
		"trace.txt": "", "trace": "",
	} {
		if got := FormatFromPath(path); got != want {
			t.Errorf("FormatFromPath(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestReadTraceFileNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(path, []byte("job_id,submit_time,start_time,end_time,gpus\n1,0,0,x,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadTraceFile(path, "")
	if err == nil || !strings.Contains(err.Error(), path+": 1 of 1 records cannot be replayed") {
		t.Fatalf("err = %v", err)
	}
	other := filepath.Join(t.TempDir(), "trace.dat")
	if err := os.WriteFile(other, []byte("1 0 0 10 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTraceFile(other, ""); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Fatalf("unknown extension: err = %v", err)
	}
}

// tracesDir is the repository's trace folder, testdata/traces (see its README).
func tracesDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "traces")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("traces missing: %v", err)
	}
	return dir
}

func TestTraceEnd(t *testing.T) {
	tr := Trace{Jobs: []Job{
		{Submit: 0, Start: 5, End: 50},
		{Submit: 10, Start: -1, End: 70}, // left the queue at 70
		{Submit: 90, Start: -1, End: -1}, // still waiting at the end
	}}
	if got := tr.End(); got != 90 {
		t.Fatalf("End() = %d, want 90", got)
	}
}
