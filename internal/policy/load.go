package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong with a policy file, at a line.
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Error lists every problem found in a policy file.
type Error struct {
	Source   string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s has %s:", e.Source, Count(len(e.Problems), "problem", "problems"))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		if p.Line > 0 {
			fmt.Fprintf(&b, "%s:%d: %s", e.Source, p.Line, p.Msg)
		} else {
			fmt.Fprintf(&b, "%s: %s", e.Source, p.Msg)
		}
	}
	return b.String()
}

// MaxFileSize is the most bytes a policy file may have: hundreds of times what a large
// organisation's policy needs, and little enough to load in a moment.
const MaxFileSize = 8 << 20

// TextForm writes a policy's text in the Unicode form names are compared in everywhere else
// (internal/nfc's Name: normal form C, as chat clients and sign-ins give names), so that a name an
// editor wrote decomposed (e and U+0301) is the one typed composed (é). The domain holds no
// Unicode tables; the program that loads the policy gives it (cmd/quartermaster does).
type TextForm func(string) string

// LoadFile reads and validates a policy file, its text first written in form where one is given.
func LoadFile(path string, form ...TextForm) (*Policy, error) {
	b, err := readAtMost(path, MaxFileSize)
	if errors.Is(err, errTooLarge) {
		return nil, &FileError{Path: path, Problem: fmt.Sprintf("is larger than %d MiB, far more than any policy needs", MaxFileSize>>20),
			Fix: "give the path of the policy's YAML file (--policy FILE or QM_POLICY)", Err: err}
	}
	if err != nil {
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &FileError{Path: path, Problem: "does not exist", Fix: "give the path of a policy file (--policy FILE or QM_POLICY)", Err: err}
		case isDir(path):
			return nil, &FileError{Path: path, Problem: "is a directory", Fix: "give the path of the YAML file in it", Err: err}
		case errors.As(err, &pe):
			return nil, &FileError{Path: path, Problem: fmt.Sprintf("cannot be read: %v", pe.Err), Err: err}
		}
		return nil, fmt.Errorf("the policy file %s cannot be read: %w", path, err)
	}
	return Load(b, path, form...)
}

// FileError is a policy file that cannot be read as one: it does not exist, is a directory, is
// too large or may not be read. Its message names the example policy as one that works; a
// caller that has a better example (the command line as typed, put right) builds its own from
// Sentence.
type FileError struct {
	Path string
	// Problem is what is wrong with the file (does not exist), Fix what to give instead; empty
	// where the problem says it.
	Problem, Fix string
	Err          error
}

// ExamplePolicyPath is the policy file, in the repository and the release archive, that works.
const ExamplePolicyPath = "docs/quartermaster.example.yaml"

func (e *FileError) Error() string {
	if e.Fix == "" {
		return e.Sentence() + "; " + ExamplePolicyPath + " is one that works"
	}
	return e.Sentence() + ": " + ExamplePolicyPath + " is one that works"
}

// Sentence is what is wrong with the file and what to give instead, without an example.
func (e *FileError) Sentence() string {
	s := "the policy file " + e.Path + " " + e.Problem
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

func (e *FileError) Unwrap() error { return e.Err }

var errTooLarge = errors.New("larger than the limit")

// readAtMost reads the file at path when it has at most limit bytes, and no more of it than
// that: a device or pipe that never ends (/dev/zero) is read no further than a file too large.
func readAtMost(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, errTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Load parses and validates a policy, its text first written in form where one is given; on
// failure the error is an *Error listing every problem.
func Load(data []byte, source string, form ...TextForm) (*Policy, error) {
	if pr, ok := invalidUTF8(data); ok {
		return nil, &Error{Source: source, Problems: []Problem{pr}}
	}
	for _, f := range form {
		// Line breaks stay where they are, so every problem keeps its line.
		data = []byte(f(string(data)))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{Source: source, Problems: []Problem{parseProblem(data, err)}}
	}
	if len(root.Content) == 0 {
		return nil, &Error{Source: source, Problems: []Problem{{Msg: "the file is empty; start from docs/quartermaster.example.yaml"}}}
	}
	if pr, ok := secondDocument(data); ok {
		return nil, &Error{Source: source, Problems: []Problem{pr}}
	}
	// The decoder's errors are said only where the shape check found nothing (they would repeat
	// it). An unknown key or a value of the wrong kind does not stop the semantic checks: the
	// decoder leaves it out, the rest of the file is read as written, and its other mistakes are
	// named too, but not those that follow from the key or value alone (max_gpus is missing, for
	// Max_GPUs; max_gpus must be at least 1, for max_gpus: two; no classes, for clases:). Any
	// other problem of its shape stops them, as the decoder's errors do.
	problems, follow, readable := shapeAndKeys(&root, data)
	p := &Policy{Source: source}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		var te *yaml.TypeError
		switch {
		case len(problems) > 0 && !errors.As(err, &te):
			readable = false // the decoder stopped part of the way
		case len(problems) > 0:
		case errors.As(err, &te):
			for _, e := range te.Errors {
				problems = append(problems, yamlProblem(e))
			}
		default:
			return nil, &Error{Source: source, Problems: []Problem{yamlProblem(err.Error())}}
		}
	}
	v := &validator{root: root.Content[0], data: data, unreadClasses: slices.Contains(follow, unreadClasses)}
	if len(problems) == 0 || readable {
		// An empty entry in a list stops the semantic checks, as type errors do: every check
		// after this one may rely on each entry being there.
		v.emptyEntries(v.root, "", "")
		if len(v.problems) == 0 {
			v.validate(p)
		}
		v.problems = slices.DeleteFunc(v.problems, func(pr Problem) bool {
			return slices.ContainsFunc(follow, func(u meantKey) bool { return u.follows(pr) })
		})
	}
	problems = append(problems, v.problems...)
	shownProblems(problems)
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
		return nil, &Error{Source: source, Problems: problems}
	}
	return p, nil
}

// maxShownWord is the most characters of one word (a run without spaces) a problem shows: far
// more than a name, a path or an expression the policy may hold, and little enough that a value of
// 100,000 characters, quoted in a problem, does not fill the screen.
const maxShownWord = 120

// shownProblems makes each problem's message show what it quotes: a character that does not show
// or that changes how the text around it shows (a right-to-left override, a zero-width joiner, a
// control character) is written as its escape (\u202e), and a word longer than maxShownWord is
// clipped, so a name that is no name reads as it is written and the problem stays short.
func shownProblems(ps []Problem) {
	for i := range ps {
		ps[i].Msg = shownText(ps[i].Msg)
	}
}

func shownText(s string) string {
	var b strings.Builder
	run := 0
	for _, r := range strings.ToValidUTF8(s, "\ufffd") {
		if r == ' ' || r == '\n' {
			run = 0
			b.WriteRune(r)
			continue
		}
		run++
		switch {
		case run == maxShownWord+1:
			b.WriteString("…")
			continue
		case run > maxShownWord:
			continue
		}
		if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// exampleName is name where it is a valid class or team name, else the valid name closest to it,
// else fallback: what an example that names the class or team may show, so that it would pass.
func exampleName(name, fallback string) string {
	if nameRE.MatchString(name) {
		return name
	}
	if s := suggestedName(name); s != "" {
		return s
	}
	return fallback
}

// secondDocument finds a YAML document after the first one that holds something: the policy is
// read from the first document only, so whatever a "---" starts after it would be ignored.
func secondDocument(data []byte) (Problem, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first yaml.Node
	if err := dec.Decode(&first); err != nil {
		return Problem{}, false
	}
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			return Problem{}, false
		}
		if err != nil {
			return yamlProblem(err.Error()), true
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].ShortTag() == "!!null" {
			continue // a "---" with nothing after it
		}
		return Problem{Line: doc.Line, Msg: "a second YAML document starts here, and a policy is one document: what follows would be ignored; remove the --- line"}, true
	}
}

var (
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	unmarshalRE    = regexp.MustCompile(`^cannot unmarshal !!\w+(?: ` + "`" + `(.*)` + "`" + `)? into (\S+)$`)
	definedRE      = regexp.MustCompile(`^mapping key "(.*)" already defined at line (\d+)$`)
	goTypeWords    = map[string]string{"int": "a whole number", "float64": "a number", "bool": "true or false", "string": "text"}
)

// decoderWords says a decoder error that the shape check did not catch first (one reached
// through an alias, say) in the policy's words rather than Go's.
func decoderWords(msg string) string {
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
		return "no key " + m[1] + " is known here"
	}
	if m := definedRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s is written twice (first at line %s); keep one", m[1], m[2])
	}
	if m := unmarshalRE.FindStringSubmatch(msg); m != nil {
		want, ok := goTypeWords[m[2]]
		switch {
		case ok:
		case strings.HasPrefix(m[2], "[]"):
			want = "a list"
		default:
			want = "a map"
		}
		what := "this value"
		if m[1] != "" {
			what = strconv.Quote(m[1])
		}
		return fmt.Sprintf("%s must be %s here", what, want)
	}
	return strings.ReplaceAll(msg, "policy.", "")
}

