package templates

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Every error that bad user input causes (an unknown template, a bad parameter, a lease that does
// not fit the template) is a *qm.Error with code qm.EINVALID: one sentence and an example that
// works, so the edge can show it as is. Any other error is a bug or a bad definition and belongs
// in the log.

// IsInvalid reports whether err is bad user input.
func IsInvalid(err error) bool {
	var e *qm.Error
	return errors.As(err, &e) && e.Code == qm.EINVALID
}

func inputErr(example, format string, args ...any) error {
	e := qm.Invalid(example, format, args...)
	e.Message = strings.TrimSuffix(e.Message, ".") + "."
	return e
}

// Parameter types a definition may use.
const (
	TypeInt      = "int"
	TypeString   = "string"
	TypeBool     = "bool"
	TypeDuration = "duration"
	TypeEnum     = "enum"
	TypePath     = "path"
)

// MaxValueLen bounds every parameter value, so a value always fits a job script and a manifest.
const MaxValueLen = 512

// Parameter is one key a template accepts, with its type, default and limits.
type Parameter struct {
	Name        string
	Type        string // int | string | bool | duration | enum | path
	Description string
	Default     string // empty with Required
	Required    bool
	Example     string   // a value that works, for error messages and help
	Min, Max    string   // int and duration bounds as written in the definition; empty when open
	Choices     []string // enum values
	Pattern     string   // string values must match it (anchored)
	// PatternDescription is what Pattern admits, in words ("a model id like org/name"); empty
	// where the definition gives none.
	PatternDescription string

	min, max   int64 // ints, or durations in nanoseconds
	hasMin     bool
	hasMax     bool
	re         *regexp.Regexp
	exampleVal string
}

// Params are a user's key=value parameters after ParseParams: keys known to the template, values
// checked against its types and limits. Keys the user did not give are absent (defaults apply at
// render time).
type Params map[string]string

var keyRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ParseParams reads key=value words (e.g. ["nnodes=2", "script=train.py"]) and checks each against
// the template: unknown keys, wrong types and values out of range each give an *InputError naming
// the problem with a working example. It never panics, whatever the input.
func (t *Template) ParseParams(args []string) (Params, error) {
	out := Params{}
	for _, arg := range args {
		arg = strings.TrimSpace(arg)
		if arg == "" {
			continue
		}
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, inputErr(t.Example(), "%s is not key=value", policy.Quoted(arg, 40))
		}
		key = strings.ToLower(strings.TrimSpace(key))
		if key == "" {
			return nil, inputErr(t.Example(), "%s has no key before the =", policy.Quoted(arg, 40))
		}
		p := t.param(key)
		if p == nil {
			return nil, t.unknownParam(key)
		}
		if _, dup := out[p.Name]; dup {
			return nil, inputErr(t.exampleFor(p), "parameter %s is given twice", policy.Quoted(p.Name, 40))
		}
		if _, err := t.check(p, value); err != nil {
			return nil, err
		}
		// The value as checked: white space around it (a line break) is no part of it, and a
		// refusal's example that keeps it is one line that types back as given.
		out[p.Name] = strings.TrimSpace(value)
	}
	return out, nil
}

func (t *Template) param(name string) *Parameter {
	for i := range t.Parameters {
		if t.Parameters[i].Name == name {
			return &t.Parameters[i]
		}
	}
	return nil
}

func (t *Template) unknownParam(key string) error {
	shown := policy.Quoted(key, 40)
	if len(t.Parameters) == 0 {
		return inputErr(t.Example(), "unknown parameter %s; %s takes no parameters", shown, t.Name)
	}
	names := make([]string, len(t.Parameters))
	for i, p := range t.Parameters {
		names[i] = p.Name
	}
	hint := ""
	if near := policy.NearMiss(key, names); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return inputErr(t.Example(), "unknown parameter %s%s; %s %s known", shown, hint, policy.JoinList(names, "and"), policy.Agree(len(names), "is", "are"))
}

