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

// shapeAndKeys checks the document's root node, read from data, against the Policy type: its
// problems, with whether the semantic checks can still read the rest of the file
// past its problems (readable), and, for each problem, the semantic checks' problems that would
// follow from it alone (follow). The file is readable where every problem is a key the policy
// does not know or a value of the wrong kind, which the decoder leaves out as if it were not
// written, and neither is an object's name or user (which everything else refers to it by) nor an
// entry of a list (which the decoder drops, moving every entry after it up); readable is false
// where the check found nothing.
func shapeAndKeys(root *yaml.Node, data []byte) (problems []Problem, follow []meantKey, readable bool) {
	s := &shaper{budget: new(int), lines: strings.Split(string(data), "\n")}
	*s.budget = aliasBudget
	s.walk(root, reflect.TypeOf(Policy{}), place{})
	return s.problems, s.follow, len(s.problems) > 0 && s.readable == len(s.problems)
}

// meantKey is what follows from a problem the semantic checks read past: their problems of the
// object owner ("class train", "team vision", or a section of the policy, "approvals") that name
// key ("max_gpus"; "" for every problem of the object). A problem of the policy's section classes
// is meantKey{"classes", "classes"}: the catalog was not read.
type meantKey struct{ owner, key string }

// unreadClasses is the meantKey of a file whose classes could not be read (classes: misspelled,
// or not a list).
var unreadClasses = meantKey{"classes", "classes"}

// aliasBudget is how many nodes the check reads again through aliases, at most: an alias of an
// alias of … could make it read more than fits in memory.
const aliasBudget = 100000

type shaper struct {
	problems []Problem
	readable int        // how many of the problems the semantic checks can read past
	follow   []meantKey // what follows from those problems
	budget   *int       // nodes left to read through aliases, shared by every shaper of a file
	lines    []string   // the file's lines, for what a value's node leaves out (splitNames)
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

// wrongf refuses n, the value at pl, as a value of the wrong kind: the decoder leaves it out, as
// if it were not written, and the semantic checks' problems of its key follow from it alone
// (max_gpus must be at least 1, for max_gpus: two). The value of an object's name or user, and
// an entry of a list, stop the semantic checks instead.
func (s *shaper) wrongf(n *yaml.Node, pl place, format string, args ...any) {
	s.addf(n, format, args...)
	key := pl.path[strings.LastIndex(pl.path, ".")+1:]
	if pl.path == "" || strings.Contains(key, " entry ") || pl.label != "" && (pl.path == "name" || pl.path == "user") {
		return
	}
	s.readable++
	owner := pl.label
	if owner == "" {
		owner, _, _ = strings.Cut(pl.path, ".")
	}
	s.follow = append(s.follow, meantKey{owner, key})
}

// unknownKey notes what follows from key, a key that n, the object at pl whose keys are keys,
// does not have: the problems of the key it means (max_gpus is missing, for Max_GPUs), unless n
// writes that key too; for a section of the policy (clases:), those of the section. A key that
// means an object's name or user stops the semantic checks.
func (s *shaper) unknownKey(n *yaml.Node, key string, keys []string, pl place) {
	want := ""
	if m := meant(key, keys); strings.HasPrefix(m, "did you mean ") {
		want = strings.TrimSuffix(strings.TrimPrefix(m, "did you mean "), "?")
	} else if strings.HasPrefix(m, "write a space") {
		want, _, _ = strings.Cut(key, ":")
	}
	top := pl.label == "" && pl.path == ""
	if !top && (want == "name" || want == "user") {
		return
	}
	s.readable++
	switch {
	case want != "" && mappingValueNode(n, want) != nil:
		// The key meant is written as well: what is wrong with it is its own.
	case top && want != "":
		s.follow = append(s.follow, meantKey{want, want})
	case !top:
		owner, _, _ := strings.Cut(pl.owner(), ":")
		s.follow = append(s.follow, meantKey{owner, want})
	}
}

// mappingValueNode is the value n, a map, writes for key; nil where it writes none.
func mappingValueNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Kind == yaml.ScalarNode && n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
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
			s.wrongf(n, pl, "%s must be a map, not %s%s", pl.subject(), written(n), pl.example())
		case t.Kind() == reflect.Struct:
			s.object(n, t, pl)
		}
	case t.Kind() == reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			s.list(n, t, pl)
			if t.Elem().Kind() == reflect.String && groupLists[pl.path[strings.LastIndex(pl.path, ".")+1:]] {
				s.splitNames(n, pl)
			}
		} else {
			s.notList(n, t, pl)
		}
	case t.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			s.wrongf(n, pl, "%s must be text, not %s%s", pl.subject(), written(n), pl.example())
		}
	case t.Kind() == reflect.Int:
		s.wholeNumber(n, pl)
	case t.Kind() == reflect.Float64:
		s.number(n, pl)
	case t.Kind() == reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			s.wrongf(n, pl, "%s must be true or false, not %s%s", pl.subject(), written(n), pl.example())
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
	sub := &shaper{budget: s.budget, lines: s.lines}
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
			s.unknownKey(n, k.Value, keys, pl)
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
		if whole, next := s.cutName(n, i, fields); next > i+2 {
			// The value is a distinguished name that the map in braces cut at its commas.
			s.walk(whole, f.Type, child)
			i = next - 2
			continue
		}
		s.walk(val, f.Type, child)
		if f.Type.Kind() == reflect.Map {
			s.mapValues(val, f, child)
		}
	}
}