// parseProblem is a YAML syntax error as a problem at the line that causes it. yaml.v3 reports
// an error of its parser at the start of the block it was reading (line 8, classes:, for a key
// at line 17 indented as no line above it), so the line is found again as the end of the first
// part of the file that fails the same way; a line indented as nothing above it, or further than
// a line with its value, is said so.
func parseProblem(data []byte, err error) Problem {
	pr := yamlProblem(err.Error())
	if pr.Line == 0 || bytes.Count(data, []byte("\n")) > 2000 {
		return pr
	}
	lines := strings.SplitAfter(string(data), "\n")
	end := 0
	for k := 1; k <= len(lines); k++ {
		end += len(lines[k-1])
		if k < pr.Line {
			continue // the cause is never above the line reported
		}
		var n yaml.Node
		if e := yaml.Unmarshal(data[:end], &n); e == nil || yamlProblem(e.Error()).Msg != pr.Msg {
			continue
		}
		pr.Line = k
		if msg := indentSlip(lines, k); msg != "" {
			pr.Msg = msg
		}
		break
	}
	// A tab in the indentation is invisible in most editors, and the parser's words for it do
	// not say "tab" ("found character that cannot start any token").
	if pr.Line <= len(lines) {
		line := lines[pr.Line-1]
		if indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]; strings.Contains(indent, "\t") {
			pr.Msg = "this line is indented with a tab, which YAML does not allow; indent with spaces only"
		}
	}
	return pr
}

// indentSlip says what is wrong with line k: a value holding ": ", an indentation that lines up
// with no line above it, or one further in than a line that has its value already; or nothing.
func indentSlip(lines []string, k int) string {
	line := lines[k-1]
	if m := colonInValueRE.FindStringSubmatch(line); m != nil {
		return fmt.Sprintf("the value of %s holds \": \", which YAML reads as another key; put it in quotes: %s: %q", m[1], m[1], strings.TrimSpace(m[2]))
	}
	at, dash, ok := indentOf(line)
	if !ok {
		return ""
	}
	// The lines line k may line up with: the line above, then each line further up that is
	// further out than all below it. A "- key: value" line lines up with another "- " at its
	// own indentation, and with a key at its key's.
	var levels []indentLevel
	for i := k - 1; i >= 1; i-- {
		in, d, ok := indentOf(lines[i-1])
		if ok && (len(levels) == 0 || in < levels[len(levels)-1].indent) {
			levels = append(levels, indentLevel{i, in, d})
		}
	}
	if len(levels) == 0 {
		return ""
	}
	spaces := func(n int) string { return Count(n, "space", "spaces") }
	prev := levels[0]
	if dash {
		if msg, ok := entrySlip(lines, k, at, levels); ok {
			return msg
		}
	}
	if inner := prev.indent; at > inner {
		if prev.dash {
			inner += 2
		}
		if at > inner && hasValueRE.MatchString(lines[prev.line-1]) {
			return fmt.Sprintf("this line is indented %s, more than line %d (%d), which has its value already; indent it as line %d", spaces(at), prev.line, inner, prev.line)
		}
		return ""
	}
	for _, l := range levels {
		if l.indent == at && (dash || !l.dash) || l.dash && !dash && l.indent+2 == at {
			return ""
		}
	}
	var near []string
	for i, l := range levels[:min(2, len(levels))] {
		switch {
		case l.dash:
			near = append(near, fmt.Sprintf("line %d's entry is at %d, its keys at %d", l.line, l.indent, l.indent+2))
		case i == 0:
			near = append(near, fmt.Sprintf("line %d is at %d", l.line, l.indent))
		default:
			near = append(near, fmt.Sprintf("line %d at %d", l.line, l.indent))
		}
	}
	return fmt.Sprintf("this line is indented %s, which matches no block above it (%s); indent it as the keys it belongs with", spaces(at), strings.Join(near, "; "))
}

// indentLevel is a line that a line below may line up with: its number, its indentation and
// whether it starts a list entry.
type indentLevel struct {
	line, indent int
	dash         bool
}

// entrySlip says what is wrong with list entry ("- ") lines[k-1], at indentation at, below the
// given levels (as indentSlip finds them): what YAML expected at its indentation and the entry
// rewritten as the entry above of its list is. It is "" when the entry lines up with an entry
// above, or starts a list under a key; ok is false where no entry above shows where it goes.
func entrySlip(lines []string, k, at int, levels []indentLevel) (msg string, ok bool) {
	line := strings.TrimSpace(lines[k-1])
	prev := levels[0]
	prevHasValue := hasValueRE.MatchString(lines[prev.line-1])
	var expected string
	if at > prev.indent {
		if !prevHasValue {
			return "", true // a list under its key, or under an entry's key
		}
		expected = fmt.Sprintf("nothing further in than line %d, which has its value already", prev.line)
	} else {
		for _, l := range levels {
			if l.indent == at && l.dash {
				return "", true
			}
		}
		if !prev.dash && prev.indent == at && !prevHasValue {
			return "", true // key:\n- entry, a list at its key's indentation
		}
		for _, l := range levels {
			if l.indent == at && !l.dash {
				if m := keyRE.FindStringSubmatch(lines[l.line-1]); m != nil {
					expected = fmt.Sprintf("a key lined up with %s: (line %d), not a list entry", m[1], l.line)
				}
				break
			}
		}
		if expected == "" {
			var near []string
			for _, l := range levels[:min(2, len(levels))] {
				if l.dash {
					near = append(near, fmt.Sprintf("line %d's entry at %d, its keys at %d", l.line, l.indent, l.indent+2))
				} else {
					near = append(near, fmt.Sprintf("line %d at %d", l.line, l.indent))
				}
			}
			expected = fmt.Sprintf("a line lined up with a block above it (%s)", strings.Join(near, "; "))
		}
	}
	// The list it belongs to: the nearest entry above, or one further out whose entry starts
	// with the same key (a team after a team's list of groups goes with the teams).
	key := ""
	if m := keyRE.FindStringSubmatch(line); m != nil {
		key = m[1]
	}
	var target *indentLevel
	for i, l := range levels {
		if !l.dash || l.indent == at {
			continue
		}
		if target == nil {
			target = &levels[i]
		}
		if m := keyRE.FindStringSubmatch(lines[l.line-1]); key != "" && m != nil && m[1] == key {
			target = &levels[i]
			break
		}
	}
	if target == nil {
		return "", false
	}
	where := Count(target.indent, "space", "spaces")
	if key != "" {
		where += fmt.Sprintf(", its keys at %d", target.indent+2)
	}
	return fmt.Sprintf("this list entry is indented %s, where YAML expected %s; indent it as the entry at line %d (%s): %q",
		Count(at, "space", "spaces"), expected, target.line, where, strings.Repeat(" ", target.indent)+line), true
}

// indentOf is a line's indentation in spaces and whether it starts a list entry ("- "); ok is
// false for a blank line, a comment, or one indented with a tab.
func indentOf(l string) (int, bool, bool) {
	t := strings.TrimLeft(l, " ")
	if s := strings.TrimSpace(t); s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(t, "\t") {
		return 0, false, false
	}
	return len(l) - len(t), strings.HasPrefix(t, "- "), true
}

var (
	// hasValueRE is a line with a key and its value: "max_duration: 8h", "- name: train".
	hasValueRE = regexp.MustCompile(`^\s*(?:- )?[^\s#:][^:#]*:\s+[^\s#]`)
	// keyRE is the key a line starts with: "why" of "    why: ...", "name" of "- name: train".
	keyRE = regexp.MustCompile(`^\s*(?:- )?([^\s#:{\[\-"'][^:#]*?):(?:\s|$)`)
	// colonInValueRE is a key whose plain value holds ": " (why: Note: this).
	colonInValueRE = regexp.MustCompile(`^\s*(?:- )?([A-Za-z_][A-Za-z0-9_]*):\s+([^\s"'{\[&*!|>#][^#]*?:\s.*?)\s*$`)
)

func yamlProblem(s string) Problem {
	s = strings.TrimPrefix(s, "yaml: ")
	if m := lineRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Problem{Line: n, Msg: decoderWords(m[2])}
	}
	return Problem{Msg: s}
}

// UnmarshalYAML reads a duration and reports a bad one with its line.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) == "0" {
		// A bare 0 needs no unit: idle_timeout: 0 turns idle reclaim off, as documented.
		d.Duration = 0
		return nil
	}
	v, err := ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration; write e.g. 30m, 8h or 2d", n.Line, n.Value)}}
	}
	d.Duration = v
	return nil
}

type validator struct {
	root     *yaml.Node
	data     []byte // the file, for the place of a mistake inside a value (scalarPos)
	problems []Problem
	warnings []Problem // found while validating; validate adds them to the policy's
	// renamed are the names to write for classes refused for their names (fer for "fér"): the
	// quotas and node groups that name them so are right once the class is renamed as told.
	renamed map[string]bool
	// unreadClasses is set where the file's classes could not be read (clases:, or classes: not a
	// list): no class is refused as missing from the catalog, nor are there said to be none.
	unreadClasses bool
}

// follows reports whether pr follows from the problem u stands for: it is a problem of u's object
// (class train: …, team vision has …, approvals.timeout …, exception rule "big" …) that names u's
// key, or any problem of it where u has no key.
func (u meantKey) follows(pr Problem) bool {
	owners := []string{u.owner}
	for _, kind := range objectKinds {
		if name, ok := strings.CutPrefix(u.owner, kind+" "); ok {
			owners = append(owners, kind+" "+strconv.Quote(name))
		}
	}
	for _, o := range owners {
		rest, ok := strings.CutPrefix(pr.Msg, o)
		if !ok {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			continue // class train-2 is not class train
		}
		return u.key == "" || strings.Contains(rest, u.key)
	}
	return false
}