// check converts one raw value to its typed form, or says in one sentence why it cannot. A
// value that is wrong only for a quote not paired at one end of it ("acme/tiny, 'auto) is
// refused as that, with the value without the quote as the example; one that is wrong without
// the quote too is refused for what is wrong then ("100 as a number out of range, not as no
// number).
func (t *Template) check(p *Parameter, raw string) (any, error) {
	out, err := t.checkValue(p, raw)
	if err == nil {
		return out, nil
	}
	v := strings.TrimSpace(raw)
	bare := strings.Trim(v, `"'`)
	if bare == v || bare == "" {
		return nil, err
	}
	if _, berr := t.checkValue(p, bare); berr != nil {
		return nil, berr // wrong without the quote too: that is what to put right
	}
	ex := t.command(p.Name + "=" + bare)
	q := policy.Quoted(bare, 40)
	name := q[1 : len(q)-1]
	open, shut := v[0] == '"' || v[0] == '\'', v[len(v)-1] == '"' || v[len(v)-1] == '\''
	switch {
	case open && !shut:
		return nil, inputErr(ex, "the quote before %s in %s is not closed; leave it out or close it, as in %s=%s", name, p.Name, p.Name, q)
	case shut && !open:
		return nil, inputErr(ex, "the quote after %s in %s was never opened; leave it out or open it too, as in %s=%s", name, p.Name, p.Name, q)
	}
	return nil, inputErr(ex, "%s takes no quotes around %s; leave them out, as in %s=%s", p.Name, name, p.Name, name)
}

// shownValue is a value typed, quoted for a refusal as policy.Quoted quotes it, but in “ ” where
// a quote of its own (a " in it, a ' at either end) would make plain quotes read as two values
// or as a quote doubled.
func shownValue(v string) string {
	q := policy.Quoted(v, 40)
	if inner := q[1 : len(q)-1]; strings.Contains(inner, `"`) || strings.HasPrefix(inner, "'") || strings.HasSuffix(inner, "'") {
		return "\u201c" + inner + "\u201d"
	}
	return q
}

// checkValue is check without a word about quotes.
func (t *Template) checkValue(p *Parameter, raw string) (any, error) {
	ex := t.exampleFor(p)
	v := strings.TrimSpace(raw)
	if v == "" {
		return nil, inputErr(ex, "%s needs a value", p.Name)
	}
	if len(v) > MaxValueLen {
		return nil, inputErr(ex, "%s is too long (at most %d characters)", p.Name, MaxValueLen)
	}
	if !printable(v) {
		return nil, inputErr(ex, "%s must be %s, on one line: %s cannot be part of it", p.Name, p.shape(), unprintable(v))
	}
	switch p.Type {
	case TypeInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil && policy.OtherDigits(v) {
			return nil, t.otherDigits(p, v, "number")
		}
		if err != nil {
			return nil, inputErr(ex, "%s must be a whole number, not %s", p.Name, shownValue(v))
		}
		if (p.hasMin && n < p.min) || (p.hasMax && n > p.max) {
			return nil, inputErr(ex, "%s=%d is out of range: it must be %s", p.Name, n, p.rangeText())
		}
		return int(n), nil
	case TypeDuration:
		d, err := time.ParseDuration(v)
		if err != nil && policy.OtherDigits(v) {
			return nil, t.otherDigits(p, v, "duration")
		}
		if err != nil {
			return nil, inputErr(ex, "%s must be a duration like 30m or 1h30m, not %s", p.Name, shownValue(v))
		}
		if d < 0 {
			// The same length without its minus, where the parameter takes it, is the example.
			meant := strings.TrimPrefix(v, "-")
			if _, err := t.checkValue(p, meant); err == nil {
				ex = t.command(p.Name + "=" + meant)
			}
			return nil, inputErr(ex, "%s=%s is negative, but a duration cannot be negative; write it like %s", p.Name, v, strings.TrimPrefix(ex, t.command("")+" "))
		}
		if (p.hasMin && int64(d) < p.min) || (p.hasMax && int64(d) > p.max) {
			return nil, inputErr(ex, "%s=%s is out of range: it must be %s", p.Name, v, p.rangeText())
		}
		return d, nil
	case TypeBool:
		switch strings.ToLower(v) {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0":
			return false, nil
		}
		return nil, inputErr(ex, "%s must be true or false, not %s", p.Name, shownValue(v))
	case TypeEnum:
		for _, c := range p.Choices {
			if strings.EqualFold(c, v) {
				return c, nil
			}
		}
		return nil, inputErr(ex, "%s must be %s, not %s", p.Name, policy.JoinList(p.Choices, "or"), shownValue(v))
	case TypePath:
		if msg := pathProblem(v); msg != "" {
			return nil, inputErr(ex, "%s must be a path inside the team storage %s, not %s", p.Name, msg, shownValue(v))
		}
		if p.re != nil && !p.re.MatchString(v) {
			return nil, p.patternRefusal(ex, v)
		}
		return v, nil
	default: // TypeString
		if p.re != nil && !p.re.MatchString(v) {
			return nil, p.patternRefusal(ex, v)
		}
		return v, nil
	}
}

