package policy

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The shape check reads the file's YAML against the Policy type before the file is decoded, so
// that a value of the wrong kind is refused in the policy's own words, at its line, with one that
// works, rather than in the decoder's (which names Go types, and cuts max_gpus: 2.5 to 2 without a
// word). The examples come from each field's eg tag, written as the field's value in YAML; a map
// of plain values has an each tag too, an example of one value.

// shapeOf checks the document's root node against the Policy type.
func shapeOf(root *yaml.Node) []Problem {
	s := &shaper{budget: new(int)}
	*s.budget = aliasBudget
	s.walk(root, reflect.TypeOf(Policy{}), place{})
	return s.problems
}

// aliasBudget is how many nodes the check reads again through aliases, at most: an alias of an
// alias of … could make it read more than fits in memory.
const aliasBudget = 100000

type shaper struct {
	problems []Problem
	budget   *int // nodes left to read through aliases, shared by every shaper of a file
}

// place is where a node stands, in the words of a refusal.
type place struct {
	label string // the object it belongs to: "class notebook", "team vision"; "" for the policy
	path  string // its keys within that object: "quota.gpus.notebook", "idle.utilization_below"
	eg    string // an example that works in its place: "max_gpus: 2"
}

// subject is the place as a refusal starts: "class notebook: max_gpus".
func (pl place) subject() string {
	if pl.label == "" || pl.path == "" {
		return pl.label + pl.path
	}
	return pl.label + ": " + pl.path
}

// owner names the place as the object that holds keys: "the policy", "approvals", "class
// notebook", "class notebook: slurm".
func (pl place) owner() string {
	switch {
	case pl.label == "" && pl.path == "":
		return "the policy"
	case pl.label == "" || pl.path == "":
		return pl.label + pl.path
	}
	return pl.subject()
}

// meant is "did you mean KEY?" for the known key closest to key (in any case, or one it begins),
// or else the known keys; a key and its value without a space between them are shown with one.
func meant(key string, keys []string) string {
	if k, v, ok := strings.Cut(key, ":"); ok && Contains(keys, k) {
		return fmt.Sprintf("write a space after the colon: %s: %s", k, v)
	}
	best := Closest(strings.ToLower(key), keys)
	if best == "" && len(key) >= 4 {
		for _, k := range keys {
			if strings.HasPrefix(k, strings.ToLower(key)) {
				best = k
				break
			}
		}
	}
	if best != "" {
		return "did you mean " + best + "?"
	}
	return Agree(len(keys), "its key is ", "its keys are ") + strings.Join(keys, ", ")
}

// example is "; e.g. max_gpus: 2", or nothing where the place has no example.
func (pl place) example() string {
	if pl.eg == "" {
		return ""
	}
	return "; e.g. " + pl.eg
}

func (s *shaper) addf(n *yaml.Node, format string, args ...any) {
	s.problems = append(s.problems, Problem{Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

var durationType = reflect.TypeOf(Duration{})

func (s *shaper) walk(n *yaml.Node, t reflect.Type, pl place) {
	if n.Kind == yaml.AliasNode {
		s.alias(n, t, pl)
		return
	}
	if s.budget != nil && *s.budget <= 0 {
		return
	}
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			s.walk(c, t, pl)
		}
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // absent: the field keeps its default
	}
	switch {
	case t == durationType:
		s.duration(n, pl)
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		switch {
		case n.Kind != yaml.MappingNode && pl.label == "" && pl.path == "":
			s.addf(n, "the policy must be a map of keys such as organization: and classes:, not %s; start from docs/quartermaster.example.yaml", written(n))
		case n.Kind != yaml.MappingNode:
			s.addf(n, "%s must be a map, not %s%s", pl.subject(), written(n), pl.example())
		case t.Kind() == reflect.Struct:
			s.object(n, t, pl)
		}
	case t.Kind() == reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			s.list(n, t, pl)
		} else {
			s.notList(n, t, pl)
		}
	case t.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			s.addf(n, "%s must be text, not %s%s", pl.subject(), written(n), pl.example())
		}
	case t.Kind() == reflect.Int:
		s.wholeNumber(n, pl)
	case t.Kind() == reflect.Float64:
		s.number(n, pl)
	case t.Kind() == reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			s.addf(n, "%s must be true or false, not %s%s", pl.subject(), written(n), pl.example())
		}
	}
}