// line finds the line of a dotted path such as "classes.1.max_gpus", falling back to the nearest parent.
func (v *validator) line(path string) int {
	line, _ := v.find(path)
	return line
}

// written reports whether the file gives the dotted path a value (not null: max_duration: ~ is
// not written).
func (v *validator) written(path string) bool {
	_, n := v.find(path)
	return n != nil && !(n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// find is the line of a dotted path, as line gives it, and its value's node, or nil where the
// file does not write the path.
func (v *validator) find(path string) (int, *yaml.Node) {
	n := v.root
	best := n.Line
	if path == "" {
		return best, n
	}
	for _, part := range strings.Split(path, ".") {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					best = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				best = next.Line
			}
		}
		if next == nil {
			return best, nil
		}
		n = next
	}
	return best, n
}

// scalarPos finds where the file writes the character at position off (in characters) of the
// text value at path: its line and its column (both from 1, the column in characters). Reading
// a value changes only its white space (indentation goes, and the line breaks of a plain or
// folded value read as spaces), so the value's other characters are the file's, in order; ok is
// false where they are not (an escape in a quoted value) or the path writes no text.
func (v *validator) scalarPos(path string, off int) (line, col int, ok bool) {
	_, n := v.find(path)
	if n == nil || n.Kind != yaml.ScalarNode || n.Line < 1 || n.Column < 1 {
		return 0, 0, false
	}
	value := []rune(n.Value)
	if off < 0 || off > len(value) {
		return 0, 0, false
	}
	// The character is the k-th of the value other than white space (from 0); one that is white
	// space, with nothing but white space after it (the end of the text), is just after the last.
	var nonSpace []rune
	k := -1
	for i, r := range value {
		if unicode.IsSpace(r) {
			continue
		}
		if i >= off && k < 0 {
			k = len(nonSpace)
		}
		nonSpace = append(nonSpace, r)
	}
	after := 0
	if k < 0 {
		k, after = len(nonSpace)-1, 1
	}
	if k < 0 {
		return 0, 0, false
	}
	want := nonSpace[k]
	lines := strings.Split(string(v.data), "\n")
	li, ci := n.Line-1, n.Column-1
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		li, ci = li+1, 0 // the value starts on the line after its | or >
	case n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0:
		ci++ // after the quote
	}
	for ; li < len(lines); li, ci = li+1, 0 {
		rs := []rune(lines[li])
		for ; ci < len(rs); ci++ {
			if unicode.IsSpace(rs[ci]) {
				continue
			}
			if rs[ci] == '\\' && n.Style&yaml.DoubleQuotedStyle != 0 {
				return 0, 0, false // an escape: the value's characters are not the file's
			}
			at := ci
			if rs[ci] == '\'' && n.Style&yaml.SingleQuotedStyle != 0 && ci+1 < len(rs) && rs[ci+1] == '\'' {
				ci++ // '' is one ' of the value
			}
			if k > 0 {
				k--
				continue
			}
			if rs[ci] != want {
				return 0, 0, false
			}
			return li + 1, at + 1 + after, true
		}
	}
	return 0, 0, false
}

// commentedChannel is the channel a key at the dotted path was meant to hold where the file
// writes it without quotes (channel: #vision-gpu): YAML reads it as a comment, and the key as
// empty. It is "" where the key has a value, or a comment that is one (channel: # none yet).
func (v *validator) commentedChannel(path string) string {
	parent, key := "", path
	if i := strings.LastIndex(path, "."); i >= 0 {
		parent, key = path[:i], path[i+1:]
	}
	_, n := v.find(parent)
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Value != key || val.Kind != yaml.ScalarNode || val.ShortTag() != "!!null" || val.Value != "" {
			continue
		}
		c := strings.TrimPrefix(k.LineComment, "#")
		if c == k.LineComment || c == "" || c[0] == ' ' || c[0] == '\t' {
			return ""
		}
		return "#" + strings.Fields(c)[0]
	}
	return ""
}

// commentedKeyRE is a line of discord.channels whose key, a channel, is written without quotes
// (#optics-gpu: "1180000000000000001"), which YAML reads as a comment.
var commentedKeyRE = regexp.MustCompile(`^#([^\s#:"']+):\s+("[0-9]+"|'[0-9]+'|[0-9]+)(\s+#.*)?\s*$`)

// commentedChannelKeys refuses each channel of discord.channels, in block style, that is written
// without quotes: the line starts with #, so YAML reads it as a comment and the policy would have
// no Discord channel for it.
func (v *validator) commentedChannelKeys() {
	_, d := v.find("discord")
	if d == nil || d.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(d.Content); i += 2 {
		key, val := d.Content[i], d.Content[i+1]
		if key.Value != "channels" || val.Style&yaml.FlowStyle != 0 {
			continue
		}
		lines := strings.Split(string(v.data), "\n")
		for li := key.Line; li < len(lines); li++ { // the lines after the key's
			l := strings.TrimRight(lines[li], "\r")
			t := strings.TrimLeft(l, " ")
			if strings.TrimSpace(t) == "" {
				continue
			}
			if len(l)-len(t) <= key.Column-1 {
				break // the map ends
			}
			if m := commentedKeyRE.FindStringSubmatch(t); m != nil {
				v.problems = append(v.problems, Problem{Line: li + 1, Msg: fmt.Sprintf("discord.channels: #%s must be in quotes, as YAML reads a line that starts with # as a comment; e.g. \"#%s\": %q", m[1], m[1], strings.Trim(m[2], `"'`))})
			}
		}
	}
}

// unquotedChannel refuses a channel at path written without quotes, in words that name it
// (label: "team vision: channel").
func (v *validator) unquotedChannel(path, label string) bool {
	ch := v.commentedChannel(path)
	if ch == "" {
		return false
	}
	key := path[strings.LastIndex(path, ".")+1:]
	v.addf(path, "%s %s must be in quotes, as YAML reads what follows \" #\" as a comment; e.g. %s: %q", label, ch, key, ch)
	return true
}

// text is the value of a dotted path as the file writes it (-0.90, .nan), for a refusal to quote.
func (v *validator) text(path string) string {
	if _, n := v.find(path); n != nil {
		return n.Value
	}
	return ""
}

// MaxPrice is the highest price per GPU-hour a class may have, in any currency: at it, the cost of
// the largest lease for ten years, and a year of showback, are still written as numbers.
const MaxPrice = 1e9

// nonNegative reports whether f is a number (not NaN, not infinite) of at least 0.
func nonNegative(f float64) bool { return f >= 0 && !math.IsInf(f, 1) }

func (v *validator) addf(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Line: v.line(path), Msg: fmt.Sprintf(format, args...)})
}

// nameRE is a class or team name. It is a Kubernetes label value on every object of its leases
// (quartermaster.io/team, quartermaster.io/class), so it ends with a letter or digit.
var nameRE = regexp.MustCompile(`^[a-z]([a-z0-9_-]{0,38}[a-z0-9])?$`)

// How the backends write a class's mapping: policy check refuses, and internal/templates renders,
// only these (IsSlurmWord, IsGRES, IsLabelKey, IsLabelValue, IsResourceName).
var (
	slurmWordRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	gresRE      = regexp.MustCompile(`^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)?$`)
	gresCountRE = regexp.MustCompile(`^([A-Za-z0-9_]+(:[A-Za-z0-9_.-]*[A-Za-z_.-][A-Za-z0-9_.-]*)?):[0-9]+$`)
	labelKeyRE  = regexp.MustCompile(`^([a-z0-9]([a-z0-9.-]*[a-z0-9])?/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
	labelValRE  = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$`)
	resourceRE  = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?/[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
)

// IsSlurmWord reports whether s is one Slurm partition or account name.
func IsSlurmWord(s string) bool { return slurmWordRE.MatchString(s) }

// IsGRES reports whether s is a GRES name and type as Slurm writes it ("gpu", "gpu:h100").
func IsGRES(s string) bool { return gresRE.MatchString(s) }

// IsLabelKey reports whether s is a Kubernetes label key (an optional DNS prefix and a name).
func IsLabelKey(s string) bool { return len(s) <= 316 && labelKeyRE.MatchString(s) }

// IsLabelValue reports whether s is a Kubernetes label value (empty included).
func IsLabelValue(s string) bool { return labelValRE.MatchString(s) }

// IsResourceName reports whether s is a Kubernetes extended resource name (nvidia.com/gpu).
func IsResourceName(s string) bool { return resourceRE.MatchString(s) }

// How the backends write a team's storage grant: policy check refuses, and internal/templates
// renders, only these (IsStoragePath, IsPVCName).
var (
	storagePathRE = regexp.MustCompile(`^/[A-Za-z0-9._/+-]*$`)
	pvcRE         = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
)

// IsStoragePath reports whether s is a storage path a job script and a mount can carry as it
// is: absolute, of letters, digits and . _ - + / only (a space would break #SBATCH --output, a
// colon a container's bind mount).
func IsStoragePath(s string) bool { return storagePathRE.MatchString(s) }

// IsPVCName reports whether s can name a Kubernetes PersistentVolumeClaim (a DNS subdomain).
func IsPVCName(s string) bool { return len(s) <= 253 && pvcRE.MatchString(s) }

// mapping checks how a class maps to Slurm and Kubernetes, as far as a job script and a manifest
// can carry it: one partition, a GRES name and type, node selector labels, a resource name. A
// GRES written with a count, as slurm.conf writes a node's (gpu:h100:8), reads as the GRES without
// it, with a warning: each lease asks for its own GPUs.
func (v *validator) mapping(c *Class, at func(string) string) {
	if s := c.Slurm.Partition; s != "" && !IsSlurmWord(s) {
		v.addf(at("slurm.partition"), "class %s: slurm.partition %q is not one partition name (letters, digits, _ . -); e.g. partition: %s", c.Name, clipName(s, 40), exampleName(c.Name, "gpu"))
	}
	if g := c.Slurm.GRES; g != "" {
		if m := gresCountRE.FindStringSubmatch(g); m != nil {
			v.warnings = append(v.warnings, Problem{Line: v.line(at("slurm.gres")),
				Msg: fmt.Sprintf("class %s: slurm.gres %q ends in a count, which Quartermaster does not use: each lease asks for its own GPUs (--gres=%s:N); it reads as gres: %q", c.Name, g, m[1], m[1])})
			c.Slurm.GRES = m[1]
		} else if !IsGRES(g) {
			v.addf(at("slurm.gres"), "class %s: slurm.gres %q is not a GRES as Slurm writes it; write its name and type, e.g. gres: \"gpu:h100\" (or \"gpu\" for any type)", c.Name, clipName(g, 40))
		}
	}
	if r := c.Kubernetes.Resource; r != "" && !IsResourceName(r) {
		v.addf(at("kubernetes.resource"), "class %s: kubernetes.resource %q is not a resource name; e.g. resource: nvidia.com/gpu", c.Name, clipName(r, 60))
	}
	keys := make([]string, 0, len(c.Kubernetes.NodeSelector))
	for k := range c.Kubernetes.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if val := c.Kubernetes.NodeSelector[k]; !IsLabelKey(k) || !IsLabelValue(val) {
			key := k
			if !IsLabelKey(k) {
				key = fmt.Sprintf("%q", clipName(k, 60))
			}
			v.addf(at("kubernetes.node_selector"), "class %s: kubernetes.node_selector %s: %q is not a Kubernetes label; e.g. node_selector: {gpu.acme/class: %s}", c.Name, key, clipName(val, 60), exampleName(c.Name, "gpu"))
		}
	}
	for i, t := range c.Kubernetes.Tolerations {
		if msg := TolerationProblem(t); msg != "" {
			v.addf(at(fmt.Sprintf("kubernetes.tolerations.%d", i)), "class %s: kubernetes.tolerations: %s", c.Name, msg)
		}
	}
}

