package predict

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Job is one job of a recorded trace. Times are seconds from the trace's own origin.
type Job struct {
	Submit    int64
	Start     int64   // -1: the job never started
	End       int64   // -1: unknown; for a job that never started, when it left the queue
	GPUs      float64 // GPUs, or processors for a CPU trace
	User      string  // "" when the trace does not record it
	Queue     string  // "" when the trace does not record it
	Requested int64   // requested run time in seconds; 0 when unknown
}

// Started reports whether the job ever started.
func (j Job) Started() bool { return j.Start >= 0 }

// Wait is the time from submit to start; only meaningful when Started.
func (j Job) Wait() int64 { return j.Start - j.Submit }

// Trace formats understood by ReadTrace.
const (
	FormatSWF    = "swf"
	FormatCSV    = "csv"
	FormatSacct  = "sacct"  // Slurm's accounting records, as sacct --parsable2 writes them
	FormatPhilly = "philly" // Microsoft Philly's job log, cluster_job_log (JSON)
)

// ErrFormatUnknown is the error (wrapped) of a trace whose format is neither given nor told by
// its name or its first line.
var ErrFormatUnknown = errors.New("cannot tell the trace format from the name or the first line; pass --format swf, --format csv, --format sacct or --format philly")

// FormatFromPath guesses a trace's format from its file name: .swf and .swf.gz are SWF,
// .csv and .csv.gz are the generic CSV, cluster_job_log and .json (.gz too) are Philly's job
// log. It returns "" when the name says nothing (ReadTrace then tells sacct's output by its
// header, and Philly's log by its first character).
func FormatFromPath(path string) string {
	name := strings.ToLower(filepath.Base(path))
	name = strings.TrimSuffix(name, ".gz")
	switch filepath.Ext(name) {
	case ".swf":
		return FormatSWF
	case ".csv":
		return FormatCSV
	case ".json":
		return FormatPhilly
	}
	if name == "cluster_job_log" {
		return FormatPhilly
	}
	return ""
}

// Trace is a recorded workload: its jobs in submit order and, when the file says so, the
// cluster's capacity (SWF's MaxProcs or MaxNodes header; 0 when unknown).
type Trace struct {
	Jobs     []Job
	Capacity float64
	// Skipped counts the records left out because a job cannot be placed from them: its submit
	// time is unknown, it ran but its wait is not recorded, its size is unknown, or the record
	// cannot be read; or, in sacct's records of a cluster with GPUs, it asks for no GPU. Why is
	// the commonest reason, with the first line it was met on.
	Skipped int
	Why     string
}

// skips counts the records a reader leaves out, by reason, remembering the first line of each.
type skips struct {
	n     map[string]int
	first map[string]int
	order []string
	aside map[string]bool // reasons of records read but left out by choice (leaveOut)
}

func (s *skips) add(reason string, line int) {
	if s.n == nil {
		s.n, s.first = map[string]int{}, map[string]int{}
	}
	if _, ok := s.n[reason]; !ok {
		s.first[reason] = line
		s.order = append(s.order, reason)
	}
	s.n[reason]++
}

// leaveOut counts a record that was read but is left out by choice, such as a CPU job in the
// records of a cluster with GPUs: it is skipped, but does not count towards refusing the file.
func (s *skips) leaveOut(reason string, line int) {
	s.add(reason, line)
	if s.aside == nil {
		s.aside = map[string]bool{}
	}
	s.aside[reason] = true
}

// total is how many records were left out; unreadable, those of them not left out by choice.
func (s *skips) total() (total, unreadable int) {
	for r, n := range s.n {
		total += n
		if !s.aside[r] {
			unreadable += n
		}
	}
	return total, unreadable
}

