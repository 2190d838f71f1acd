package commands

import (
	"strconv"
	"strings"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// OptionValue is one parameter of a command line as a typed option: its name and its value.
type OptionValue struct {
	Name  string
	Value string
}

// Options reads a typed command line ("/gpu request 2 train for 8h") as the command it runs and
// the value of each parameter it gives, in the table's order: what a platform with typed
// options shows for it. It reads only lines that Spec.Text writes back word for word, with each
// value of its parameter's kind (a number where a number goes, a duration, a lease id), so the
// options run exactly what the line does; false for any other line.
func Options(line string) (*Spec, []OptionValue, bool) {
	f := strings.Fields(line)
	if len(f) == 0 || !strings.EqualFold(f[0], "/gpu") {
		return nil, nil, false
	}
	s, n := match(f[1:])
	if s == nil {
		return nil, nil, false
	}
	var out []OptionValue
	if !s.assign(f[1+n:], 0, &out) {
		return nil, nil, false
	}
	values := map[string]string{}
	for _, o := range out {
		values[o.Name] = o.Value
	}
	if s.Text(values) != strings.Join(append([]string{"/gpu"}, append(s.Words, f[1+n:]...)...), " ") {
		return nil, nil, false
	}
	return s, out, true
}

// assign gives the words w to the parameters from the i-th on, in order, each taking its keyword
// and value as Text writes them, or being left out; it backtracks until every word is taken.
func (s *Spec) assign(w []string, i int, out *[]OptionValue) bool {
	if len(w) == 0 {
		return true
	}
	if i == len(s.Params) {
		return false
	}
	p := s.Params[i]
	try := func(value string, rest []string) bool {
		if !p.fits(value) {
			return false
		}
		*out = append(*out, OptionValue{Name: p.Name, Value: value})
		if s.assign(rest, i+1, out) {
			return true
		}
		*out = (*out)[:len(*out)-1]
		return false
	}
	switch {
	case p.Type == TFlag:
		if w[0] == p.Keyword && try("true", w[1:]) {
			return true
		}
	case strings.HasSuffix(p.Keyword, "=") || strings.HasSuffix(p.Keyword, "+"):
		if v, ok := strings.CutPrefix(w[0], p.Keyword); ok && v != "" && try(v, w[1:]) {
			return true
		}
	default:
		v := w
		if p.Keyword != "" {
			if w[0] != p.Keyword || len(w) < 2 {
				return s.assign(w, i+1, out)
			}
			v = w[1:]
		}
		words := 1
		if p.Type == TWeek && len(v) > 1 && v[1] == "week" { // this week, last week
			words = 2
		}
		if p.Type == TText {
			// Free text runs up to the keyword of a parameter after it, and takes as many
			// words as leave the rest to the others.
			words = len(v)
			for k, x := range v {
				if s.keywordAfter(i, x) {
					words = k
					break
				}
			}
		}
		for k := words; k >= 1; k-- {
			if try(strings.Join(v[:k], " "), v[k:]) {
				return true
			}
		}
	}
	return s.assign(w, i+1, out)
}

// keywordAfter reports whether word is the keyword of a parameter after the i-th.
func (s *Spec) keywordAfter(i int, word string) bool {
	for _, q := range s.Params[i+1:] {
		k := q.Keyword
		if k != "" && (word == k || (strings.HasSuffix(k, "=") || strings.HasSuffix(k, "+")) && strings.HasPrefix(word, k)) {
			return true
		}
	}
	return false
}

// fits reports whether v is a value of p's kind.
func (p Param) fits(v string) bool {
	switch p.Type {
	case TInt:
		n, err := strconv.Atoi(v)
		return err == nil && n >= 1
	case TDuration:
		_, err := policy.ParseDuration(v)
		return err == nil
	case TLease:
		_, err := qm.ParseLeaseID(v)
		return err == nil
	case TText, TWeek:
		return v != ""
	}
	return v != "" && !strings.ContainsAny(v, " =")
}