// cutName reads a distinguished name written without quotes as the value of a list in a map in
// braces ({name: ml, idp_groups: cn=ml,ou=groups,dc=corp}), which YAML cuts at its commas: its
// first part is the value, and each part after it a key of the map without a value. whole is the
// value as written, and next the index of the key after its last part; next is i+2 where the
// value at n.Content[i+1] is no such name.
func (s *shaper) cutName(n *yaml.Node, i int, fields map[string]reflect.StructField) (whole *yaml.Node, next int) {
	val := n.Content[i+1]
	f := fields[n.Content[i].Value]
	if n.Style&yaml.FlowStyle == 0 || f.Type == nil || f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() != reflect.String ||
		val.Kind != yaml.ScalarNode || val.Style != 0 || rdnAttr(val.Value) == "" {
		return val, i + 2
	}
	text, prev, next := val.Value, val, i+2
	for ; next+1 < len(n.Content); next += 2 {
		k, v := n.Content[next], n.Content[next+1]
		if _, known := fields[k.Value]; known || k.Kind != yaml.ScalarNode || k.Style != 0 || rdnAttr(k.Value) == "" ||
			v.Kind != yaml.ScalarNode || v.ShortTag() != "!!null" || v.Value != "" {
			break
		}
		text += s.separator(prev, k) + k.Value
		prev = k
	}
	w := *val
	w.Value = text
	return &w, next
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
		// The text's pieces between commas, as written, and the names they make: the pieces of
		// a distinguished name (cn=ml,ou=groups,dc=corp) are one name, in quotes.
		text := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(n.Value), "["), "]")
		var pieces []string
		for _, piece := range strings.Split(text, ",") {
			if strings.TrimSpace(piece) != "" {
				pieces = append(pieces, piece)
			}
		}
		var items []string
		for _, r := range nameRuns(pieces) {
			items = append(items, flowText(strings.TrimSpace(strings.Join(pieces[r[0]:r[1]], ","))))
		}
		if len(items) > 0 {
			key := pl.path[strings.LastIndex(pl.path, ".")+1:]
			eg = fmt.Sprintf("; e.g. %s: [%s]", key, strings.Join(items, ", "))
		}
	}
	s.wrongf(n, pl, "%s must be a list, not %s%s", pl.subject(), written(n), eg)
}

// rdnRE is one part of an LDAP distinguished name as directories name groups with it: an
// attribute (cn, ou, dc, o, uid, …, in any case), = and a value (cn=ml-research, OU=Groups).
var rdnRE = regexp.MustCompile(`(?i)^\s*(cn|ou|dc|o|uid|c|l|st|street)\s*=\s*\S`)