// why is the commonest reason, with its count and first line; of the unreadable records only,
// when unreadable is set.
func (s *skips) why(unreadable bool) string {
	best := ""
	for _, r := range s.order {
		if unreadable && s.aside[r] {
			continue
		}
		if best == "" || s.n[r] > s.n[best] {
			best = r
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("%d %s, the first on line %d", s.n[best], best, s.first[best])
}

// check fills in t's skip count and fails when more than half of the records (the jobs kept,
// and those left out but not by choice) were left out: a trace that is mostly unreadable would
// be scored on what little remains.
func (s *skips) check(t *Trace, jobs int) error {
	total, bad := s.total()
	t.Skipped, t.Why = total, s.why(false)
	if records := jobs + bad; bad > 0 && 2*bad > records {
		return fmt.Errorf("%d of %d records cannot be replayed (%s): a job needs its submit time, its size and its wait or start time",
			bad, records, s.why(true))
	}
	return nil
}

// End is the trace's last recorded moment: the latest submit, start or end time of its jobs.
func (t Trace) End() int64 {
	var end int64
	for _, j := range t.Jobs {
		end = max(end, j.Submit, j.Start, j.End)
	}
	return end
}

// ReadTraceFile opens path and reads it in the given format ("" guesses from the name, or else
// from the first line, which tells sacct's output and Philly's job log). A gzip-compressed file is recognized
// by its content and decompressed.
func ReadTraceFile(path, format string) (Trace, error) {
	if format == "" {
		format = FormatFromPath(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return Trace{}, err
	}
	defer f.Close()
	t, err := ReadTrace(f, format)
	if err != nil {
		return Trace{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadTrace reads a trace in format FormatSWF, FormatCSV, FormatSacct or FormatPhilly,
// gzip-compressed or not, and returns its jobs sorted by submit time (ties keep file order). A
// trace read as FormatCSV or "" whose header is sacct's is read as FormatSacct; one read as ""
// that starts with '[' or '{' is read as FormatPhilly ("" and anything else is
// ErrFormatUnknown). Errors name the offending line.
func ReadTrace(r io.Reader, format string) (Trace, error) {
	var rows []row
	var sk skips
	f, err := readRows(r, format, &sk, func(r *row) { rows = append(rows, *r) })
	if err != nil {
		return Trace{}, err
	}
	t := Trace{Capacity: f.capacity}
	for i := range rows {
		if j, ok := f.settle(&rows[i], &sk); ok {
			t.Jobs = append(t.Jobs, j)
		}
	}
	if err := sk.check(&t, len(t.Jobs)); err != nil {
		return Trace{}, err
	}
	sort.SliceStable(t.Jobs, func(a, b int) bool { return t.Jobs[a].Submit < t.Jobs[b].Submit })
	return t, nil
}

// row is a job as a reader reads it, with what only the whole file decides left open: facts
// settles it.
type row struct {
	Job
	line       int
	alt        string  // CSV: the queue under its other name, should the queue column be a delay
	zero       bool    // CSV: it asks for an explicit 0 GPUs
	noSubmit   bool    // CSV: its submit time is not known (kept only to be left out: settle says why)
	waited     bool    // CSV: it has a wait recorded (so it started) but no submit time
	gpus, cpus float64 // sacct: the GPUs it asks for, and its CPUs
}

// facts are what a trace file says as a whole: what its rows are settled by.
type facts struct {
	format   string
	capacity float64 // SWF: the MaxProcs or MaxNodes header
	delays   bool    // CSV: the queue column is the queueing delay; the queue is the other name
	anyGPU   bool    // CSV and sacct: some job asks for a GPU
	first    int64   // CSV: the first submit time (-1: no record has one)
}

// settle applies what the whole file says to a row: its job, or false when the job is left out
// (counted in sk). In a file where jobs ask for GPUs, one that asks for none (a CPU pod in a
// Kubernetes cluster's pod list, a CPU job in sacct's records, a Philly job whose first attempt
// held machines but no GPU) is not a request for the pool:
// it is left out, and counted, without counting towards refusing the file. In sacct's records
// of a cluster without GPUs the size is the CPUs.
func (f *facts) settle(r *row, sk *skips) (Job, bool) {
	j := r.Job
	switch f.format {
	case FormatCSV, FormatPhilly:
		if f.delays {
			j.Queue = r.alt
		}
		if f.anyGPU && r.zero {
			sk.leaveOut("ask for no GPU", r.line)
			return Job{}, false
		}
		if r.noSubmit && !r.waited && f.first >= 0 && (r.Start < 0 || r.Start <= f.first) {
			// Not started, or started before the first submit: running, or dropped, before
			// the trace began (an instance list of a cluster that ran long before it).
			sk.leaveOut("were there before the trace began (no submit_time)", r.line)
			return Job{}, false
		}
		if r.noSubmit {
			sk.add("have no submit_time", r.line)
			return Job{}, false
		}
	case FormatSacct:
		switch {
		case f.anyGPU && r.gpus <= 0:
			sk.leaveOut("ask for no GPU", r.line)
			return Job{}, false
		case f.anyGPU:
			j.GPUs = r.gpus
		case r.cpus <= 0:
			sk.add("have no size (no CPU or GPU count)", r.line)
			return Job{}, false
		default:
			j.GPUs = r.cpus
		}
	}
	return j, true
}

// readRows reads a trace in the given format (see ReadTrace), gzip-compressed or not, calls emit
// for every record that places a job, in the file's order, and returns what the file says as a
// whole. The row handed to emit is reused for the next.
func readRows(r io.Reader, format string, sk *skips, emit func(*row)) (facts, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return facts{}, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	switch format {
	case FormatSWF:
		return readSWF(br, sk, emit)
	case FormatSacct:
		return readSacct(br, sk, emit)
	case FormatPhilly:
		return readPhilly(br, sk, emit)
	case FormatCSV, "":
		switch {
		case format == "" && looksJSON(br):
			return readPhilly(br, sk, emit)
		case looksSacct(firstLine(br)):
			return readSacct(br, sk, emit)
		case format == "":
			return facts{}, ErrFormatUnknown
		}
		return readCSV(br, sk, emit)
	}
	return facts{}, fmt.Errorf("unknown trace format %q (want swf, csv, sacct or philly)", format)
}

// swfUsed are the SWF fields the reader uses, by their 1-based position: submit time, wait
// time, run time, allocated processors, requested processors, requested time, status, user,
// queue and partition.
var swfUsed = [...]int{2, 3, 4, 5, 8, 9, 11, 12, 15, 16}

// readSWF reads the Standard Workload Format of the Parallel Workloads Archive: ';' starts a
// header comment, then one job per line with 18 whitespace-separated fields, -1 meaning unknown.
//
// A job with an unknown wait that did not run (run time unknown or 0, status not 1: cancelled
// or failed in the queue) never started; the trace does not say when it left the queue, so the
// replay takes it out at once rather than let it stand in the queue for the rest of the trace.
// A record that cannot place its job (unknown submit time; unknown wait for a job that ran;
// unknown size; a line that is not 18 numbers) is left out and counted in sk.
func readSWF(r *bufio.Reader, sk *skips, emit func(*row)) (facts, error) {
	f := facts{format: FormatSWF}
	var rw row
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	line := 0
	users, queues := interner{}, interner{}
	var v [19]int64
	var fs [18][]byte
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if text[0] == ';' {
			swfHeader(string(text), &f)
			continue
		}
		n := fields(text, fs[:])
		if n != 18 {
			sk.add("are not 18 fields", line)
			continue
		}
		bad := false
		for _, pos := range swfUsed {
			x, ok := swfNumber(fs[pos-1])
			if !ok {
				bad = true
				break
			}
			v[pos] = x
		}
		switch {
		case bad:
			sk.add("hold a field that is not a number", line)
			continue
		case v[2] < 0:
			sk.add("have no submit time (field 2 is -1)", line)
			continue
		}
		j := Job{Submit: v[2], Start: -1, End: -1, Requested: max(v[9], 0)}
		j.GPUs = float64(v[5])
		if j.GPUs <= 0 {
			j.GPUs = float64(v[8])
		}
		switch {
		case v[3] < 0 && (v[4] > 0 || v[11] == 1):
			sk.add("ran but have no recorded wait (field 3 is -1)", line)
			continue
		case j.GPUs <= 0:
			sk.add("have no size (fields 5 and 8 are -1)", line)
			continue
		}
		if v[3] < 0 {
			j.End = j.Submit // never started; when it left the queue is not recorded
		} else {
			j.Start = j.Submit + v[3]
			switch {
			case v[4] >= 0:
				j.End = j.Start + v[4]
			case j.Requested > 0:
				j.End = j.Start + j.Requested
			default:
				j.End = j.Start
			}
		}
		if v[12] >= 0 {
			j.User = users.of(fs[11])
		}
		switch {
		case v[15] >= 0 && v[16] >= 0: // jobs of another partition run elsewhere: tell them apart like queues
			j.Queue = queues.of(append(append(append(make([]byte, 0, 16), fs[14]...), '@'), fs[15]...))
		case v[15] >= 0:
			j.Queue = queues.of(fs[14])
		case v[16] >= 0:
			j.Queue = queues.of(append([]byte{'@'}, fs[15]...))
		}
		rw = row{Job: j, line: line}
		emit(&rw)
	}
	if err := sc.Err(); err != nil {
		return facts{}, fmt.Errorf("after line %d: %w", line, err)
	}
	return f, nil
}

// fields splits b at runs of blanks into f and returns how many fields there were (f holds the
// first len(f) of them).
func fields(b []byte, f [][]byte) int {
	n := 0
	for i := 0; i < len(b); {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) {
			break
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\t' {
			j++
		}
		if n < len(f) {
			f[n] = b[i:j]
		}
		n++
		i = j
	}
	return n
}

// swfNumber reads an SWF field: an integer, or a decimal as some archives write them ("3600.00"),
// whose fraction is dropped.
func swfNumber(b []byte) (int64, bool) {
	var v int64
	neg := false
	i := 0
	if len(b) > 0 && b[0] == '-' {
		neg, i = true, 1
	}
	if i < len(b) && len(b)-i <= 18 {
		j := i
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
			v = 10*v + int64(b[j]-'0')
		}
		if j == len(b) {
			if neg {
				v = -v
			}
			return v, true
		}
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e15 {
		return 0, false
	}
	return int64(x), true
}

// interner hands out one string per distinct name, so that a long trace keeps each user's and
// queue's name once.
type interner map[string]string

func (in interner) of(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

// swfHeader takes the capacity from a "; MaxProcs: N" (or, failing that, "; MaxNodes: N") line.
func swfHeader(text string, f *facts) {
	key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(text, ";")), ":")
	if !ok {
		return
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || n <= 0 {
		return
	}
	switch strings.TrimSpace(key) {
	case "MaxProcs":
		f.capacity = n
	case "MaxNodes":
		if f.capacity == 0 {
			f.capacity = n
		}
	}
}

// csvColumns are the generic trace CSV's columns; submit_time, start_time, end_time and gpus are
// required.
var csvColumns = []string{"job_id", "submit_time", "start_time", "end_time", "gpus", "user", "queue", "requested_seconds"}

// csvRequired are the columns a trace CSV cannot do without.
var csvRequired = []string{"submit_time", "start_time", "end_time", "gpus"}

// csvAliases are other names GPU cluster traces give the generic columns (as Helios, Acme and
// Alibaba's pod lists do), tried in order when the generic name is absent. A run time
// (duration) stands in for end_time: the end is then the start plus it.
var csvAliases = map[string][]string{
	"submit_time":       {"submitted_time", "submission_time", "submit", "creation_time", "create_time"},
	"start_time":        {"start", "scheduled_time", "begin_time"},
	"end_time":          {"end", "finish_time", "finished_time", "completion_time", "deletion_time"},
	"gpus":              {"gpu_num", "num_gpu", "num_gpus", "gpu_count", "ngpus", "gpus_requested", "gpu_request"},
	"user":              {"user_id", "username", "user_name", "app_name", "application", "app", "workload_id", "workload"},
	"queue":             {"partition", "vc", "virtual_cluster", "qos"},
	"requested_seconds": {"time_limit", "timelimit", "requested_time", "walltime"},
}

// csvRunTime are names of a run-time column, in seconds, that stands in for a missing end_time.
var csvRunTime = []string{"duration", "run_time", "runtime"}

// csvWait are names of a wait column, in seconds from the submit, that stands in for a missing
// start_time (a trace that records each job's wait and run time, as SWF's fields are).
var csvWait = []string{"wait_time", "wait", "waiting_time", "queueing_delay", "queuing_delay", "queue_delay"}

// readCSV reads the generic trace CSV: a header line naming the columns (any order; the names of
// csvAliases are taken too), then one job per line. Empty start_time: never started. Empty user,
// queue, requested_seconds: unknown. Without start_time, a wait column (csvWait) gives the start
// from the submit; an unknown wait is a job that never started, or, where its run time is more
// than 0, one that ran and cannot be placed.
// Times are seconds from the trace's origin, which may carry a fraction (dropped), or dates and
// times (RFC 3339, or 2006-01-02 15:04:05 in UTC), read as seconds since 1970; empty, -1, None,
// Unknown, null, NaN or NA is unknown. A record that cannot place its job (no submit time, a time that is
// neither, a start before the submit, a line with another number of fields than the header) is
// left out and counted in sk.
func readCSV(r *bufio.Reader, sk *skips, emit func(*row)) (facts, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.LazyQuotes = true
	head, err := cr.Read()
	if err == io.EOF {
		return facts{}, errors.New("line 1: empty file; want a header line " + strings.Join(csvColumns, ","))
	}
	if err != nil {
		return facts{}, err
	}
	head = slices.Clone(head)
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.ToLower(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; ok {
			continue
		}
		for _, a := range csvAliases[c] {
			if i, ok := col[a]; ok {
				col[c] = i
				break
			}
		}
	}
	// standIn is the column, among names, that stands in for column c where the header lacks
	// it (-1: none, or c is there).
	standIn := func(c string, names []string) int {
		if _, ok := col[c]; !ok {
			for _, a := range names {
				if i, ok := col[a]; ok {
					return i
				}
			}
		}
		return -1
	}
	runTime, wait := standIn("end_time", csvRunTime), standIn("start_time", csvWait)
	for _, c := range csvRequired {
		if _, ok := col[c]; !ok && (c != "end_time" || runTime < 0) && (c != "start_time" || wait < 0) {
			also := ""
			if as := csvAliases[c]; len(as) > 0 {
				also = " (or " + strings.Join(as, ", ") + ")"
			}
			if c == "end_time" {
				also = " (or " + strings.Join(slices.Concat(csvAliases[c], csvRunTime), ", ") + ")"
			}
			if c == "start_time" {
				also = " (or " + strings.Join(csvAliases[c], ", ") + ", or a wait: " + strings.Join(csvWait, ", ") + ")"
			}
			return facts{}, fmt.Errorf("line 1: header lacks column %q%s; want %s", c, also, strings.Join(csvColumns, ","))
		}
	}
	// Helios and Acme name the queueing delay, in seconds, "queue" (and Helios the virtual
	// cluster "vc"): a numeric queue column that agrees with the starts is read as that, and the
	// queue is then taken from the first of queue's other names in the header, if any.
	named, alt := -1, -1
	if i, ok := col["queue"]; ok && strings.TrimSpace(strings.ToLower(strings.TrimPrefix(head[i], "\ufeff"))) == "queue" {
		named = i
		for _, a := range csvAliases["queue"] {
			if k, ok := col[a]; ok {
				alt = k
				break
			}
		}
	}
	milli, hasMilli := col["gpu_milli"] // Alibaba's pod lists: the share of each GPU, in thousandths
	f := facts{format: FormatCSV, first: -1}
	var rw row
	delays, agree, words := 0, 0, 0 // jobs that waited 10 s or more; of them, whose queue equals the wait; queues not numbers
	users, queues := interner{}, interner{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return facts{}, err
			}
			sk.add("cannot be read as CSV", pe.StartLine)
			continue
		}
		if len(rec) != len(head) {
			sk.add(fmt.Sprintf("do not have the header's %d fields", len(head)), line)
			continue
		}
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		// seconds reads a time: empty, -1 (as in SWF), None, Unknown, null, NaN or NA is unknown; ok
		// is false when it is neither a number of seconds from the trace's origin nor a date
		// and time (then the seconds since 1970, in UTC unless it names its zone).
		seconds := func(name string, none int64) (v int64, ok bool) {
			s := get(name)
			if unknownTime(s) {
				return none, true
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil { // seconds with a fraction: the whole seconds
				x, ferr := strconv.ParseFloat(s, 64)
				if ferr != nil {
					t, ok := dateTime(s)
					return t, ok
				}
				if math.IsNaN(x) || math.IsInf(x, 0) || x > math.MaxInt64/2 || x < math.MinInt64/2 {
					return 0, false
				}
				v = int64(x)
			}
			return v, v >= 0
		}
		rw = row{line: line}
		j := &rw.Job
		var ok [4]bool
		j.Submit, ok[0] = seconds("submit_time", -1)
		if wait >= 0 {
			j.Start, ok[1] = -1, true
			if w := strings.TrimSpace(rec[wait]); !unknownTime(w) {
				x, err := strconv.ParseFloat(w, 64)
				ok[1] = err == nil && x >= 0 && x < math.MaxInt64/4
				if ok[1] && j.Submit >= 0 {
					j.Start = j.Submit + int64(x)
				}
				rw.waited = ok[1] && j.Submit < 0
			}
		} else {
			j.Start, ok[1] = seconds("start_time", -1)
		}
		if runTime >= 0 {
			j.End, ok[2] = -1, true
			if d := strings.TrimSpace(rec[runTime]); j.Start >= 0 && ok[1] {
				if x, err := strconv.ParseFloat(d, 64); err == nil && x >= 0 && x < math.MaxInt64/4 {
					j.End = j.Start + int64(x)
				}
			}
		} else {
			j.End, ok[2] = seconds("end_time", -1)
		}
		j.Requested, ok[3] = seconds("requested_seconds", 0)
		if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
			sk.add("hold a time that is neither seconds from the trace's start nor a date and time", line)
			continue
		}
		if wait >= 0 && runTime >= 0 && j.Submit >= 0 && j.Start < 0 {
			if x, err := strconv.ParseFloat(strings.TrimSpace(rec[runTime]), 64); err == nil && x > 0 {
				sk.add("ran but have no recorded wait", line)
				continue
			}
		}
		switch g := get("gpus"); g {
		case "-1", "":
			j.GPUs = 0 // unknown, as in SWF
		default:
			x, err := strconv.ParseFloat(g, 64)
			if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				sk.add("hold gpus that are not a non-negative number", line)
				continue
			}
			j.GPUs = x
			if hasMilli && x > 0 {
				if m, err := strconv.ParseFloat(strings.TrimSpace(rec[milli]), 64); err == nil && m > 0 && m < 1000 {
					j.GPUs = x * m / 1000
				}
			}
			rw.zero = x == 0
			f.anyGPU = f.anyGPU || x > 0
		}
		// A job with no submit time is left out: as one that asks for no GPU, in a file where
		// others do, whatever its times (a CPU pod that was there before the trace began has no
		// creation time); by choice too where it was there before the trace began; else as
		// unreadable. Which, only the whole file tells (settle).
		if j.Submit < 0 {
			rw.noSubmit = true
			emit(&rw)
			continue
		}
		if f.first < 0 || j.Submit < f.first {
			f.first = j.Submit
		}
		if j.Start >= 0 && j.Start < j.Submit {
			sk.add("start before they were submitted", line)
			continue
		}
		if j.Start >= 0 && j.End >= 0 && j.End < j.Start {
			j.End = j.Start // ended before it started: it ran for no time
		}
		if u := get("user"); u != "" && u != "-1" {
			j.User = users.of([]byte(u))
		}
		if q := get("queue"); q != "" && q != "-1" {
			j.Queue = queues.of([]byte(q))
		}
		if named >= 0 {
			switch d, err := strconv.ParseFloat(strings.TrimSpace(rec[named]), 64); {
			case err != nil && !unknown(rec[named]):
				words++
			case err == nil && j.Start-j.Submit >= 10: // a queue numbered 0 or 1 agrees with quick starts
				delays++
				if math.Abs(d-float64(j.Start-j.Submit)) <= 1.5 {
					agree++
				}
			}
			if alt >= 0 {
				a := strings.TrimSpace(rec[alt])
				if a == "-1" {
					a = ""
				}
				rw.alt = queues.of([]byte(a)) // interned: one string per queue, not per job
			}
		}
		emit(&rw)
	}
	f.delays = named >= 0 && words == 0 && delays > 0 && agree*10 >= delays*9
	return f, nil
}

// unknown reports whether a CSV field says the value is not known: empty, -1 (as in SWF), None,
// null, NaN or NA.
func unknown(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "-1", "none", "null", "nan", "na", "n/a":
		return true
	}
	return false
}

// unknownTime reports whether a time field says the time is not known: as unknown does, or
// Unknown (as sacct writes a pending job's start).
func unknownTime(s string) bool {
	return unknown(s) || strings.EqualFold(strings.TrimSpace(s), "unknown")
}

// dateLayouts are the forms of a date and time a CSV trace may give in place of seconds.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05"}

// dateTime reads a date and time as the whole seconds since 1970 (UTC unless s names its zone).
func dateTime(s string) (int64, bool) {
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.Unix(), t.Unix() >= 0
		}
	}
	return 0, false
}