// TolerationProblem says what makes t a toleration Kubernetes does not take, with an example
// that works; "" when it takes it. Policy check refuses, and internal/templates renders, only
// tolerations it takes.
func TolerationProblem(t Toleration) string {
	const eg = "; e.g. tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]"
	switch {
	case t.Key == "" && t.Operator != "Exists":
		return "a toleration without a key must be operator: Exists (it tolerates every taint)" + eg
	case t.Key != "" && !IsLabelKey(t.Key):
		return fmt.Sprintf("key %q is not a Kubernetes taint key", clipName(t.Key, 60)) + eg
	case t.Operator != "" && t.Operator != "Equal" && t.Operator != "Exists":
		return fmt.Sprintf("operator %q must be Equal or Exists", clipName(t.Operator, 20)) + eg
	case t.Operator == "Exists" && t.Value != "":
		return fmt.Sprintf("operator Exists takes no value (%s); e.g. tolerations: [{key: %s, operator: Exists}]", clipName(t.Value, 60), t.Key)
	case !IsLabelValue(t.Value):
		return fmt.Sprintf("value %q is not a Kubernetes label value", clipName(t.Value, 60)) + eg
	case t.Effect != "" && t.Effect != "NoSchedule" && t.Effect != "PreferNoSchedule" && t.Effect != "NoExecute":
		return fmt.Sprintf("effect %q must be NoSchedule, PreferNoSchedule or NoExecute (or none, for all three)", clipName(t.Effect, 20)) + eg
	}
	return ""
}

// RequestWords are the words that /gpu request and /gpu quota request read as something other
// than a class, with what they do there. A class named by one could not be asked for by name (a
// request for "1 exclusive" is a reservation of the first class, in Slack as in Discord's class
// option), so no class may be.
var RequestWords = map[string]string{
	"for":         "a duration follows it",
	"duration":    "a duration follows it",
	"template":    "a template follows it",
	"team":        "a team follows it",
	"data":        "a data class follows it",
	"exclusive":   "it asks for whole nodes",
	"reservation": "it asks for whole nodes",
	"because":     "a quota request's reason follows it",
}

// DataWord reports whether w is one of RequestWords that /gpu request and /gpu submit read as
// their own after "data" (data for 2h has left its data class out), with what it does there. No
// data class may be one.
func DataWord(w string) (string, bool) {
	meaning, ok := RequestWords[w]
	return meaning, ok && w != "because" // a request has no reason; only a quota request does
}

// TeamWords are the words that the /gpu commands read as something other than a team where a
// team is named, with what they do there. Most keywords are read right after "team" (team for,
// team data), so only these are: /gpu quota request's reason starts at its first "because", and
// /gpu quota request is the quota request command. No team may be named by one.
var TeamWords = map[string]string{
	"because": "in /gpu quota request the reason follows it",
	"request": "/gpu quota request asks for more quota instead of showing the team's",
}

// dataClassExample is a data class as a request would name it, for a refusal of dc, one of the
// team's data classes: the name dc could be written as, else another of the team's that is valid,
// else public (what a team without data classes is cleared for).
func dataClassExample(dc string, teams []string) string {
	if s := suggestedName(dc); s != "" && ValidDataClass(s) {
		return s
	}
	for _, o := range teams {
		if o := strings.ToLower(strings.TrimSpace(o)); ValidDataClass(o) {
			return o
		}
	}
	return "public"
}

// nameSuggestion is "; write \"x\"" for the valid name closest to name (lower case, other
// characters as -), or nothing when there is none.
func nameSuggestion(name string) string {
	if s := suggestedName(name); s != "" {
		return fmt.Sprintf("; write %q", s)
	}
	return ""
}

// suggestedName is the valid name closest to name (lower case, accented letters without their
// accents, other characters as -: a run of them with the hyphens beside it as one, so "R & D" is
// r-d and "Søk-&-Analyse" sok-analyse), or "" when there is none or name is it already.
func suggestedName(name string) string {
	var b strings.Builder
	run, signs := 0, false // the hyphens typed in the run of hyphens and signs before, and whether it held a sign
	flush := func() {
		switch {
		case signs:
			b.WriteByte('-')
		case run > 0:
			b.WriteString(strings.Repeat("-", run))
		}
		run, signs = 0, false
	}
	for _, r := range FoldAccents(strings.ToLower(strings.TrimSpace(name))) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			flush()
			b.WriteRune(r)
		case r == '-':
			run++
		default:
			signs = true
		}
	}
	flush()
	s := strings.Trim(b.String(), "-_")
	if !nameRE.MatchString(s) || s == name {
		return ""
	}
	return s
}

// oneWord refuses a chat channel with a space or a line break in it, such as one that a quote
// left open has run on into the lines after it: "\"#x y\" must be one word, such as \"#eg\"".
func oneWord(channel, eg string) string {
	if !strings.ContainsAny(channel, " \t\r\n") {
		return ""
	}
	msg := fmt.Sprintf("%q must be one word, such as %q", clipName(channel, 24), eg)
	if strings.Contains(channel, ": ") {
		msg += "; a quote left open runs on into the lines after it"
	}
	return msg
}