// rdnAttr is the attribute of a part of a distinguished name, in lower case, or "" where piece is
// no such part.
func rdnAttr(piece string) string {
	m := rdnRE.FindStringSubmatch(piece)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// nameRuns groups pieces (a text cut at its commas, in order) into the names they were written
// as, each as the range [from, to) of its pieces: the parts of a distinguished name that follow
// one another are one name (cn=ml, ou=groups, dc=corp), any other piece a name of its own. A
// part that names an entry (cn=, uid=, ou=) after one that names the domain or organization a
// name ends with (dc=, o=, c=) begins another name: cn=a,dc=corp,cn=b,dc=corp is two.
func nameRuns(pieces []string) [][2]int {
	var runs [][2]int
	prev := ""
	ends := func(a string) bool { return a == "dc" || a == "o" || a == "c" }
	for i, piece := range pieces {
		attr := rdnAttr(piece)
		if attr != "" && prev != "" && !(ends(prev) && !ends(attr)) {
			runs[len(runs)-1][1] = i + 1
		} else {
			runs = append(runs, [2]int{i, i + 1})
		}
		prev = attr
	}
	return runs
}

// groupLists are the keys of the lists that name groups: a team's idp_groups and budget_owners,
// approvals.fallback_approvers, oidc.admins and a directory entry's groups.
var groupLists = map[string]bool{"idp_groups": true, "budget_owners": true, "fallback_approvers": true, "admins": true, "groups": true}

// splitNames refuses a list of groups in brackets whose entries, without quotes, are the parts of
// a distinguished name (idp_groups: [cn=ml,ou=groups,dc=corp]): YAML cuts it at its commas into
// groups nobody is in (cn=ml, ou=groups, dc=corp), and the team would have no members without a
// word. The example is the list with each such name whole, in quotes.
func (s *shaper) splitNames(n *yaml.Node, pl place) {
	if n.Style&yaml.FlowStyle == 0 {
		return // a list of lines: each line's commas are the name's own
	}
	var pieces []string
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode {
			return // refused as an entry of the wrong kind
		}
		pieces = append(pieces, item.Value)
	}
	var items, names, parts []string
	for _, r := range nameRuns(pieces) {
		split := r[1]-r[0] > 1
		for _, item := range n.Content[r[0]:r[1]] {
			split = split && item.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
		}
		if !split {
			for _, item := range n.Content[r[0]:r[1]] {
				items = append(items, flowText(item.Value))
			}
			continue
		}
		name := pieces[r[0]]
		for i := r[0] + 1; i < r[1]; i++ {
			name += s.separator(n.Content[i-1], n.Content[i]) + pieces[i]
		}
		items = append(items, flowText(name))
		names = append(names, strconv.Quote(name))
		parts = append(parts, pieces[r[0]:r[1]]...)
	}
	if len(names) == 0 {
		return
	}
	key := pl.path[strings.LastIndex(pl.path, ".")+1:]
	s.addf(n, "%s reads %s as %s (%s) that nobody is in, as YAML splits a list in brackets at each comma; write %s in quotes, e.g. %s: [%s]",
		pl.subject(), JoinList(names, "and"), Count(len(parts), "group", "groups"), JoinList(parts, "and"),
		Agree(len(names), "the distinguished name", "each distinguished name"), key, strings.Join(items, ", "))
}

// separator is what the file writes between two entries of a list in brackets, such as ", " or
// ",": where they are on one line, the text between them; else a comma.
func (s *shaper) separator(a, b *yaml.Node) string {
	if a.Line != b.Line || a.Line < 1 || a.Line > len(s.lines) || a.Column < 1 {
		return ","
	}
	line := []rune(s.lines[a.Line-1])
	from, to := a.Column-1+len([]rune(a.Value)), b.Column-1
	if to > len(line) || from > to || string(line[a.Column-1:from]) != a.Value {
		return ","
	}
	if sep := string(line[from:to]); strings.TrimSpace(sep) == "," {
		return sep
	}
	return ","
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
		s.wrongf(n, pl, "%s must be a number, not the text %s%s", pl.subject(), written(n), hint)
		return
	}
	s.wrongf(n, pl, "%s must be a number, not %s%s", pl.subject(), written(n), pl.example())
}

// duration checks a duration field as Duration reads it: 8h, 1h30m, 2d, or a bare 0.
func (s *shaper) duration(n *yaml.Node, pl place) {
	if n.Kind != yaml.ScalarNode {
		s.wrongf(n, pl, "%s must be a duration, not %s%s", pl.subject(), written(n), pl.example())
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
		s.wrongf(n, pl, "%s %q %s%s", pl.subject(), n.Value, what, pl.example())
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
			s.wrongf(n, pl, "%s is too large: %s%s", pl.subject(), n.Value, pl.example())
			return
		}
	case uint64:
		s.wrongf(n, pl, "%s is too large: %s%s", pl.subject(), n.Value, pl.example())
		return
	}
	if hint := unquoted(n, pl); hint != "" && !strings.ContainsAny(n.Value, ".eE") {
		s.wrongf(n, pl, "%s must be a whole number, not the text %s%s", pl.subject(), written(n), hint)
		return
	}
	s.wrongf(n, pl, "%s must be a whole number, not %s%s", pl.subject(), written(n), pl.example())
}
