package predict

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Job is one job of a recorded trace. Times are seconds from the trace's own origin.
type Job struct {
	ID        string
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
	FormatSWF = "swf"
	FormatCSV = "csv"
)

// FormatFromPath guesses a trace's format from its file name: .swf and .swf.gz are SWF,
// .csv and .csv.gz are the generic CSV. It returns "" when the name says nothing.
func FormatFromPath(path string) string {
	name := strings.ToLower(filepath.Base(path))
	name = strings.TrimSuffix(name, ".gz")
	switch filepath.Ext(name) {
	case ".swf":
		return FormatSWF
	case ".csv":
		return FormatCSV
	}
	return ""
}

// Trace is a recorded workload: its jobs in submit order and, when the file says so, the
// cluster's capacity (SWF's MaxProcs or MaxNodes header; 0 when unknown).
type Trace struct {
	Jobs     []Job
	Capacity float64
	// Skipped counts the records left out because the trace cannot place them: an SWF job that
	// ran but whose wait is unknown, or whose size is unknown.
	Skipped int
}

// End is the trace's last recorded moment: the latest submit, start or end time of its jobs.
func (t Trace) End() int64 {
	var end int64
	for _, j := range t.Jobs {
		end = max(end, j.Submit, j.Start, j.End)
	}
	return end
}

// ReadTraceFile opens path and reads it in the given format ("" guesses from the extension).
// A gzip-compressed file is recognized by its content and decompressed.
func ReadTraceFile(path, format string) (Trace, error) {
	if format == "" {
		format = FormatFromPath(path)
		if format == "" {
			return Trace{}, fmt.Errorf("%s: cannot tell the trace format from the name; pass --format swf or --format csv", path)
		}
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

// ReadTrace reads a trace in format FormatSWF or FormatCSV, gzip-compressed or not, and returns
// its jobs sorted by submit time (ties keep file order). Errors name the offending line.
func ReadTrace(r io.Reader, format string) (Trace, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return Trace{}, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	var t Trace
	var err error
	switch format {
	case FormatSWF:
		t, err = readSWF(br)
	case FormatCSV:
		t.Jobs, err = readCSV(br)
	default:
		return Trace{}, fmt.Errorf("unknown trace format %q (want swf or csv)", format)
	}
	if err != nil {
		return Trace{}, err
	}
	sort.SliceStable(t.Jobs, func(a, b int) bool { return t.Jobs[a].Submit < t.Jobs[b].Submit })
	return t, nil
}

// swfField names the SWF fields the reader uses, by their 1-based position.
var swfField = map[int]string{
	1: "job number", 2: "submit time", 3: "wait time", 4: "run time", 5: "allocated processors",
	8: "requested processors", 9: "requested time", 11: "status", 12: "user id", 15: "queue number",
	16: "partition number",
}

// readSWF reads the Standard Workload Format of the Parallel Workloads Archive: ';' starts a
// header comment, then one job per line with 18 whitespace-separated fields, -1 meaning unknown.
//
// A job with an unknown wait that did not run (run time unknown or 0, status not 1: cancelled
// or failed in the queue) never started; the trace does not say when it left the queue, so the
// replay takes it out at once rather than let it stand in the queue for the rest of the trace.
// A job with an unknown wait that did run, or whose size is unknown, cannot be placed in time
// or in the pool: it is left out and counted in Trace.Skipped.
func readSWF(r *bufio.Reader) (Trace, error) {
	var t Trace
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if text[0] == ';' {
			swfHeader(text, &t)
			continue
		}
		f := strings.Fields(text)
		if len(f) != 18 {
			return Trace{}, fmt.Errorf("line %d: want 18 SWF fields, got %d", line, len(f))
		}
		num := func(pos int) (int64, error) {
			s := f[pos-1]
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				// Some archives write the integer fields as decimals ("3600.00").
				x, ferr := strconv.ParseFloat(s, 64)
				if ferr != nil {
					return 0, fmt.Errorf("line %d: field %d (%s): %q is not a number", line, pos, swfField[pos], s)
				}
				v = int64(x)
			}
			return v, nil
		}
		var v [19]int64
		for pos := range swfField {
			x, err := num(pos)
			if err != nil {
				return Trace{}, err
			}
			v[pos] = x
		}
		if v[2] < 0 {
			return Trace{}, fmt.Errorf("line %d: field 2 (submit time) is %d; a job needs a submit time", line, v[2])
		}
		j := Job{ID: f[0], Submit: v[2], Start: -1, End: -1, Requested: max(v[9], 0)}
		j.GPUs = float64(v[5])
		if j.GPUs <= 0 {
			j.GPUs = float64(v[8])
		}
		if j.GPUs <= 0 || (v[3] < 0 && (v[4] > 0 || v[11] == 1)) {
			t.Skipped++
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
			j.User = f[11]
		}
		if v[15] >= 0 {
			j.Queue = f[14]
		}
		if v[16] >= 0 { // jobs of another partition run elsewhere: tell them apart like queues
			j.Queue += "@" + f[15]
		}
		t.Jobs = append(t.Jobs, j)
	}
	if err := sc.Err(); err != nil {
		return Trace{}, fmt.Errorf("after line %d: %w", line, err)
	}
	return t, nil
}