// dataClassRE is a data class as a request names it (data internal), in lower case.
var dataClassRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,39}$`)

// ValidDataClass reports whether s, in lower case, is written as a data class can be: one word of
// letters, digits, -, _ or ., at most 40 characters.
func ValidDataClass(s string) bool { return dataClassRE.MatchString(s) }

// oneOf says that a value must be one of words: "shared or exclusive, not \"x\"", with "in lower
// case" where the value is one of them in other case.
func oneOf(value string, words ...string) string {
	list := JoinList(words, "or")
	if slices.Contains(words, strings.ToLower(strings.TrimSpace(value))) {
		list += ", in lower case"
	}
	return fmt.Sprintf("%s, not %q", list, clipName(value, 40))
}

// lowerOr is value in lower case where that is one of words (the value that was meant), else eg.
func lowerOr(value, eg string, words ...string) string {
	if lc := strings.ToLower(strings.TrimSpace(value)); slices.Contains(words, lc) {
		return lc
	}
	return eg
}

// renameExample is the tail of a refusal of a name defined twice: keep one, or a name of its own.
func renameExample(name string) string {
	eg := strings.ToLower(name)
	if len(eg) > 38 {
		eg = strings.TrimRight(eg[:38], "-_")
	}
	return "; keep one, or give this one a name of its own, e.g. name: " + eg + "-2"
}

// simRange refuses a whole number of a sim node group (count, gpus) that is not from 1 to most,
// or not written; eg is one that works. It reports whether the number is in range.
func (v *validator) simRange(at, group, field string, n, most, eg int) bool {
	switch {
	case !v.written(at):
		v.addf(at, "sim node group %s: %s is missing; e.g. %s: %d", group, field, field, eg)
	case n < 1 || n > most:
		v.addf(at, "sim node group %s: %s must be from 1 to %d, not %s; e.g. %s: %d", group, field, most, strings.TrimSpace(v.text(at)), field, eg)
	default:
		return true
	}
	return false
}

// nearestDivisors is the example for nvlink_islands n that does not divide gpus: the divisors of
// gpus nearest to n, below and above it ("nvlink_islands: 2 or nvlink_islands: 4").
func nearestDivisors(gpus, n int) string {
	var out []string
	for d := n - 1; d >= 1; d-- {
		if gpus%d == 0 {
			out = append(out, fmt.Sprintf("nvlink_islands: %d", d))
			break
		}
	}
	for d := n + 1; d <= gpus; d++ {
		if gpus%d == 0 {
			out = append(out, fmt.Sprintf("nvlink_islands: %d", d))
			break
		}
	}
	return strings.Join(out, " or ")
}

// directoryExample is the tail of a refusal of a directory entry whose user is no email address:
// the user at the domain of the other entries, with their groups.
func directoryExample(p *Policy, id *Identity) string {
	domain := "example.com"
	for _, o := range p.Directory {
		if o != nil {
			if _, d, ok := strings.Cut(o.User, "@"); ok && d != "" {
				domain = d
				break
			}
		}
	}
	if id == nil || strings.TrimSpace(id.User) == "" {
		return fmt.Sprintf("; e.g. {user: alice@%s, groups: [GROUP]}", domain)
	}
	user := strings.ToLower(strings.Join(strings.Fields(id.User), "."))
	groups := "GROUP"
	if len(id.Groups) > 0 {
		groups = strings.Join(id.Groups, ", ")
	}
	return fmt.Sprintf(", not %q; e.g. {user: %s@%s, groups: [%s]}", clipName(id.User, 40), user, domain, groups)
}

// simNameRE is the name of a group of simulated nodes: its nodes are named NAME-01, NAME-02, ….
// simDefaultGPUs is the GPUs of each node of a simulated cluster the policy does not describe.
const simDefaultGPUs = 8

// SimulateUnlistedNodes gives a policy that describes no simulated nodes (backend sim with no
// sim: section, as the product's own example is written, or a policy of another backend run with
// --backend sim) a simulated cluster: for each class, nodes of simDefaultGPUs GPUs named after
// it, two or as many as its max_gpus takes. It returns the warning that says so and how to
// describe the cluster instead; "" where the policy has nodes already, or no classes.
func (p *Policy) SimulateUnlistedNodes() string {
	if len(p.Sim.Nodes) > 0 {
		return ""
	}
	var made []string
	for i, c := range p.Classes {
		if c == nil {
			continue
		}
		name := strings.ToLower(c.Name)
		if !simNameRE.MatchString(name) {
			name = fmt.Sprintf("sim%d", i+1)
		}
		count := min(max(2, (c.MaxGPUs+simDefaultGPUs-1)/simDefaultGPUs), 1000)
		p.Sim.Nodes = append(p.Sim.Nodes, &SimNodeGroup{Name: name, Count: count, Class: c.Name, GPUs: simDefaultGPUs, NVLinkIslands: 1})
		made = append(made, fmt.Sprintf("%s-01…%02d", name, count))
	}
	if len(made) == 0 {
		return ""
	}
	g := p.Sim.Nodes[0]
	return fmt.Sprintf("backend sim with no sim: section, so the simulated cluster has nodes of %d GPUs for each class, as many as its max_gpus takes and at least two: %s; describe the cluster under sim: to choose them, e.g. sim: {nodes: [{name: %s, count: %d, class: %s, gpus: %d}]}",
		simDefaultGPUs, SomeNames(made, 4, "and"), g.Name, g.Count, g.Class, simDefaultGPUs)
}

var simNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// clipName is a name as a problem quotes it: at most n characters, then an ellipsis.
func clipName(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// tzAbbreviationRE is a time zone database name that is an abbreviation (EST, CET, PST8PDT)
// rather than a place: EST keeps UTC-5 in summer too, an hour off New York's clock, and what such
// a name means has changed between versions of the database.
var tzAbbreviationRE = regexp.MustCompile(`^[A-Z]{3,4}([0-9][A-Z]{3})?$`)

// tzPlaces is a place whose clock an abbreviation is usually meant for.
var tzPlaces = map[string]string{
	"EST": "America/New_York", "EST5EDT": "America/New_York", "CST6CDT": "America/Chicago",
	"MST": "America/Denver", "MST7MDT": "America/Denver", "PST8PDT": "America/Los_Angeles",
	"HST": "Pacific/Honolulu", "CET": "Europe/Berlin", "MET": "Europe/Berlin", "EET": "Europe/Athens",
	"WET": "Europe/Lisbon", "PRC": "Asia/Shanghai", "ROC": "Asia/Taipei", "ROK": "Asia/Seoul",
}

// snowflakeRE is a Discord id: a decimal number of up to 20 digits.
var snowflakeRE = regexp.MustCompile(`^[1-9][0-9]{0,19}$`)

func (v *validator) validate(p *Policy) {
	if strings.TrimSpace(p.Organization) == "" {
		v.addf("organization", "organization is missing; e.g. organization: Acme AI")
	}
	if p.Currency == "" {
		p.Currency = "USD"
	}
	if c := strings.ToUpper(strings.TrimSpace(p.Currency)); IsCurrency(c) {
		p.Currency = c
	} else {
		v.addf("currency", "currency %q is not an ISO 4217 currency code (three letters, such as USD, EUR or JPY); e.g. currency: EUR", p.Currency)
	}
	if p.Timezone == "" {
		p.Timezone = "UTC"
	}
	loc, err := time.LoadLocation(p.Timezone)
	switch {
	case err != nil:
		if meant := timezoneMeant(p.Timezone); meant != "" && meant != p.Timezone {
			if _, err := time.LoadLocation(meant); err == nil {
				v.addf("timezone", "timezone %q is unknown; did you mean %s? e.g. timezone: %s", p.Timezone, meant, meant)
				loc = time.UTC
				break
			}
		}
		v.addf("timezone", "timezone %q is unknown; use an IANA name such as America/Chicago", p.Timezone)
		loc = time.UTC
	case p.Timezone == "Local":
		v.addf("timezone", "timezone %q is the clock of whichever host runs Quartermaster, which differs from host to host; write the IANA name of a place, e.g. timezone: America/Chicago", p.Timezone)
	case tzAbbreviationRE.MatchString(p.Timezone) && p.Timezone != "UTC" && p.Timezone != "GMT" && p.Timezone != "UCT":
		place := tzPlaces[p.Timezone]
		if place == "" {
			place = "America/Chicago"
		}
		v.addf("timezone", "timezone %q is an abbreviation, not a place, so it need not follow the place's daylight saving time; write the IANA name of the place whose clock the times should follow, e.g. timezone: %s", p.Timezone, place)
	}
	p.Location = loc
	if len(p.Classes) == 0 && !v.unreadClasses {
		v.addf("classes", "the catalog has no classes; add at least one under classes:")
	}
	seen := map[string]bool{}
	classAt := map[string]int{} // a class in lower case -> its first definition
	for i, c := range p.Classes {
		at := func(f string) string { return fmt.Sprintf("classes.%d.%s", i, f) }
		if c == nil {
			v.addf(fmt.Sprintf("classes.%d", i), "class %d is empty", i+1)
			continue
		}
		if !nameRE.MatchString(c.Name) {
			v.addf(at("name"), "class name %q must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most)%s", c.Name, nameSuggestion(c.Name))
			if s := suggestedName(c.Name); s != "" {
				if v.renamed == nil {
					v.renamed = map[string]bool{}
				}
				v.renamed[s] = true
			}
		}
		if meaning, ok := RequestWords[c.Name]; ok {
			v.addf(at("name"), "class name %q is a word /gpu request reads otherwise (%s), so nobody could ask for the class by name; rename it, e.g. name: %s-gpu", c.Name, meaning, c.Name)
		}
		if first, ok := classAt[strings.ToLower(c.Name)]; ok {
			v.addf(at("name"), "class %q is defined twice (first at line %d)%s", c.Name, v.line(fmt.Sprintf("classes.%d.name", first)), renameExample(c.Name))
		} else {
			classAt[strings.ToLower(c.Name)] = i
		}
		seen[strings.ToLower(c.Name)] = true
		switch {
		case !nonNegative(c.PricePerGPUHour):
			v.addf(at("price_per_gpu_hour"), "class %s: price_per_gpu_hour must be zero or more, not %s; e.g. price_per_gpu_hour: 2.50", c.Name, v.text(at("price_per_gpu_hour")))
		case c.PricePerGPUHour > MaxPrice:
			v.addf(at("price_per_gpu_hour"), "class %s: price_per_gpu_hour must be at most %d per GPU-hour, not %s; e.g. price_per_gpu_hour: 2.50", c.Name, int64(MaxPrice), v.text(at("price_per_gpu_hour")))
		}
		if c.GPUMemoryGiB < 0 {
			v.addf(at("gpu_memory_gib"), "class %s: gpu_memory_gib cannot be negative, not %s; e.g. gpu_memory_gib: 80", c.Name, v.text(at("gpu_memory_gib")))
		}
		switch c.Isolation {
		case "":
			c.Isolation = "shared"
		case "shared", "exclusive":
		default:
			v.addf(at("isolation"), "class %s: isolation must be %s; e.g. isolation: %s", c.Name, oneOf(c.Isolation, "shared", "exclusive"), lowerOr(c.Isolation, "shared", "shared", "exclusive"))
		}
		switch {
		case !v.written(at("max_gpus")):
			v.addf(at("max_gpus"), "class %s: max_gpus is missing; e.g. max_gpus: 1", c.Name)
		case c.MaxGPUs < 1:
			v.addf(at("max_gpus"), "class %s: max_gpus must be at least 1, not %s; e.g. max_gpus: 1", c.Name, strings.TrimSpace(v.text(at("max_gpus"))))
		}
		switch {
		case !v.written(at("max_duration")):
			v.addf(at("max_duration"), "class %s: max_duration is missing, e.g. max_duration: 8h", c.Name)
		case c.MaxDuration.Duration <= 0:
			v.addf(at("max_duration"), "class %s: max_duration must be longer than 0, e.g. max_duration: 8h", c.Name)
		}
		if c.IdleTimeout.Duration < 0 || c.IdleGrace.Duration < 0 {
			v.addf(at("idle_timeout"), "class %s: idle_timeout and idle_grace cannot be negative", c.Name)
		}
		switch {
		case !v.written(at("expiry_warning")):
			c.ExpiryWarning.Duration = DefaultExpiryWarning
		case c.ExpiryWarning.Duration < 0:
			v.addf(at("expiry_warning"), "class %s: expiry_warning cannot be negative; write 0 to send no warning before a lease ends, e.g. expiry_warning: 15m", c.Name)
		}
		if !(c.CapacityShare >= 0 && c.CapacityShare <= 1) {
			v.addf(at("capacity_share"), "class %s: capacity_share is a fraction between 0 and 1, not %s; e.g. capacity_share: 0.15", c.Name, v.text(at("capacity_share")))
		}
		v.mapping(c, at)
	}
	v.quota("default_quota", "default_quota: ", &p.DefaultQuota, seen)
	teamAt := map[string]int{} // a team in lower case -> its first definition
	for i, t := range p.Teams {
		at := func(f string) string { return fmt.Sprintf("teams.%d.%s", i, f) }
		if t == nil {
			v.addf(fmt.Sprintf("teams.%d", i), "team %d is empty", i+1)
			continue
		}
		if !nameRE.MatchString(t.Name) {
			v.addf(at("name"), "team name %q must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most)%s", t.Name, nameSuggestion(t.Name))
		}
		if meaning, ok := TeamWords[t.Name]; ok {
			v.addf(at("name"), "team name %q is a word the /gpu commands read otherwise (%s), so nobody could name the team there; rename it, e.g. name: %s-team", t.Name, meaning, t.Name)
		}
		if first, ok := teamAt[strings.ToLower(t.Name)]; ok {
			v.addf(at("name"), "team %q is defined twice (first at line %d)%s", t.Name, v.line(fmt.Sprintf("teams.%d.name", first)), renameExample(t.Name))
		} else {
			teamAt[strings.ToLower(t.Name)] = i
		}
		if len(t.IDPGroups) == 0 {
			v.addf(at("name"), "team %s has no idp_groups, so nobody can belong to it", t.Name)
		}
		switch {
		case v.unquotedChannel(at("channel"), "team "+t.Name+": channel"):
		case t.Channel != "" && !strings.HasPrefix(t.Channel, "#"):
			v.addf(at("channel"), "team %s: channel %q must start with #; e.g. channel: \"#%s-gpu\"", t.Name, t.Channel, exampleName(t.Name, "team"))
		default:
			if msg := oneWord(t.Channel, "#"+t.Name+"-gpu"); msg != "" {
				v.addf(at("channel"), "team %s: channel %s", t.Name, msg)
			}
		}
		if t.Quota != nil {
			v.quota(at("quota"), "team "+t.Name+": quota ", t.Quota, seen)
		}
		for j, dc := range t.DataClasses {
			// A request names its data class in one word, in any case: the team's are kept in
			// lower case so that they compare, and one that cannot be typed is refused.
			lc := strings.ToLower(strings.TrimSpace(dc))
			if lc == "" {
				continue // an empty entry is refused with the other empty entries
			}
			if !ValidDataClass(lc) {
				v.addf(fmt.Sprintf("%s.%d", at("data_classes"), j), "team %s: data class %q must be one word of the letters a to z, digits, -, _ or . (40 at most), as a request names it (data %s)%s", t.Name, clipName(dc, 40), dataClassExample(dc, t.DataClasses), nameSuggestion(dc))
			} else if meaning, ok := DataWord(lc); ok {
				v.addf(fmt.Sprintf("%s.%d", at("data_classes"), j), "team %s: data class %q is a word /gpu request reads as its own after data (%s), so no request could name it; e.g. data_classes: [public, internal]", t.Name, clipName(dc, 40), meaning)
			}
			t.DataClasses[j] = lc
		}
		if t.Storage.QuotaGiB < 0 {
			v.addf(at("storage.quota_gib"), "team %s: storage quota_gib cannot be negative, not %s; e.g. quota_gib: 1024", t.Name, v.text(at("storage.quota_gib")))
		}
	}
	v.storage(p)
	v.sso(p)
	switch {
	case !v.written("approvals.timeout"):
		p.Approvals.Timeout.Duration = 24 * time.Hour
	case p.Approvals.Timeout.Duration <= 0:
		v.addf("approvals.timeout", "approvals.timeout must be longer than 0: an exception nobody decides is denied after it; e.g. timeout: 24h")
	}
	accounts := map[string]string{}
	users := map[string]int{} // a user in lower case -> their first entry
	for i, id := range p.Directory {
		if id == nil || !strings.Contains(id.User, "@") {
			v.addf(fmt.Sprintf("directory.%d", i), "directory entry %d needs a user written as an email address%s", i+1, directoryExample(p, id))
			continue
		}
		// A person is found by their first entry: a second one would never be read.
		if j, ok := users[strings.ToLower(id.User)]; ok {
			first := p.Directory[j]
			groups := append([]string(nil), first.Groups...)
			for _, g := range id.Groups {
				if !Contains(groups, g) {
					groups = append(groups, g)
				}
			}
			v.addf(fmt.Sprintf("directory.%d", i), "directory entry %s is %s again (first at line %d), whose second entry would never be read; put their groups and accounts in one entry, e.g. {user: %s, groups: [%s]}",
				id.User, first.User, v.line(fmt.Sprintf("directory.%d", j)), first.User, strings.Join(groups, ", "))
		} else {
			users[strings.ToLower(id.User)] = i
		}
		for j, a := range id.Accounts {
			at := fmt.Sprintf("directory.%d.accounts.%d", i, j)
			platform, uid, _ := strings.Cut(a, ":")
			switch {
			case strings.ToLower(platform) != "discord":
				v.addf(at, "%s: account %q is not one Quartermaster knows; accounts are written discord:USER_ID, e.g. discord:80351110224678912", id.User, a)
			case !snowflakeRE.MatchString(uid):
				v.addf(at, "%s: %q is not a Discord user id (a number such as 80351110224678912; Discord shows it under Copy User ID)", id.User, uid)
			case accounts[strings.ToLower(a)] != "":
				v.addf(at, "%s: account %s already belongs to %s", id.User, a, accounts[strings.ToLower(a)])
			default:
				accounts[strings.ToLower(a)] = id.User
			}
		}
	}
	v.commentedChannelKeys()
	channels := map[string]string{} // a channel as compared (ChannelKey) -> as first written
	for _, name := range keysInOrder(v, "discord.channels", p.Discord.Channels) {
		ch := p.Discord.Channels[name]
		if first, ok := channels[ChannelKey(name)]; ok {
			v.addf("discord.channels."+name, "discord.channels names %s twice (%s and %s), so its posts could go to either; keep one, e.g. %q: %q", ChannelKey(name), first, name, first, p.Discord.Channels[first])
		} else {
			channels[ChannelKey(name)] = name
		}
		if !strings.HasPrefix(name, "#") {
			v.addf("discord.channels."+name, "discord.channels: %q must be a channel as the policy names it, starting with #", name)
		}
		if !snowflakeRE.MatchString(ch) {
			v.addf("discord.channels."+name, "discord.channels: %q is not a Discord channel id (a number such as 1180000000000000001; Discord shows it under Copy Channel ID)", ch)
		}
	}
	switch p.Backend {
	case "":
		p.Backend = "sim"
	case "sim", "slurm", "kubernetes":
	default:
		v.addf("backend", "backend must be %s; e.g. backend: %s", oneOf(p.Backend, "sim", "slurm", "kubernetes"), lowerOr(p.Backend, "slurm", "sim", "slurm", "kubernetes"))
	}
	// The backend places a class's leases by its mapping: one without is refused here, at its
	// line, rather than when serve starts.
	for i, c := range p.Classes {
		switch {
		case c == nil:
		case p.Backend == "slurm" && c.Slurm.Partition == "":
			v.addf(fmt.Sprintf("classes.%d.name", i), "class %s has no slurm.partition, which backend slurm needs to place its leases; e.g. slurm: {partition: %s, gres: \"gpu\"}", c.Name, exampleName(c.Name, "gpu"))
		case p.Backend == "kubernetes" && c.Kubernetes.Resource == "" && len(c.Kubernetes.NodeSelector) == 0:
			v.addf(fmt.Sprintf("classes.%d.name", i), "class %s has no kubernetes.resource or node_selector, which backend kubernetes needs to place its leases; e.g. kubernetes: {resource: nvidia.com/gpu}", c.Name)
		}
	}
	simNodes := map[string]string{} // node name -> the group that makes it
	for i, g := range p.Sim.Nodes {
		at := func(f string) string { return fmt.Sprintf("sim.nodes.%d.%s", i, f) }
		if g == nil {
			continue
		}
		switch {
		case g.Name == "":
			v.addf(at("name"), "sim node group %d needs a name", i+1)
		case !simNameRE.MatchString(g.Name):
			v.addf(at("name"), "sim node group name %q must be letters, digits, -, _ or . (starting with a letter or digit, 40 at most), as a host name is; e.g. name: gpu-a", clipName(g.Name, 40))
		default:
			// Every node a group makes must be its own: two groups naming a node alike would
			// hand out the same GPUs twice.
			for n := 1; n <= min(g.Count, 1000); n++ {
				node := strings.ToLower(fmt.Sprintf("%s-%02d", g.Name, n))
				if other, ok := simNodes[node]; ok {
					v.addf(at("name"), "sim node group %s makes node %s, which group %s makes too; give each group a name of its own", g.Name, node, other)
					break
				}
				simNodes[node] = g.Name
			}
		}
		if c, ok := p.Class(g.Class); ok {
			g.Class = c.Name // Train is the class train, whose leases go on these nodes
		} else if !v.renamed[strings.ToLower(g.Class)] && !v.unreadClasses {
			v.addf(at("class"), "sim node group %s: class %q is not in the catalog%s", g.Name, g.Class, noClassHint(g.Class, p.ClassNames(), "its classes are"))
		}
		v.simRange(at("count"), g.Name, "count", g.Count, 1000, 2)
		gpusOK := v.simRange(at("gpus"), g.Name, "gpus", g.GPUs, 64, 8)
		if g.NVLinkIslands == 0 {
			g.NVLinkIslands = 1
		}
		switch n := g.NVLinkIslands; {
		case !gpusOK:
		case n < 0 || n > g.GPUs:
			v.addf(at("nvlink_islands"), "sim node group %s: nvlink_islands must be from 1 to its %s, not %d; e.g. nvlink_islands: %d", g.Name, Count(g.GPUs, "GPU", "GPUs"), n, min(max(n, 1), g.GPUs))
		case g.GPUs%n != 0:
			v.addf(at("nvlink_islands"), "sim node group %s: nvlink_islands %d does not split its %s evenly; e.g. %s", g.Name, n, Count(g.GPUs, "GPU", "GPUs"), nearestDivisors(g.GPUs, n))
		}
	}
	if p.Backend == "sim" {
		if msg := p.SimulateUnlistedNodes(); msg != "" {
			v.warnings = append(v.warnings, Problem{Line: v.line("backend"), Msg: msg})
		}
	}
	if u := p.Idle.UtilizationBelow; !(u >= 0 && u <= 100) {
		v.addf("idle.utilization_below", "idle.utilization_below is a percent from 0 to 100, not %s; e.g. idle: {utilization_below: 5}", v.text("idle.utilization_below"))
	}
	if p.Idle.UtilizationBelow == 0 && !v.written("idle.utilization_below") {
		p.Idle.UtilizationBelow = 5 // a 0 written means no GPU counts as idle by its utilization
	}
	v.unquotedChannel("reports.showback.channel", "reports.showback.channel")
	v.unquotedChannel("reports.showback.platform_channel", "reports.showback.platform_channel")
	if msg := oneWord(p.Reports.Showback.Channel, "#gpu-showback"); msg != "" {
		v.addf("reports.showback.channel", "reports.showback.channel %s", msg)
	}
	if msg := oneWord(p.Reports.Showback.PlatformChannel, "#gpu-platform"); msg != "" {
		v.addf("reports.showback.platform_channel", "reports.showback.platform_channel %s", msg)
	}
	if p.Reports.Showback.Schedule != "" {
		if _, _, err := ParseWeekly(p.Reports.Showback.Schedule); err != nil {
			v.addf("reports.showback.schedule", "%v", err)
		}
	}
	rs, probs := compileRules(p, v.line, v.scalarPos)
	v.problems = append(v.problems, probs...)
	p.rules = rs
	p.reach = &reachCache{}
	p.Warnings = append([]Problem(nil), v.warnings...)
	for _, warnings := range []func(*Policy, func(string) int) []Problem{teamWarnings, groupWarnings, peopleWarnings, ruleCaseWarnings, ruleLiteralWarnings, limitWarnings, approverWarnings, emailGroupWarnings, adminWarnings, deciderWarnings, showbackWarnings, discordChannelWarnings, reachWarnings} {
		p.Warnings = append(p.Warnings, warnings(p, v.line)...)
	}
	shownProblems(p.Warnings)
	sort.SliceStable(p.Warnings, func(i, j int) bool { return p.Warnings[i].Line < p.Warnings[j].Line })
	p.DiscordOnly = unmappedTeamChannels(p, v.line)
}

// objectLists are the lists of the policy whose entries are objects, and what one entry is called.
var objectLists = map[string]string{
	"classes":    "class",
	"teams":      "team",
	"exceptions": "exception rule",
	"directory":  "directory entry",
	"sim.nodes":  "sim node group",
}

// emptyEntries refuses every empty entry in every list of the policy: a "-" with nothing after
// it, ~, null, or a blank string. at is the dotted path of n without list positions (sim.nodes);
// label names the object n belongs to, as a problem names it (team vision, approvals).
func (v *validator) emptyEntries(n *yaml.Node, at, label string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			child, childLabel := key, label
			if at != "" {
				child = at + "." + key
			}
			if childLabel == "" {
				childLabel = key
			}
			if val.Kind == yaml.SequenceNode {
				v.emptyInList(val, child, childLabel, key)
				continue
			}
			v.emptyEntries(val, child, childLabel)
		}
	case yaml.SequenceNode:
		v.emptyInList(n, at, label, at)
	}
}

// emptyInList checks the entries of one list; key is the list's name as written.
func (v *validator) emptyInList(n *yaml.Node, at, label, key string) {
	kind, objects := objectLists[at]
	for i, item := range n.Content {
		if isEmptyEntry(item) {
			line := Problem{Line: item.Line}
			if objects {
				line.Msg = fmt.Sprintf("%s %d is empty; fill it in or remove its line", kind, i+1)
			} else {
				line.Msg = fmt.Sprintf("%s: %s entry %d is empty; remove it or write a value", label, key, i+1)
			}
			v.problems = append(v.problems, line)
			continue
		}
		if item.Kind == yaml.AliasNode {
			continue // checked where its anchor is written
		}
		itemLabel := label
		if objects {
			itemLabel = fmt.Sprintf("%s %d", kind, i+1)
			if name := mappingValue(item, "name", "user"); name != "" {
				itemLabel = kind + " " + name
			}
		}
		v.emptyEntries(item, at, itemLabel)
	}
}

// isEmptyEntry reports whether a list entry is null or a blank string, through an alias.
func isEmptyEntry(n *yaml.Node) bool {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!null" || strings.TrimSpace(n.Value) == "")
}

// mappingValue is the first of keys that a mapping gives as a plain value.
func mappingValue(n *yaml.Node, keys ...string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for _, k := range keys {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k && n.Content[i+1].Kind == yaml.ScalarNode && strings.TrimSpace(n.Content[i+1].Value) != "" {
				return n.Content[i+1].Value
			}
		}
	}
	return ""
}

// storage checks the teams' storage grants: each path is absolute and plain, and no team's path
// is another's or lies inside it, so no team is ever given another's files.
func (v *validator) storage(p *Policy) {
	type grant struct {
		team, path string
		i          int
	}
	var grants []grant
	for i, t := range p.Teams {
		if t != nil && t.Storage.PVC != "" && !IsPVCName(t.Storage.PVC) {
			v.addf(fmt.Sprintf("teams.%d.storage", i), "team %s: storage pvc %q is not a Kubernetes PersistentVolumeClaim name (lower case letters, digits, - and .); e.g. pvc: %s-data",
				t.Name, clipName(t.Storage.PVC, 60), strings.ReplaceAll(exampleName(t.Name, "team"), "_", "-"))
		}
		if t == nil || t.Storage.Path == "" {
			continue
		}
		at := fmt.Sprintf("teams.%d.storage", i)
		sp := t.Storage.Path
		if !strings.HasPrefix(sp, "/") || path.Clean(sp) != sp || sp == "/" {
			v.addf(at, "team %s: storage path %q must be a plain absolute directory such as /projects/%s (no .., no // and not / itself)", t.Name, sp, exampleName(t.Name, "team"))
			continue
		}
		if !IsStoragePath(sp) {
			v.addf(at, "team %s: storage path %q has a character a job script or a mount cannot carry; use letters, digits and . _ - + /, e.g. path: /projects/%s", t.Name, clipName(sp, 60), exampleName(t.Name, "team"))
			continue
		}
		paths := make([]string, len(grants))
		for j, g := range grants {
			paths[j] = g.path
		}
		eg := ", e.g. path: " + ownDirectory(sp, t.Name, paths)
		for _, g := range grants {
			switch {
			case g.path == sp:
				v.addf(at, "teams %s and %s both have storage %s; each team needs a directory of its own%s", g.team, t.Name, sp, eg)
			case overlaps(g.path, sp) && len(sp) > len(g.path):
				v.addf(at, "the storage %s of team %s lies inside %s of team %s; give each team a directory of its own%s", sp, t.Name, g.path, g.team, eg)
			case overlaps(g.path, sp):
				v.addf(at, "the storage %s of team %s holds %s of team %s; give each team a directory of its own%s", sp, t.Name, g.path, g.team, eg)
			}
		}
		grants = append(grants, grant{t.Name, sp, i})
	}
}

// overlaps reports whether one of two storage paths is the other or lies inside it.
func overlaps(a, b string) bool {
	return strings.HasPrefix(a+"/", b+"/") || strings.HasPrefix(b+"/", a+"/")
}

// ownDirectory is a storage path for team that overlaps none of taken: one beside sp, named for
// the team, else one beside the directory that holds sp, and so on up to /.
func ownDirectory(sp, team string, taken []string) string {
	for dir := path.Dir(sp); ; dir = path.Dir(dir) {
		for _, name := range []string{team, team + "-data"} {
			c := path.Join(dir, name)
			if !slices.ContainsFunc(taken, func(t string) bool { return overlaps(t, c) }) {
				return c
			}
		}
		if dir == "/" {
			return path.Join("/", team+"-storage")
		}
	}
}

var claimRE = regexp.MustCompile(`^[A-Za-z0-9_:/.#-]{1,200}$`)

// sso fills the oidc section's defaults and checks it.
func (v *validator) sso(p *Policy) {
	o := &p.OIDC
	if o.GroupsClaim == "" {
		o.GroupsClaim = DefaultGroupsClaim
	} else if !claimRE.MatchString(o.GroupsClaim) {
		v.addf("oidc.groups_claim", "oidc.groups_claim %q is not a claim name; e.g. groups, or roles for Entra ID app roles", o.GroupsClaim)
	}
	if len(o.Scopes) == 0 {
		o.Scopes = append([]string(nil), DefaultScopes...)
	} else if !Contains(o.Scopes, "openid") {
		v.addf("oidc.scopes", "oidc.scopes must include openid, e.g. scopes: [openid, email, profile]")
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\n\"") {
			v.addf(fmt.Sprintf("oidc.scopes.%d", i), "oidc.scopes: scope %q is not one word; write each scope as an entry of its own, e.g. scopes: [openid, email, profile]", clipName(s, 40))
		}
	}
	switch {
	case !v.written("oidc.recheck"):
		o.Recheck.Duration = DefaultRecheck
	case o.Recheck.Duration < time.Minute || o.Recheck.Duration > DefaultRecheck:
		v.addf("oidc.recheck", "oidc.recheck must be between 1m and 24h (groups are read again at least daily), not %s; e.g. recheck: 24h", strings.TrimSpace(v.text("oidc.recheck")))
	}
	if p.Approvals.StepUp.Duration < 0 {
		v.addf("approvals.step_up", "approvals.step_up cannot be negative")
	}
}