// otherDigits refuses v, a value of p (a number or a duration, what) written with digits other
// than 0-9 (١٢, ２): the value with 0-9 is the example where its digits are of one script and
// the parameter takes it, else the parameter's example value.
func (t *Template) otherDigits(p *Parameter, v, what string) error {
	meant, clear := policy.ASCIIDigits(v)
	if _, err := t.checkValue(p, meant); !clear || err != nil {
		return inputErr(t.exampleFor(p), "%s=%s is written with digits other than 0-9; write the %s with the digits 0-9, like %s=%s", p.Name, v, what, p.Name, p.exampleVal)
	}
	return inputErr(t.command(p.Name+"="+meant), "%s=%s is written with digits other than 0-9; write the %s with the digits 0-9: %s=%s", p.Name, v, what, p.Name, meant)
}

// maxPatternDescription bounds a definition's pattern_description, so a refusal stays a sentence.
const maxPatternDescription = 120

// Expects is what a value of p must be, in words, as a refusal and /gpu template say it: the
// definition's pattern_description, else like its example value.
func (p *Parameter) Expects() string {
	if p.PatternDescription != "" {
		return strings.TrimSuffix(p.PatternDescription, ".")
	}
	return "like " + p.exampleVal
}

// patternRefusal refuses v, which p's pattern does not admit, in words and not as the pattern:
// what p must be (Expects; with the description too where that is the example value), and a
// character of v the pattern admits nowhere, where there is one.
func (p *Parameter) patternRefusal(ex, v string) error {
	what := p.Expects()
	if p.PatternDescription == "" {
		what += " (" + strings.TrimSuffix(p.Description, ".") + ")"
	}
	msg := fmt.Sprintf("%s must be %s, not %s", p.Name, what, shownValue(v))
	if r, ok := foreignRune(p.Pattern, v); ok {
		msg += fmt.Sprintf(": %s cannot be part of it", runeShown(r))
	}
	return inputErr(ex, "%s", msg)
}

// foreignRune is the first character of v that pattern admits nowhere; ok is false where every
// character could be part of a match (what is wrong is then their order or number).
func foreignRune(pattern, v string) (rune, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, false
	}
	var ranges []rune // pairs, lo and hi
	anyChar := false
	var walk func(*syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			anyChar = true
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				ranges = append(ranges, r, r)
				if re.Flags&syntax.FoldCase != 0 {
					for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
						ranges = append(ranges, f, f)
					}
				}
			}
		case syntax.OpCharClass:
			ranges = append(ranges, re.Rune...)
		}
		for _, sub := range re.Sub {
			walk(sub)
		}
	}
	walk(re)
	if anyChar {
		return 0, false
	}
	for _, r := range v {
		in := false
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				in = true
				break
			}
		}
		if !in {
			return r, true
		}
	}
	return 0, false
}

// runeShown names one character in a sentence: "a space", "a quote", or the character in quotes.
func runeShown(r rune) string {
	switch r {
	case ' ':
		return "a space"
	case '"', '\'', '\u201c', '\u201d', '\u2018', '\u2019':
		return "a quote"
	}
	return `"` + string(r) + `"`
}

// pathProblem says why v cannot name a file in the team storage, or "" when it can. Relative paths
// are taken from the storage root; absolute ones are checked against it at render time. A leading
// "-" is refused so that a path never reads as a command-line option.
func pathProblem(v string) string {
	if !pathRE.MatchString(v) || strings.HasPrefix(v, "-") {
		return "made of letters, digits and . _ - + / (not starting with -)"
	}
	for _, seg := range strings.Split(v, "/") {
		if seg == ".." {
			return `without ".."`
		}
	}
	return ""
}

var pathRE = regexp.MustCompile(`^[A-Za-z0-9._+/-]+$`)

func (p *Parameter) rangeText() string {
	switch {
	case p.hasMin && p.hasMax:
		return fmt.Sprintf("between %s and %s", p.Min, p.Max)
	case p.hasMin:
		return "at least " + p.Min
	default:
		return "at most " + p.Max
	}
}

// exampleFor is a command that sets p to a value that works.
func (t *Template) exampleFor(p *Parameter) string {
	return t.command(p.Name + "=" + p.exampleVal)
}

// Example is a chat command that uses the template with parameters that work, e.g.
// "/gpu submit pytorch-ddp nnodes=2 script=train.py" for a batch template or
// "/gpu submit jupyterlab" for an interactive one (submit starts either kind).
func (t *Template) Example() string { return t.command(t.example) }

// ExampleParams are the parameters of the template's example (checked when it was loaded).
func (t *Template) ExampleParams() Params {
	p, err := t.ParseParams(strings.Fields(t.example))
	if err != nil {
		return Params{}
	}
	return p
}

