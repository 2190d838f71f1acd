package predict

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// sacctHead is the header line of sacct's parsable output: the delimiter between fields and each
// field's name in lower case ("" for the empty field after --parsable's trailing delimiter).
type sacctHead struct {
	delim string
	names []string
}

// index is the position of the first of names in the header, or -1 when it has none of them.
func (h sacctHead) index(names ...string) int {
	for _, n := range names {
		if i := slices.Index(h.names, n); i >= 0 {
			return i
		}
	}
	return -1
}

// sacct reports whether the header names the fields a job is placed from: its id, submit, start
// and end, in sacct's names or in those of Slurm's job table (table).
func (h sacctHead) sacct() bool {
	return h.index(sacctID...) >= 0 && h.index(sacctSubmit...) >= 0 && h.index(sacctStart...) >= 0 && h.index(sacctEnd...) >= 0
}

// The fields a job is placed from, in sacct's names and then the job table's.
var (
	sacctID     = []string{"jobid", "jobidraw", "id_job"}
	sacctSubmit = []string{"submit", "time_submit"}
	sacctStart  = []string{"start", "time_start"}
	sacctEnd    = []string{"end", "time_end"}
)

// table reports whether the header is that of Slurm's job table as slurmdbd keeps it in its
// database (id_job, time_submit, time_start, time_end, tres_req...), which published job logs of
// Slurm clusters are exported from: times in seconds since 1970, 0 for none; TRES by number; the
// state by number.
func (h sacctHead) table() bool {
	return h.index("time_submit") >= 0 && h.index("submit") < 0
}

// sacctSizes are the fields a job's size is read from, in sacct's names and then the job table's.
var sacctSizes = []string{"reqtres", "alloctres", "reqgres", "allocgres", "ncpus", "reqcpus", "alloccpus",
	"tres_req", "tres_alloc", "gres_req", "gres_alloc", "gres_used", "cpus_req", "cpus_alloc"}

// nameByte reports whether c may be part of a sacct field name.
func nameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parseSacctHead reads line as sacct's header: field names (letters, digits and _) separated by
// a delimiter, which is what follows the first name up to the next ('|' for --parsable2 and
// --parsable, whatever --delimiter gave otherwise). ok is false when line is not that.
func parseSacctHead(line string) (h sacctHead, ok bool) {
	line = strings.TrimRight(strings.TrimPrefix(line, "\ufeff"), "\r\n")
	i := 0
	for i < len(line) && nameByte(line[i]) {
		i++
	}
	if i == 0 || i == len(line) {
		return h, false
	}
	j := i
	for j < len(line) && !nameByte(line[j]) {
		j++
	}
	h.delim = line[i:j]
	if strings.TrimSpace(h.delim) == "" || strings.ContainsAny(h.delim, "\"\r\n") {
		return h, false
	}
	h.names = strings.Split(line, h.delim)
	for k, n := range h.names {
		n = strings.TrimSpace(n)
		if n == "" && k < len(h.names)-1 {
			return h, false
		}
		for b := range len(n) {
			if !nameByte(n[b]) {
				return h, false
			}
		}
		h.names[k] = strings.ToLower(n)
	}
	return h, true
}

// firstLine is the first line of what br holds, without reading it (at most br's buffer).
func firstLine(br *bufio.Reader) string {
	for n := 512; ; n *= 2 {
		n = min(n, br.Size())
		b, err := br.Peek(n)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return string(b[:i])
		}
		if err != nil || n == br.Size() {
			return string(b)
		}
	}
}

// looksSacct reports whether line is sacct's header. A header with ',' between its names that
// the generic CSV can read (one with a gpus column or one of its other names) is the generic
// CSV's.
func looksSacct(line string) bool {
	h, ok := parseSacctHead(line)
	if !ok || !h.sacct() {
		return false
	}
	if strings.TrimSpace(h.delim) == "," {
		return h.index(append([]string{"gpus"}, csvAliases["gpus"]...)...) < 0
	}
	return true
}

// sacctRecords hands out the records after the header: split at the delimiter, or, for ',', read
// as CSV so that a quoted TRES list keeps its commas.
type sacctRecords struct {
	sc    *bufio.Scanner
	cr    *csv.Reader
	delim string
	line  int
}