// quota checks a quota at path; label names it in a refusal ("team vision: quota "). A class
// written in other case (Interactive) is the class: the quota is kept by its name in the catalog,
// as everything that reads the quota looks it up.
func (v *validator) quota(path, label string, q *Quota, classes map[string]bool) {
	keys := keysInOrder(v, path+".gpus", q.GPUs)
	canonical := make(map[string]int, len(q.GPUs))
	writtenAs := map[string]string{}
	for _, name := range keys {
		n := q.GPUs[name]
		if lc := strings.ToLower(name); classes[lc] {
			if first, ok := writtenAs[lc]; ok {
				v.addf(path+".gpus."+name, "%sgpus names class %s twice (%s and %s); keep one, e.g. gpus: {%s: %d}", label, lc, first, name, lc, q.GPUs[first])
				continue
			}
			writtenAs[lc] = name
			canonical[lc] = n
		}
		if !classes[strings.ToLower(name)] && !v.renamed[strings.ToLower(name)] && !v.unreadClasses {
			names := make([]string, 0, len(classes))
			for c := range classes {
				names = append(names, c)
			}
			sort.Strings(names)
			v.addf(path+".gpus."+name, "%snames class %q, which is not in the catalog%s", label, name, noClassHint(name, names, "its classes are"))
		}
		if n < 0 {
			v.addf(path+".gpus."+name, "%sgpus.%s cannot be negative, not %d; e.g. gpus: {%s: 2}", label, name, n, name)
		}
	}
	if q.GPUs != nil {
		q.GPUs = canonical
	}
	if !nonNegative(q.GPUHoursPerWeek) {
		v.addf(path+".gpu_hours_per_week", "%sgpu_hours_per_week must be zero or more, not %s; e.g. gpu_hours_per_week: 100", label, v.text(path+".gpu_hours_per_week"))
	}
}