// alias checks what an alias stands for in the place it is used: a problem is reported at the
// alias, since its anchor may be fine where it is written.
func (s *shaper) alias(n *yaml.Node, t reflect.Type, pl place) {
	if n.Alias == nil || *s.budget <= 0 {
		return
	}
	*s.budget -= size(n.Alias, *s.budget)
	sub := &shaper{budget: s.budget}
	sub.walk(n.Alias, t, pl)
	for _, p := range sub.problems {
		if p.Line != n.Line {
			p.Msg += fmt.Sprintf(" (through *%s, written at line %d)", n.Value, p.Line)
		}
		p.Line = n.Line
		s.problems = append(s.problems, p)
	}
}

// size counts n's nodes, up to limit.
func size(n *yaml.Node, limit int) int {
	total := 1
	for _, c := range n.Content {
		if total >= limit {
			break
		}
		total += size(c, limit-total)
	}
	return total
}

// fieldsOf maps a struct's YAML keys to their fields.
func fieldsOf(t reflect.Type) (map[string]reflect.StructField, []string) {
	fields := map[string]reflect.StructField{}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || key == "-" || key == "" {
			continue
		}
		fields[key] = f
		keys = append(keys, key)
	}
	return fields, keys
}

// objectKinds names an entry of each list of objects, as refusals call it.
var objectKinds = map[string]string{
	"classes":    "class",
	"teams":      "team",
	"exceptions": "exception rule",
	"directory":  "directory entry",
	"nodes":      "sim node group",
}

func (s *shaper) object(n *yaml.Node, t reflect.Type, pl place) {
	fields, keys := fieldsOf(t)
	if s.twice(n, pl) {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.ShortTag() == "!!merge" {
			// The keys of another map, merged in: they must be keys of this one.
			merged := []*yaml.Node{val}
			if val.Kind == yaml.SequenceNode {
				merged = val.Content
			}
			for _, m := range merged {
				s.walk(m, t, pl)
			}
			continue
		}
		f, ok := fields[k.Value]
		switch {
		case k.Kind != yaml.ScalarNode:
			s.addf(k, "%s has %s for a key; %s %s", pl.owner(), written(k), Agree(len(keys), "its key is", "its keys are"), strings.Join(keys, ", "))
			continue
		case !ok:
			s.addf(k, "%s has no key %s; %s", pl.owner(), k.Value, meant(k.Value, keys))
			continue
		}
		child := place{label: pl.label, path: join(pl.path, k.Value)}
		if eg, ok := f.Tag.Lookup("eg"); ok {
			child.eg = k.Value + ": " + eg
		}
		if kind, ok := objectKinds[k.Value]; ok && val.Kind == yaml.SequenceNode {
			s.objects(val, f.Type.Elem(), kind, strings.Trim(f.Tag.Get("eg"), "[]"))
			continue
		}
		s.walk(val, f.Type, child)
		if f.Type.Kind() == reflect.Map {
			s.mapValues(val, f, child)
		}
	}
}

// twice refuses each key a map writes twice, and reports whether there was one.
func (s *shaper) twice(n *yaml.Node, pl place) bool {
	first := map[string]int{}
	found := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			continue
		}
		if line, ok := first[k.Value]; ok {
			s.addf(k, "%s: %s is written twice (first at line %d); keep one", pl.owner(), k.Value, line)
			found = true
			continue
		}
		first[k.Value] = k.Line
	}
	return found
}

// objects checks each entry of a list of objects (classes, teams): each is a place of its own.
// eg is an example of one entry ({name: notebook, max_gpus: 1, max_duration: 8h}).
func (s *shaper) objects(n *yaml.Node, t reflect.Type, kind, eg string) {
	for i, item := range n.Content {
		label := fmt.Sprintf("%s %d", kind, i+1)
		if name := mappingValue(item, "name", "user"); name != "" {
			label = kind + " " + name
		}
		s.walk(item, t, place{label: label, eg: "- " + eg})
	}
}

// list checks each entry of a list of plain values.
func (s *shaper) list(n *yaml.Node, t reflect.Type, pl place) {
	for i, item := range n.Content {
		s.walk(item, t.Elem(), place{label: pl.label, path: fmt.Sprintf("%s entry %d", pl.path, i+1), eg: pl.eg})
	}
}