func (t *Template) command(params string) string {
	var b strings.Builder
	b.WriteString("/gpu submit " + t.Name)
	if params != "" {
		b.WriteString(" " + params)
	}
	return b.String()
}

// values is the typed value of every parameter: the user's, else the default.
func (t *Template) values(params Params) (map[string]any, error) {
	known := map[string]bool{}
	for _, p := range t.Parameters {
		known[p.Name] = true
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return nil, t.unknownParam(k)
		}
	}
	if err := t.missing(params); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(t.Parameters))
	for i := range t.Parameters {
		p := &t.Parameters[i]
		raw, given := params[p.Name]
		if !given {
			raw = p.Default
		}
		v, err := t.check(p, raw)
		if err != nil {
			return nil, err
		}
		out[p.Name] = v
	}
	return out, nil
}

// missing refuses params that leave out required parameters, naming every one, with an example
// that gives them all (their example values) and keeps the user's other parameters that are
// valid and can be typed, in the template's order: typed back, it is not refused for a missing
// one again.
func (t *Template) missing(params Params) error {
	var names, words []string
	for i := range t.Parameters {
		p := &t.Parameters[i]
		raw, given := params[p.Name]
		if given {
			if _, err := t.check(p, raw); err != nil || strings.ContainsAny(raw, "\"'") {
				given = false // left out of the example: the default, or the example value, applies
			} else if raw == "" || strings.ContainsAny(raw, " \t") {
				raw = `"` + raw + `"`
			}
		} else if p.Required {
			names = append(names, p.Name)
		}
		switch {
		case given:
			words = append(words, p.Name+"="+raw)
		case p.Required:
			words = append(words, p.Name+"="+p.exampleVal)
		}
	}
	switch len(names) {
	case 0:
		return nil
	case 1:
		return inputErr(t.command(strings.Join(words, " ")), "%s is required", names[0])
	}
	return inputErr(t.command(strings.Join(words, " ")), "%s and %s are required",
		strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// unprintable names the first character of s that printable refuses, as a refusal says it.
func unprintable(s string) string {
	for _, r := range strings.ToValidUTF8(s, "\ufffd\ufffd") {
		switch {
		case r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == 0x2028 || r == 0x2029:
			return "a line break"
		case r == '\t':
			return "a tab"
		case r == ' ':
		case unicode.IsSpace(r):
			return "a space other than a plain one"
		case unicode.IsControl(r):
			return "a control character"
		case !unicode.IsPrint(r):
			return "an invisible character"
		}
	}
	return "a byte that is not UTF-8 text"
}

// shape is what a value of p must be, in words, as its other refusals say it.
func (p *Parameter) shape() string {
	switch p.Type {
	case TypeInt:
		return "a whole number"
	case TypeDuration:
		return "a duration like 30m or 1h30m"
	case TypeBool:
		return "true or false"
	case TypeEnum:
		return policy.JoinList(p.Choices, "or")
	case TypePath:
		if p.PatternDescription != "" {
			return "a path inside the team storage, " + p.Expects()
		}
		return "a path inside the team storage"
	}
	what := p.Expects()
	if p.PatternDescription == "" && p.Description != "" {
		what += " (" + strings.TrimSuffix(p.Description, ".") + ")"
	}
	return what
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r != ' ' && (!unicode.IsPrint(r) || unicode.IsSpace(r)) {
			return false
		}
	}
	return true
}

// clip keeps quoted user input short in messages.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	for i := 40; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return s[:40] + "…"
}

// ArrayTaskGPUs is the GPUs each task of an array template (a sweep's trials) takes with these
// parameters, at least 1; 0 for a template that is not an array.
func (t *Template) ArrayTaskGPUs(params Params) int {
	a := t.def.Array
	if a == nil {
		return 0
	}
	vals, err := t.values(params)
	if err != nil {
		return 1
	}
	n, _ := vals[a.GPUsPerTask].(int)
	return max(1, n)
}

// ArrayTasks is how many tasks an array template (a sweep's trials) runs with these parameters;
// 0 for a template that is not an array, or for parameters that do not parse.
func (t *Template) ArrayTasks(params Params) int {
	a := t.def.Array
	if a == nil {
		return 0
	}
	vals, err := t.values(params)
	if err != nil {
		return 0
	}
	n, _ := vals[a.Count].(int)
	return max(0, n)
}

// ArrayTaskParam is the parameter that sets the GPUs each task of an array template takes
// (hparam-sweep's gpus_per_trial); "" for a template that is not an array.
func (t *Template) ArrayTaskParam() string {
	if t.def.Array == nil {
		return ""
	}
	return t.def.Array.GPUsPerTask
}