// keysInOrder is the keys of m, a map the file writes at path, in the order the file writes them
// (sorted where it cannot tell, as for a map merged in from an anchor).
func keysInOrder[V any](v *validator, path string, m map[string]V) []string {
	var out []string
	seen := map[string]bool{}
	if _, n := v.find(path); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !seen[k] {
				if _, ok := m[k]; ok {
					out = append(out, k)
					seen[k] = true
				}
			}
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

var weekdays = map[string]time.Weekday{"SUN": time.Sunday, "MON": time.Monday, "TUE": time.Tuesday, "WED": time.Wednesday, "THU": time.Thursday, "FRI": time.Friday, "SAT": time.Saturday}

var clockRE = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):([0-5][0-9])$`)

// ParseWeekly reads a weekly schedule: a weekday (MON or MONDAY, any case) and a 24-hour time,
// like "MON 09:00". Anything else is refused.
func ParseWeekly(s string) (time.Weekday, time.Duration, error) {
	f := strings.Fields(strings.ToUpper(s))
	if len(f) == 2 {
		day := f[0]
		if len(day) > 3 {
			if full := strings.ToUpper(dayNames[day[:3]]); full != day {
				day = ""
			}
		}
		if d, ok := weekdays[day[:min(3, len(day))]]; ok && len(day) >= 3 {
			if m := clockRE.FindStringSubmatch(f[1]); m != nil {
				h, _ := strconv.Atoi(m[1])
				mi, _ := strconv.Atoi(m[2])
				return d, time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("schedule %q is not a weekday and a 24-hour time; write e.g. %q", s, scheduleMeant(s))
}

// meantClockRE is a time of day as people write it: 9, 7:30, 17.45, 0730, 8am, 7:30 pm.
var meantClockRE = regexp.MustCompile(`^([0-9]{1,2})(?:[:.h]?([0-5][0-9]))?(AM|PM)?$`)

// scheduleMeant is the weekly schedule s, which ParseWeekly refuses, written as it takes one: the
// weekday it names (WED, Wednesday, Wednesdays, Thurs, or a letter off its three letters: WEN),
// else Monday, and the time it names (7:30pm is 19:30, 8am 08:00, 0730 07:30), else 09:00.
func scheduleMeant(s string) string {
	day, clock := "", ""
	f := strings.Fields(strings.ToUpper(s))
	for _, near := range []bool{false, true} {
		for _, w := range f {
			if day == "" {
				day = weekdayOf(strings.Trim(w, ",;"), near)
			}
		}
	}
	for i := 0; i < len(f); i++ {
		w := strings.Trim(f[i], ",;")
		if i+1 < len(f) && (f[i+1] == "AM" || f[i+1] == "PM") {
			w += f[i+1] // 7:30 PM
		}
		switch {
		case weekdayOf(w, false) != "":
		case clock == "":
			m := meantClockRE.FindStringSubmatch(strings.ReplaceAll(w, ".M.", "M"))
			if m == nil {
				continue
			}
			h, _ := strconv.Atoi(m[1])
			mi, _ := strconv.Atoi(m[2])
			switch {
			case m[3] != "" && (h < 1 || h > 12):
				continue
			case m[3] == "AM" && h == 12:
				h = 0
			case m[3] == "PM" && h < 12:
				h += 12
			}
			if h < 24 {
				clock = fmt.Sprintf("%02d:%02d", h, mi)
			}
		}
	}
	if day == "" {
		day = "MON"
	}
	if clock == "" {
		clock = "09:00"
	}
	return day + " " + clock
}

// weekdayOf is the three letters of the weekday w (in upper case) names: its name or the start
// of it (THURS), in the plural (MONDAYS); where near, also three letters one off a single day's
// (WEN); "" if none.
func weekdayOf(w string, near bool) string {
	if near {
		found := ""
		for abbr := range dayNames {
			if len(w) == 3 && EditDistance(w, abbr) == 1 {
				if found != "" {
					return ""
				}
				found = abbr
			}
		}
		return found
	}
	w = strings.TrimSuffix(w, "S")
	for abbr, name := range dayNames {
		if len(w) >= 3 && strings.HasPrefix(strings.ToUpper(name), w) {
			return abbr
		}
	}
	return ""
}

var dayNames = map[string]string{"SUN": "Sunday", "MON": "Monday", "TUE": "Tuesday", "WED": "Wednesday", "THU": "Thursday", "FRI": "Friday", "SAT": "Saturday"}

// invalidUTF8 is the problem of a file with a byte that is no UTF-8 (one saved as Latin-1 or
// Windows-1252): where the first such byte is, by line, column and offset, and what to do, where
// the YAML parser says only "invalid leading UTF-8 octet". A file that begins with a UTF-16 byte
// order mark is left to the parser, which reads UTF-16.
func invalidUTF8(data []byte) (Problem, bool) {
	if utf8.Valid(data) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return Problem{}, false
	}
	at := 0
	for at < len(data) {
		r, n := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	line := bytes.Count(data[:at], []byte("\n")) + 1
	col := utf8.RuneCount(data[start:at]) + 1
	return Problem{Line: line, Msg: fmt.Sprintf("column %d (byte offset %d) holds the byte 0x%02X, which is not UTF-8 (the file was likely saved as Latin-1 or Windows-1252); save the file as UTF-8 in your editor and run quartermaster policy check FILE again", col, at, data[at])}, true
}