// notList refuses a value where a list belongs; a text is shown as the list it would be
// (idp_groups: grp-genomics, idp_groups: [grp-genomics]).
func (s *shaper) notList(n *yaml.Node, t reflect.Type, pl place) {
	eg := pl.example()
	if n.Kind == yaml.ScalarNode && t.Elem().Kind() == reflect.String {
		var items []string
		text := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(n.Value), "["), "]")
		for _, item := range strings.Split(text, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, flowText(item))
			}
		}
		if len(items) > 0 {
			key := pl.path[strings.LastIndex(pl.path, ".")+1:]
			eg = fmt.Sprintf("; e.g. %s: [%s]", key, strings.Join(items, ", "))
		}
	}
	s.addf(n, "%s must be a list, not %s%s", pl.subject(), written(n), eg)
}

// mapValues checks the values of a map field, each with the field's each example: gpus: {notebook: 2}.
func (s *shaper) mapValues(n *yaml.Node, f reflect.StructField, pl place) {
	if n.Kind != yaml.MappingNode || s.twice(n, pl) {
		return
	}
	key := pl.path[strings.LastIndex(pl.path, ".")+1:]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		child := place{label: pl.label, path: join(pl.path, k.Value)}
		if each, ok := f.Tag.Lookup("each"); ok {
			child.eg = fmt.Sprintf("%s: {%s: %s}", key, flowText(k.Value), each)
		}
		s.walk(val, f.Type.Elem(), child)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// plainRE is text that YAML reads back as itself, unquoted, in a {map} or [list].
var plainRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9@._/-]*$`)

// flowText writes s so that it reads back as the same text inside a YAML {map} or [list].
func flowText(s string) string {
	if plainRE.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// written is a scalar as a refusal quotes it: a number or true as written, text in quotes.
func written(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!int", "!!float", "!!bool":
		return n.Value
	}
	return strconv.Quote(n.Value)
}

// unquoted is "; write it without quotes: KEY: VALUE" for a number written as text ("0.90").
func unquoted(n *yaml.Node, pl place) string {
	if _, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err != nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	key := pl.eg
	if k, _, ok := strings.Cut(pl.eg, ": "); ok {
		key = k
	}
	if strings.HasPrefix(pl.eg, key+": {") {
		return "" // a value in a map: the example says it
	}
	return fmt.Sprintf("; write it without quotes: %s: %s", key, strings.TrimSpace(n.Value))
}

// number checks a number field: 0.90, not "cheap".
func (s *shaper) number(n *yaml.Node, pl place) {
	var v any
	if n.Kind == yaml.ScalarNode && n.Decode(&v) == nil {
		switch v.(type) {
		case int, uint64, float64:
			return
		}
	}
	if hint := unquoted(n, pl); hint != "" {
		s.addf(n, "%s must be a number, not the text %s%s", pl.subject(), written(n), hint)
		return
	}
	s.addf(n, "%s must be a number, not %s%s", pl.subject(), written(n), pl.example())
}

// duration checks a duration field as Duration reads it: 8h, 1h30m, 2d, or a bare 0.
func (s *shaper) duration(n *yaml.Node, pl place) {
	if n.Kind != yaml.ScalarNode {
		s.addf(n, "%s must be a duration, not %s%s", pl.subject(), written(n), pl.example())
		return
	}
	if strings.TrimSpace(n.Value) == "0" {
		return
	}
	if _, err := ParseDuration(n.Value); err != nil {
		what := "is not a duration"
		if strings.HasSuffix(err.Error(), "is too long") {
			what = "is too long (10 years at most)"
		}
		s.addf(n, "%s %q %s%s", pl.subject(), n.Value, what, pl.example())
	}
}

// wholeNumber checks an integer field: 2, not 2.5, "two" or 1e30.
func (s *shaper) wholeNumber(n *yaml.Node, pl place) {
	var v any
	if n.Kind == yaml.ScalarNode {
		if err := n.Decode(&v); err != nil {
			v = nil
		}
	}
	switch v := v.(type) {
	case int:
		return
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
			return // 2.0 is 2
		}
		if v == math.Trunc(v) {
			s.addf(n, "%s is too large: %s%s", pl.subject(), n.Value, pl.example())
			return
		}
	case uint64:
		s.addf(n, "%s is too large: %s%s", pl.subject(), n.Value, pl.example())
		return
	}
	if hint := unquoted(n, pl); hint != "" && !strings.ContainsAny(n.Value, ".eE") {
		s.addf(n, "%s must be a whole number, not the text %s%s", pl.subject(), written(n), hint)
		return
	}
	s.addf(n, "%s must be a whole number, not %s%s", pl.subject(), written(n), pl.example())
}