// next returns the next record and its line; bad is set (rec nil) for one that cannot be read
// as CSV. At the end it returns io.EOF.
func (r *sacctRecords) next() (rec []string, line int, bad bool, err error) {
	if r.cr != nil {
		rec, err := r.cr.Read()
		if err == io.EOF {
			return nil, 0, false, err
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return nil, 0, false, err
			}
			return nil, pe.StartLine, true, nil
		}
		line, _ := r.cr.FieldPos(0)
		return rec, line, false, nil
	}
	for r.sc.Scan() {
		r.line++
		text := strings.TrimRight(r.sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		return strings.Split(text, r.delim), r.line, false, nil
	}
	if err := r.sc.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("after line %d: %w", r.line, err)
	}
	return nil, 0, false, io.EOF
}

// readSacct reads Slurm's accounting records as sacct writes them with --parsable2 (fields
// separated by '|'), --parsable (with a trailing '|') or another --delimiter: a header naming
// the fields, in any order and case, then one record per line. JobID (or JobIDRaw), Submit,
// Start and End are needed, and a size: ReqTRES, AllocTRES, ReqGRES, AllocGRES, NCPUS, ReqCPUS
// or AllocCPUS. User, Partition (or QOS), Timelimit (or TimelimitRaw), State and NodeList are
// read where given.
//
// A job step (JobID 123.batch, 123.extern, 123.0) is not a job and is passed over without being
// counted; array jobs (123_4) and heterogeneous job components (123+0) are jobs. Times are dates
// and times (2024-01-01T10:00:00, read as UTC) or seconds since 1970; Unknown or None is not
// known: a job with no start never started, and left the queue at its end when it has one. When
// any job asks for a GPU, a job's size is its GPUs and the jobs that ask for none are left out
// (counted in sk, but not as unreadable: they belong to another part of the cluster); otherwise
// it is a CPU cluster and the size is CPUs. A record that cannot place its job is left out and
// counted in sk.
func readSacct(r *bufio.Reader, sk *skips, emit func(*row)) (facts, error) {
	f := facts{format: FormatSacct}
	h, ok := parseSacctHead(firstLine(r))
	if !ok {
		return facts{}, errors.New("line 1: not sacct's header; want field names separated by '|', as sacct --parsable2 --format JobID,User,Partition,Submit,Start,End,Timelimit,ReqTRES,State writes them")
	}
	table := h.table()
	var missing []string
	tableNames := []string{"id_job", "time_submit", "time_start", "time_end", "tres_req"}
	for i, need := range [][]string{sacctID, sacctSubmit, sacctStart, sacctEnd, sacctSizes} {
		switch {
		case h.index(need...) >= 0:
		case table:
			missing = append(missing, tableNames[i])
		default:
			missing = append(missing, need[0])
		}
	}
	if len(missing) > 0 && table {
		return facts{}, fmt.Errorf("line 1: Slurm job table header lacks %s; want at least id_job,time_submit,time_start,time_end and one of tres_req, tres_alloc, gres_req, gres_alloc, gres_used, cpus_req", strings.Join(missing, ", "))
	}
	if len(missing) > 0 {
		return facts{}, fmt.Errorf("line 1: sacct header lacks %s; want at least JobID,Submit,Start,End and one of ReqTRES, AllocTRES, ReqGRES, AllocGRES, NCPUS, ReqCPUS, AllocCPUS", strings.Join(missing, ", "))
	}
	recs := &sacctRecords{delim: h.delim}
	if strings.TrimSpace(h.delim) == "," {
		recs.cr = csv.NewReader(r)
		recs.cr.FieldsPerRecord = -1
		recs.cr.LazyQuotes = true
		recs.cr.TrimLeadingSpace = true
		if _, err := recs.cr.Read(); err != nil && err != io.EOF {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return facts{}, err
			}
		}
	} else {
		recs.sc = bufio.NewScanner(r)
		recs.sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
		if !recs.sc.Scan() {
			return f, recs.sc.Err()
		}
		recs.line = 1
	}
	col := func(names ...string) int { return h.index(names...) }
	id, submit, start, end := col(sacctID...), col(sacctSubmit...), col(sacctStart...), col(sacctEnd...)
	user, queue, limit := col("user", "id_user"), col("partition", "qos"), col("timelimit", "timelimitraw")
	state, nodes, nodeCount := col("state"), col("nodelist"), col("nodes_alloc")
	reqTRES, allocTRES := col("reqtres", "tres_req"), col("alloctres", "tres_alloc")
	reqGRES, allocGRES := col("reqgres", "gres_req"), col("allocgres", "gres_alloc", "gres_used")
	reqCPUs, nCPUs, allocCPUs := col("reqcpus", "cpus_req"), col("ncpus"), col("alloccpus", "cpus_alloc")

	var rw row
	users, queues := interner{}, interner{}
	for {
		rec, line, bad, err := recs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return facts{}, err
		}
		if bad {
			sk.add("cannot be read as CSV", line)
			continue
		}
		if len(rec) != len(h.names) {
			if len(rec) > len(h.names) && recs.cr != nil {
				sk.add(fmt.Sprintf("do not have the header's %d fields (the commas of an unquoted TRES list split it; sacct --parsable2 separates fields with '|')", len(h.names)), line)
			} else {
				sk.add(fmt.Sprintf("do not have the header's %d fields", len(h.names)), line)
			}
			continue
		}
		get := func(i int) string {
			if i < 0 {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		if strings.Contains(get(id), ".") {
			continue // a job step, not a job
		}
		j := Job{}
		var ok [3]bool
		j.Submit, ok[0] = sacctTime(get(submit), table)
		j.Start, ok[1] = sacctTime(get(start), table)
		j.End, ok[2] = sacctTime(get(end), table)
		switch {
		case !ok[0] || !ok[1] || !ok[2]:
			sk.add("hold a time that is neither a date and time nor Unknown", line)
			continue
		case j.Submit < 0:
			sk.add("have no submit time", line)
			continue
		case j.Start >= 0 && j.Start < j.Submit:
			sk.add("start before they were submitted", line)
			continue
		}
		// Some Slurm versions give a job cancelled while pending its cancel time as its start
		// as well as its end: it had no nodes. (The job table numbers the states: 4 is
		// cancelled.)
		if j.Start >= 0 && j.Start == j.End && cancelled(get(state)) &&
			(strings.EqualFold(get(nodes), "None assigned") || allocTRES >= 0 && get(allocTRES) == "" ||
				nodeCount >= 0 && get(nodeCount) == "0") {
			j.Start = -1
		}
		switch {
		case j.Start < 0 && j.End >= 0 && j.End < j.Submit:
			j.End = j.Submit
		case j.Start >= 0 && j.End >= 0 && j.End < j.Start:
			j.End = j.Start
		}
		j.Requested = sacctLimit(get(limit))
		if u := get(user); u != "" {
			j.User = users.of([]byte(u))
		}
		if q := get(queue); q != "" {
			j.Queue = queues.of([]byte(q))
		}
		gpus := max(tresCount(get(reqTRES), "gpu"), gresGPUs(get(reqGRES)))
		if gpus == 0 {
			gpus = max(tresCount(get(allocTRES), "gpu"), gresGPUs(get(allocGRES)))
		}
		cpus := 0.0
		for _, c := range []float64{number(get(reqCPUs)), tresCount(get(reqTRES), "cpu"), number(get(nCPUs)),
			number(get(allocCPUs)), tresCount(get(allocTRES), "cpu")} {
			if c > 0 {
				cpus = c
				break
			}
		}
		f.anyGPU = f.anyGPU || gpus > 0
		rw = row{Job: j, line: line, gpus: gpus, cpus: cpus}
		emit(&rw)
	}
	return f, nil
}

