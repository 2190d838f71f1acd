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
	s := &shaper{}
	s.walk(root, reflect.TypeOf(Policy{}), place{})
	return s.problems
}

type shaper struct {
	problems []Problem
}

// place is where a node stands, in the words of a refusal.
type place struct {
	label string // the object it belongs to: "class notebook", "team vision"; "" for the policy
	path  string // its keys within that object: "quota.gpus.notebook", "idle.utilization_below"
	eg    string // an example that works in its place: "max_gpus: 2"
}

// subject is the place as a refusal starts: "class notebook: max_gpus".
func (pl place) subject() string {
	if pl.label == "" {
		return pl.path
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
// or else the known keys.
func meant(key string, keys []string) string {
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
	return "its keys are " + strings.Join(keys, ", ")
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
		return // checked where its anchor is written
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
		return // its UnmarshalYAML refuses a bad one
	case t.Kind() == reflect.Struct:
		if n.Kind == yaml.MappingNode {
			s.object(n, t, pl)
		}
	case t.Kind() == reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			s.list(n, t, pl)
		}
	case t.Kind() == reflect.Int:
		s.wholeNumber(n, pl)
	}
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
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.ShortTag() == "!!merge" {
			continue // a merge of an anchor's keys, checked where the anchor is written
		}
		f, ok := fields[k.Value]
		if !ok {
			s.addf(k, "%s has no key %s; %s", pl.owner(), k.Value, meant(k.Value, keys))
			continue
		}
		child := place{label: pl.label, path: join(pl.path, k.Value)}
		if eg, ok := f.Tag.Lookup("eg"); ok {
			child.eg = k.Value + ": " + eg
		}
		if kind, ok := objectKinds[k.Value]; ok && val.Kind == yaml.SequenceNode {
			s.objects(val, f.Type.Elem(), kind)
			continue
		}
		s.walk(val, f.Type, child)
		if f.Type.Kind() == reflect.Map {
			s.mapValues(val, f, child)
		}
	}
}

// objects checks each entry of a list of objects (classes, teams): each is a place of its own.
func (s *shaper) objects(n *yaml.Node, t reflect.Type, kind string) {
	for i, item := range n.Content {
		label := fmt.Sprintf("%s %d", kind, i+1)
		if name := mappingValue(item, "name", "user"); name != "" {
			label = kind + " " + name
		}
		s.walk(item, t, place{label: label})
	}
}

// list checks each entry of a list of plain values.
func (s *shaper) list(n *yaml.Node, t reflect.Type, pl place) {
	for i, item := range n.Content {
		s.walk(item, t.Elem(), place{label: pl.label, path: fmt.Sprintf("%s entry %d", pl.path, i+1), eg: pl.eg})
	}
}

// mapValues checks the values of a map field, each with the field's each example: gpus: {notebook: 2}.
func (s *shaper) mapValues(n *yaml.Node, f reflect.StructField, pl place) {
	if n.Kind != yaml.MappingNode {
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
	s.addf(n, "%s must be a whole number, not %s%s", pl.subject(), written(n), pl.example())
}
