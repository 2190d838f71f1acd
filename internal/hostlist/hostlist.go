// Package hostlist reads the host lists Slurm writes (squeue's and scontrol's node lists, sinfo's
// nodes, a lease's node list): "gpu01,gpu02", "gpu[01-03,07],dgx-a", "rack[1-2]-n[01-02]". It is
// the one reader of that form, so the inventory, the scheduler's view of a job and the reports'
// index agree on which nodes a list names. It imports only the standard library.
//
// The form, as Slurm's own hostlist functions read it (scontrol show hostnames):
//
//   - a list is expressions separated by commas or white space outside brackets; empty ones are
//     skipped;
//   - an expression is text with any number of bracket groups, before, between and after which
//     the text is kept as it is: "gpu[1-2]-ib" is gpu1-ib gpu2-ib;
//   - a group is numbers and ranges separated by commas: "[01-03,07]". A number is ASCII digits
//     only (a sign is not part of a host list: "n[+1]" and "n[-1]" name no host), a range's start
//     is not past its end, and a name has the start's width, its zeros kept: "n[08-11]" is n08 n09
//     n10 n11;
//   - several groups name every combination, the first group varying slowest: "rack[1-2]-n[01-02]"
//     is rack1-n01 rack1-n02 rack2-n01 rack2-n02.
//
// An expression that does not read so (an empty or unclosed group, a word in a group, a range
// backwards) is kept as one name, as it is written: it matches no node, and it is never taken
// for another expression's names. Slurm refuses the whole list there; keeping the rest lets the
// nodes a list does name be found. An expression past the bound below is kept so too. Expanding
// the names of a list, joined with commas, gives the same names again, so a node list written
// out by name (a lease's) reads as the host list it came from.
package hostlist

import (
	"strconv"
	"strings"
)

// The bound on an expansion. A list names at most MaxNames names in all, and bracket groups make
// no name longer than MaxNameLen bytes: an expression whose names would go past either is kept
// as written. Names written out in the list count towards MaxNames, and are kept past it (they
// cost no more than the list itself). So a broken or hostile list ends at once and holds at
// most MaxNames*MaxNameLen bytes of names besides its own text. MaxNames is the number of hosts
// Slurm itself takes in one range, more nodes than a cluster has; MaxNameLen is POSIX's longest
// host name.
const (
	MaxNames   = 1 << 16
	MaxNameLen = 255
)

// Expand returns the host names the lists name, in order, the lists read as one list (so the
// bound holds for all of them together). Duplicates are kept, as Slurm keeps them.
func Expand(lists ...string) []string {
	var out []string
	for _, l := range lists {
		for _, e := range split(l) {
			out = append(out, expand(e, MaxNames-len(out))...)
		}
	}
	return out
}

// split splits a list at commas and white space outside brackets. An unmatched ']' does not
// open or close anything; an unclosed '[' holds the rest of the list in one expression.
func split(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				if i > start {
					out = append(out, s[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// span is one number or range of a group: lo to hi, written width digits wide.
type span struct {
	lo, hi uint64
	width  int
}

// group is what one bracket group names, with the text that comes before it.
type group struct {
	before string
	spans  []span
	count  int // names in all; MaxNames+1 stands for any more
	width  int // the widest number it writes
}

// expand expands one expression into at most budget names (budget may be 0 or less: then only
// an expression without brackets gives a name). An unreadable one, or one past the bound, is
// itself.
func expand(e string, budget int) []string {
	if !strings.ContainsAny(e, "[]") {
		return []string{e}
	}
	groups, after, ok := parse(e)
	if !ok {
		return []string{e}
	}
	count, length := 1, len(after)
	for _, g := range groups {
		// count*g.count <= budget, asked without the product, which could overflow.
		if g.count == 0 || count > budget/g.count {
			return []string{e}
		}
		count *= g.count
		length += len(g.before) + g.width
	}
	if count > budget || length > MaxNameLen {
		return []string{e}
	}
	out := make([]string, 0, count)
	buf := make([]byte, 0, length)
	var walk func(k int, buf []byte)
	walk = func(k int, buf []byte) {
		if k == len(groups) {
			out = append(out, string(append(buf, after...)))
			return
		}
		g := groups[k]
		buf = append(buf, g.before...)
		for _, s := range g.spans {
			// Counted up to the span's length and ended there, not compared with hi: n <= hi
			// holds for ever where hi is the largest number.
			for i := uint64(0); ; i++ {
				walk(k+1, appendPadded(buf, s.lo+i, s.width))
				if i == s.hi-s.lo {
					break
				}
			}
		}
	}
	walk(0, buf)
	return out
}

// parse reads an expression into its groups and the text after the last; ok is false where it
// does not read as a host list expression.
func parse(e string) (groups []group, after string, ok bool) {
	rest := e
	for {
		open := strings.IndexAny(rest, "[]")
		if open < 0 {
			return groups, rest, len(groups) > 0
		}
		if rest[open] == ']' {
			return nil, "", false
		}
		shut := strings.IndexAny(rest[open+1:], "[]")
		if shut < 0 || rest[open+1+shut] != ']' {
			return nil, "", false
		}
		shut += open + 1
		g := group{before: rest[:open]}
		for _, r := range strings.Split(rest[open+1:shut], ",") {
			s, ok := parseSpan(r)
			if !ok {
				return nil, "", false
			}
			// Past MaxNames the group is past any budget: stop counting before the sum could overflow.
			n := s.hi - s.lo
			if n >= MaxNames || g.count+int(n)+1 > MaxNames {
				g.count = MaxNames + 1
			} else {
				g.count += int(n) + 1
			}
			g.width = max(g.width, s.width, len(strconv.FormatUint(s.hi, 10)))
			g.spans = append(g.spans, s)
		}
		groups = append(groups, g)
		rest = rest[shut+1:]
	}
}

// parseSpan reads "7", "07" or "01-03". Digits only: strconv would take a sign.
func parseSpan(r string) (span, bool) {
	lo, hi, isRange := strings.Cut(r, "-")
	if !isRange {
		hi = lo
	}
	a, ok1 := parseNumber(lo)
	b, ok2 := parseNumber(hi)
	if !ok1 || !ok2 || b < a {
		return span{}, false
	}
	return span{lo: a, hi: b, width: len(lo)}, true
}

func parseNumber(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// appendPadded appends n in decimal, at least width digits wide with leading zeros.
func appendPadded(buf []byte, n uint64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], n, 10)
	for i := len(d); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, d...)
}