// cancelled reports whether a job's state is cancelled: CANCELLED (or "CANCELLED by 1001") as
// sacct writes it, or 4 in the job table, whose higher bits are flags.
func cancelled(state string) bool {
	if n, err := strconv.ParseUint(state, 10, 32); err == nil {
		return n&0xff == 4
	}
	return strings.HasPrefix(strings.ToUpper(state), "CANCELLED")
}

// sacctTime reads one of sacct's times: a date and time (read as UTC) or, with
// SLURM_TIME_FORMAT=%s, seconds since 1970; Unknown, None or empty is not known (-1), and so is
// 0 in the job table (table), which keeps 0 for a time that has not come. ok is false when it
// is neither.
func sacctTime(s string, table bool) (int64, bool) {
	if unknownTime(s) || table && s == "0" {
		return -1, true
	}
	if t, ok := dateTime(s); ok {
		return t, true
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= 0 && v < math.MaxInt64/4 {
		return v, true
	}
	return 0, false
}

// sacctLimit reads a time limit in seconds: [D-]HH:MM:SS, D-HH, D-HH:MM, MM:SS or MM (minutes,
// as TimelimitRaw gives it); UNLIMITED, Partition_Limit or anything else is unknown (0).
func sacctLimit(s string) int64 {
	var days int64
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, ok := smallNumber(d)
		if !ok {
			return 0
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0
	}
	var v [3]int64
	for i, p := range parts {
		n, ok := smallNumber(p)
		if !ok {
			return 0
		}
		v[i] = n
	}
	var secs int64
	switch {
	case s != rest: // D-HH[:MM[:SS]]
		secs = v[0]*3600 + v[1]*60 + v[2]
	case len(parts) == 1: // minutes
		secs = v[0] * 60
	case len(parts) == 2: // MM:SS
		secs = v[0]*60 + v[1]
	default:
		secs = v[0]*3600 + v[1]*60 + v[2]
	}
	return days*86400 + secs
}

// smallNumber reads 1 to 7 decimal digits.
func smallNumber(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 7 {
		return 0, false
	}
	var n int64
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = 10*n + int64(s[i]-'0')
	}
	return n, true
}

