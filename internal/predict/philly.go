package predict

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// phillyJob is a job of Microsoft's Philly job log (cluster_job_log), as far as the reader uses
// it. A time is a string, "2017-10-03 04:34:49", or "None" (or null) when not recorded.
type phillyJob struct {
	VC        string `json:"vc"`
	User      string `json:"user"`
	Submitted string `json:"submitted_time"`
	Attempts  []struct {
		Start  string `json:"start_time"`
		End    string `json:"end_time"`
		Detail []struct {
			GPUs []json.RawMessage `json:"gpus"`
		} `json:"detail"`
	} `json:"attempts"`
}

// phillyWant is what a Philly job log looks like, for the errors that say it is not one.
const phillyWant = `Philly's cluster_job_log, a JSON array of jobs ([{"jobid": …, "submitted_time": …, "attempts": […]}, …])`

// looksJSON reports whether the file's first character, after blanks and a byte order mark, is
// '[' or '{': a JSON document, which of the formats read is only Philly's job log.
func looksJSON(br *bufio.Reader) bool {
	c, ok := firstChar(br)
	return ok && (c == '[' || c == '{')
}

// firstChar is the file's first character after blanks and a byte order mark; false when there
// is none within the reader's buffer.
func firstChar(br *bufio.Reader) (byte, bool) {
	b, _ := br.Peek(br.Size())
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0, false
	}
	return b[0], true
}

// readPhilly reads the job log of Microsoft's Philly GPU clusters (cluster_job_log, published in
// msr-fiddle/philly-traces): a JSON array of jobs, each with its virtual cluster (vc), user,
// submitted_time and the attempts to run it, each with its start_time, end_time and detail, the
// machines it ran on with the GPUs it held on each. One job after another, not in an array, is
// read too. The file is read one job at a time, never held whole.
//
// The wait runs from the submit to the first attempt's start; the size is the number of GPUs the
// first attempt held, on all its machines; the end is the last attempt's end (the job holds its
// GPUs from its first start to its last end), unknown when "None", which the log's publishers say
// means it was still running when the log was taken; the queue is the virtual cluster. A job with
// no attempt never started; the log does not say when it left the queue, so the replay takes it
// out at once (as SWF's jobs that never ran), and its size is unknown (as an empty gpus in the
// CSV). A first attempt on no machine has an unknown size; one on machines but no GPU asks for
// none, and is left out by choice (settle). Times are read as UTC.
//
// A record that cannot place its job (no submit time; a first attempt with no start; a time
// that is not a date and time; a start before the submit; fields of other types) is left out and
// counted in sk; where the file stops being JSON (cut short, say), what follows is one record
// that cannot be read, and reading stops there.
func readPhilly(br *bufio.Reader, sk *skips, emit func(*row)) (facts, error) {
	f := facts{format: FormatPhilly}
	c, ok := firstChar(br)
	switch {
	case !ok:
		return facts{}, errors.New("line 1: empty file; want " + phillyWant)
	case c != '[' && c != '{':
		return facts{}, errors.New("line 1: not " + phillyWant)
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\ufeff")) {
		br.Discard(3) // the byte order mark, which the JSON decoder does not take
	}
	lr := &lineReader{r: br}
	dec := json.NewDecoder(lr)
	if c == '[' {
		if _, err := dec.Token(); err != nil { // the '['
			return facts{}, fmt.Errorf("line 1: %w", err)
		}
	}
	users, queues := interner{}, interner{}
	var rw row
	for c == '{' || dec.More() {
		at := dec.InputOffset()
		var pj phillyJob
		err := dec.Decode(&pj)
		if err == io.EOF && c == '{' {
			break
		}
		line := lr.lineOf(at)
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			sk.add("are not jobs as Philly's log writes them", line)
			continue
		case errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF):
			sk.add("cannot be read as JSON", line)
			return f, nil
		case err != nil:
			return facts{}, fmt.Errorf("line %d: %w", line, err)
		}
		rw = row{line: line}
		j := &rw.Job
		var ok bool
		if j.Submit, ok = phillyTime(pj.Submitted); !ok {
			sk.add("hold a time that is not a date and time", line)
			continue
		}
		if j.Submit < 0 {
			sk.add("have no submitted_time", line)
			continue
		}
		if len(pj.Attempts) == 0 {
			j.Start, j.End = -1, j.Submit // never started; when it left the queue is not recorded
		} else {
			first, last := pj.Attempts[0], pj.Attempts[len(pj.Attempts)-1]
			var okStart, okEnd bool
			j.Start, okStart = phillyTime(first.Start)
			j.End, okEnd = phillyTime(last.End)
			switch {
			case !okStart || !okEnd:
				sk.add("hold a time that is not a date and time", line)
				continue
			case j.Start < 0:
				sk.add("ran but have no recorded start (the first attempt's start_time is None)", line)
				continue
			case j.Start < j.Submit:
				sk.add("start before they were submitted", line)
				continue
			}
			if j.End >= 0 && j.End < j.Start {
				j.End = j.Start // ended before it started: it ran for no time
			}
			n := 0
			for _, d := range first.Detail {
				n += len(d.GPUs)
			}
			j.GPUs = float64(n)
			rw.zero = n == 0 && len(first.Detail) > 0
			f.anyGPU = f.anyGPU || n > 0
		}
		if pj.User != "" {
			j.User = users.of([]byte(pj.User))
		}
		if pj.VC != "" {
			j.Queue = queues.of([]byte(pj.VC))
		}
		emit(&rw)
	}
	return f, nil
}

// phillyTime reads a time of the Philly log as seconds since 1970 (-1 when it is "None", null
// or empty); ok is false when it is not a date and time.
func phillyTime(s string) (int64, bool) {
	if unknownTime(s) {
		return -1, true
	}
	return dateTime(s)
}

// lineReader passes on what it reads and tells the line of a place in it, keeping only what
// lies beyond the last place asked about.
type lineReader struct {
	r    io.Reader
	buf  []byte // what was read from offset base on
	base int64
	line int // the line at base, from 0
}

func (l *lineReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.buf = append(l.buf, p[:n]...)
	return n, err
}

// lineOf is the line (from 1) of the first character at or after offset off that is neither
// blank nor a comma: where a value read from off starts. off must not be before an offset asked
// about earlier.
func (l *lineReader) lineOf(off int64) int {
	i := int(min(max(off-l.base, 0), int64(len(l.buf))))
	for i < len(l.buf) && (l.buf[i] == ' ' || l.buf[i] == '\t' || l.buf[i] == '\r' || l.buf[i] == '\n' || l.buf[i] == ',') {
		i++
	}
	l.line += bytes.Count(l.buf[:i], []byte{'\n'})
	l.buf = l.buf[i:]
	l.base += int64(i)
	return l.line + 1
}