// swfHeader takes the capacity from a "; MaxProcs: N" (or, failing that, "; MaxNodes: N") line.
func swfHeader(text string, t *Trace) {
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
		t.Capacity = n
	case "MaxNodes":
		if t.Capacity == 0 {
			t.Capacity = n
		}
	}
}

// csvColumns are the generic trace CSV's columns; the first five are required.
var csvColumns = []string{"job_id", "submit_time", "start_time", "end_time", "gpus", "user", "queue", "requested_seconds"}

// readCSV reads the generic trace CSV: a header line naming the columns (any order), then one
// job per line. Empty start_time: never started. Empty user, queue, requested_seconds: unknown.
// Times may carry a fraction of a second, which is dropped.
func readCSV(r *bufio.Reader) ([]Job, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("line 1: empty file; want a header line " + strings.Join(csvColumns, ","))
	}
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.ToLower(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, c := range csvColumns[:5] {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("line 1: header lacks column %q; want %s", c, strings.Join(csvColumns, ","))
		}
	}
	var jobs []Job
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err // csv.ParseError names the line
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, fmt.Errorf("line %d: want %d fields as in the header, got %d", line, len(head), len(rec))
		}
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		integer := func(name string, empty int64) (int64, error) {
			s := get(name)
			if s == "" || s == "-1" { // -1: unknown, as in SWF
				return empty, nil
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil { // seconds with a fraction: the whole seconds
				x, ferr := strconv.ParseFloat(s, 64)
				if ferr != nil || math.IsNaN(x) || math.IsInf(x, 0) || x > math.MaxInt64/2 {
					return 0, fmt.Errorf("line %d: %s: %q is not a number of seconds", line, name, s)
				}
				v = int64(x)
			}
			if v < 0 {
				return 0, fmt.Errorf("line %d: %s: %q is negative; want seconds from the trace's start (-1 or empty for unknown)", line, name, s)
			}
			return v, nil
		}
		j := Job{ID: get("job_id"), User: get("user"), Queue: get("queue")}
		if get("submit_time") == "" {
			return nil, fmt.Errorf("line %d: submit_time is empty", line)
		}
		if j.Submit, err = integer("submit_time", -1); err != nil {
			return nil, err
		}
		if j.Start, err = integer("start_time", -1); err != nil {
			return nil, err
		}
		if j.End, err = integer("end_time", -1); err != nil {
			return nil, err
		}
		if j.Requested, err = integer("requested_seconds", 0); err != nil {
			return nil, err
		}
		switch g := get("gpus"); g {
		case "-1":
			j.GPUs = 0 // unknown, as in SWF
		default:
			if j.GPUs, err = strconv.ParseFloat(g, 64); err != nil || j.GPUs < 0 {
				return nil, fmt.Errorf("line %d: gpus: %q is not a non-negative number", line, g)
			}
		}
		if j.Start >= 0 && j.Start < j.Submit {
			return nil, fmt.Errorf("line %d: start_time %d is before submit_time %d", line, j.Start, j.Submit)
		}
		if j.Start >= 0 && j.End >= 0 && j.End < j.Start {
			return nil, fmt.Errorf("line %d: end_time %d is before start_time %d", line, j.End, j.Start)
		}
		if j.Queue == "-1" {
			j.Queue = ""
		}
		if j.User == "-1" {
			j.User = ""
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}