// number reads a count, 0 when it is not a finite number from 0 to a billion.
func number(s string) float64 {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(x >= 0 && x <= 1e9) {
		return 0
	}
	return x
}

// tresCount is how many of a resource a TRES list (billing=4,cpu=4,gres/gpu=2,mem=16G,node=1)
// holds: for "cpu", the cpu entry; for "gpu", gres/gpu, which is the total, or else the sum of
// the typed entries (gres/gpu:a100=2), which Slurm lists besides it. gres/gpumem and the like are
// not GPUs.
//
// The job table numbers its TRES (1=20,2=192000,4=1,1002=2): 1 is the CPUs, and the numbers
// from 1001 on are those a site has Slurm track besides its fixed ones (AccountingStorageTRES),
// numbered in the order it first named them; on a GPU cluster these are its GPUs (MIT
// SuperCloud's 1001 and 1002 are its two kinds), and the GPUs are the largest count among them,
// since a site that tracks gres/gpu and gres/gpu:TYPE both counts one job's GPUs under two
// numbers.
func tresCount(s, what string) float64 {
	if s == "" {
		return 0
	}
	var total, typed, numbered float64
	untyped := false
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		switch id, err := strconv.Atoi(k); {
		case err == nil && what == "cpu" && id == 1:
			return number(v)
		case err == nil && what == "gpu" && id > 1000:
			numbered = max(numbered, number(v))
		case what == "cpu" && k == "cpu":
			return number(v)
		case what == "gpu" && k == "gres/gpu":
			total, untyped = number(v), true
		case what == "gpu" && strings.HasPrefix(k, "gres/gpu:"):
			typed += number(v)
		}
	}
	if untyped {
		return total
	}
	return min(max(typed, numbered), 1e9)
}

// gresGPUs is how many GPUs an older Slurm's GRES list holds (gpu:2, gpu:a100:2,
// gpu:a100:2(IDX:0-1), mps:100): an untyped gpu entry is the total, or else the typed ones add
// up; gpu alone, or with a type and no count, is one.
func gresGPUs(s string) float64 {
	if s == "" {
		return 0
	}
	var b strings.Builder // s without its parenthesized parts, whose commas are not entries'
	depth := 0
	for i := range len(s) {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	var total, typed float64
	untyped := false
	for e := range strings.SplitSeq(b.String(), ",") {
		e = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(e)), "gres/")
		if k, v, ok := strings.Cut(e, "="); ok { // TRES-like: gpu=2, gpu:a100=2
			e = k + ":" + v
		}
		parts := strings.Split(e, ":")
		if parts[0] != "gpu" {
			continue
		}
		switch len(parts) {
		case 1:
			total, untyped = 1, true
		case 2:
			if _, err := strconv.ParseFloat(parts[1], 64); err == nil {
				total, untyped = number(parts[1]), true
			} else {
				typed++
			}
		default:
			typed += number(parts[len(parts)-1])
		}
	}
	if untyped {
		return total
	}
	return min(typed, 1e9)
}
