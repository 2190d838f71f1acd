package policy

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/parser"
)

// RuleCostLimit is the most one exception rule may cost to evaluate, in CEL's cost units (about
// one per comparison, field read or list element visited; more for long strings). policy check
// refuses a rule whose estimated cost is over it. The costliest rule it allows took about 18 ms of
// one core on a test machine.
const RuleCostLimit = 100_000

// RuleRunLimit is where evaluation stops a rule: twice RuleCostLimit, as CEL's estimate of some
// functions (matches) is below what they really cost; a rule that reaches it (its input larger
// than the estimate assumed) counts as fired, and a person decides.
const RuleRunLimit = 2 * RuleCostLimit

// The largest inputs a rule is assumed to see when its cost is estimated. The team's lists are as
// long as the policy makes them; user.groups is assumed to hold at most RuleMaxGroups groups, and
// every string at most RuleMaxStringSize characters. A larger input is still bounded at run time,
// by RuleRunLimit: the rule then counts as fired, and a person decides.
const (
	RuleMaxGroups     = 500
	RuleMaxStringSize = 256
)

// interruptEvery is how many comprehension steps a rule takes between looks at its request's
// context: a request that is abandoned stops its rules soon after.
const interruptEvery = 100

// RuleUnevaluated is what a requester is told when a rule could not be evaluated (it ran over its
// cost limit, or its request was abandoned): the request waits for a person all the same.
const RuleUnevaluated = "the rule could not be checked for this request, so a person decides"

// Rule is a published exception rule: a request it matches waits for a budget owner.
type Rule struct {
	Name string `yaml:"name" eg:"large-request"`
	When string `yaml:"when" eg:"request.gpus > class.max_gpus"`
	Why  string `yaml:"why" eg:"More GPUs than the class allows without approval"`

	// Cost is the rule's estimated cost at most, in CEL's cost units (see RuleCostLimit).
	Cost uint64 `yaml:"-"`

	prog cel.Program
	ast  *celast.AST // checked
	line int         // the line of its when, for warnings found after loading (TemplateWarnings)
}

// The variables exception rules see. Field names are the CEL names.

// RequestKinds are the values rules see as request.kind: a lease asked for, and the extension of
// one. A quota increase is decided by a budget owner without the rules, so no rule sees it.
var RequestKinds = []string{"lease", "extend"}

// RuleRequest is `request` in an exception rule.
type RuleRequest struct {
	Kind        string        `cel:"kind"` // one of RequestKinds
	GPUs        int64         `cel:"gpus"`
	Class       string        `cel:"class"`
	Duration    time.Duration `cel:"duration"`
	GPUHours    float64       `cel:"gpu_hours"`
	Reservation bool          `cel:"reservation"`
	DataClass   string        `cel:"data_class"`
	Template    string        `cel:"template"`
}

// RuleUser is `user` in an exception rule.
type RuleUser struct {
	Name   string   `cel:"name"`
	Groups []string `cel:"groups"`
}

// RuleQuota is `team.quota` in an exception rule.
type RuleQuota struct {
	GPUs            map[string]int64 `cel:"gpus"`
	GPUHoursPerWeek float64          `cel:"gpu_hours_per_week"`
}

// RuleTeam is `team` in an exception rule.
type RuleTeam struct {
	Name         string    `cel:"name"`
	DataClasses  []string  `cel:"data_classes"`
	BudgetOwners []string  `cel:"budget_owners"`
	Quota        RuleQuota `cel:"quota"`
}

// RuleUsage is `usage` in an exception rule: what the team holds now.
type RuleUsage struct {
	GPUsInUse    int64   `cel:"gpus_in_use"` // of the requested class
	GPUsTotal    int64   `cel:"gpus_total"`  // of all classes
	GPUHoursWeek float64 `cel:"gpu_hours_week"`
}

// RuleClass is `class` in an exception rule.
type RuleClass struct {
	Name            string        `cel:"name"`
	SKU             string        `cel:"sku"`
	Isolation       string        `cel:"isolation"`
	MaxGPUs         int64         `cel:"max_gpus"`
	MaxDuration     time.Duration `cel:"max_duration"`
	PricePerGPUHour float64       `cel:"price_per_gpu_hour"`
}

// RuleInput is everything a rule sees.
type RuleInput struct {
	Request RuleRequest
	User    RuleUser
	Team    RuleTeam
	Usage   RuleUsage
	Class   RuleClass
}

// Match is a rule that fired.
// DefaultWhy is the why of a rule written without one: its name, for the places that show a
// why alone. Where a rule is named, such a why is not shown beside its name (Match.Named).
func DefaultWhy(rule string) string { return "Rule " + rule }

// Named is the rule's name with its why in parentheses, "too-big (Bigger than the class
// allows)", or its name alone when it was written without a why.
func (m Match) Named() string {
	if m.Why == "" || m.Why == DefaultWhy(m.Rule) {
		return m.Rule
	}
	return m.Rule + " (" + m.Why + ")"
}

// Labeled is the rule's name, a colon and its why, "too-big: Bigger than the class allows", or
// its name alone when it was written without a why.
func (m Match) Labeled() string {
	if m.Why == "" || m.Why == DefaultWhy(m.Rule) {
		return m.Rule
	}
	return m.Rule + ": " + m.Why
}

type Match struct {
	Rule string
	// Why is what the requester and the approvers are told.
	Why string
	// Err, when set, is why the rule could not be evaluated (so it counts as fired). It is for the
	// operator's log, never for chat.
	Err error
}

type ruleSet struct {
	rules []*Rule
}

func newEnv() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(
			reflect.TypeFor[RuleRequest](), reflect.TypeFor[RuleUser](), reflect.TypeFor[RuleTeam](),
			reflect.TypeFor[RuleQuota](), reflect.TypeFor[RuleUsage](), reflect.TypeFor[RuleClass](),
			ext.ParseStructTags(true)),
		cel.Variable("request", cel.ObjectType("policy.RuleRequest")),
		cel.Variable("user", cel.ObjectType("policy.RuleUser")),
		cel.Variable("team", cel.ObjectType("policy.RuleTeam")),
		cel.Variable("usage", cel.ObjectType("policy.RuleUsage")),
		cel.Variable("class", cel.ObjectType("policy.RuleClass")),
		// request.gpu_hours > 100 compares a double with an int: allowed, as anyone writing a
		// rule expects. Arithmetic still wants one type (request.gpu_hours * 2.0).
		cel.CrossTypeNumericComparisons(true),
	)
}

// compileRules compiles the policy's exception rules. line is the line of a dotted path; pos is
// where the file writes a character of a text value (validator.scalarPos), so that a mistake in a
// rule written over several lines is named at its own line.
func compileRules(p *Policy, line func(string) int, pos func(path string, off int) (int, int, bool)) (*ruleSet, []Problem) {
	env, err := newEnv()
	if err != nil {
		return nil, []Problem{{Msg: "exception rules cannot be compiled: " + err.Error()}}
	}
	var problems []Problem
	sizes := sizesFor(p)
	names := map[string]bool{}
	for i, r := range p.Exceptions {
		at := fmt.Sprintf("exceptions.%d", i)
		if r == nil {
			problems = append(problems, Problem{Line: line(at), Msg: fmt.Sprintf("exception rule %d is empty", i+1)})
			continue
		}
		if strings.TrimSpace(r.Name) == "" {
			problems = append(problems, Problem{Line: line(at), Msg: fmt.Sprintf("exception rule %d needs a name; e.g. name: large-request", i+1)})
		} else if strings.ContainsFunc(r.Name, func(c rune) bool { return c == ',' || !unicode.IsGraphic(c) }) {
			// Replies and the approvers' cards list the rules a request met separated by
			// commas, on one line.
			problems = append(problems, Problem{Line: line(at + ".name"), Msg: fmt.Sprintf("exception rule name %q may not hold a comma, a line break or an invisible character; e.g. name: large-request", r.Name)})
		} else if names[r.Name] {
			problems = append(problems, Problem{Line: line(at + ".name"), Msg: fmt.Sprintf("exception rule %q is defined twice", r.Name)})
		}
		names[r.Name] = true
		r.line = line(at + ".when")
		if strings.TrimSpace(r.When) == "" {
			problems = append(problems, Problem{Line: line(at), Msg: fmt.Sprintf("exception rule %q needs a when: expression", r.Name)})
			continue
		}
		// mistake is a problem at loc in the rule's when. A rule written over several lines is
		// named at the line of the file that holds the mistake, and the column of that line.
		mistake := func(loc common.Location, msg string) Problem {
			pr := Problem{Line: line(at + ".when"), Msg: fmt.Sprintf("exception rule %q, at column %d of its when: %s", r.Name, loc.Column()+1, msg)}
			if fl, fc, ok := pos(at+".when", runeOffset(r.When, loc.Line(), loc.Column())); ok && fl != pr.Line {
				pr.Line = fl
				pr.Msg = fmt.Sprintf("exception rule %q, at column %d of this line: %s", r.Name, fc, msg)
			}
			return pr
		}
		ast, iss := env.Compile(r.When)
		if iss != nil && iss.Err() != nil {
			syntax := false
			for _, e := range iss.Errors() {
				if strings.HasPrefix(e.Message, "Syntax error:") {
					if syntax {
						continue // the parser's next complaints follow from its first
					}
					syntax = true
				}
				problems = append(problems, mistake(e.Location, ruleMessage(e.Message)+fieldHint(r.When, e.Message)+syntaxHint(r.When, e.Message)+overloadHint(env, r.When, e.Location, e.Message)+arithmeticHint(env, r.When, e.Location, e.Message)+variableHint(r.When, e.Message)))
			}
			continue
		}
		if bad := append(quotaOfNoClass(ast.NativeRep(), p), badDurations(ast.NativeRep())...); len(bad) > 0 {
			for _, b := range bad {
				problems = append(problems, mistake(b.loc, b.msg))
			}
			continue
		}
		if ast.OutputType() != cel.BoolType {
			problems = append(problems, Problem{Line: line(at + ".when"),
				Msg: fmt.Sprintf("exception rule %q must give true or false, but its when gives %s", r.Name, ast.OutputType())})
			continue
		}
		est, err := env.EstimateCost(ast, sizes)
		if err != nil {
			problems = append(problems, Problem{Line: line(at + ".when"), Msg: fmt.Sprintf("exception rule %q: its cost cannot be estimated: %v", r.Name, err)})
			continue
		}
		if est.Max > RuleCostLimit {
			problems = append(problems, Problem{Line: line(at + ".when"),
				Msg: fmt.Sprintf("exception rule %q could cost %s to evaluate, over the limit of %d; write it with fewer nested exists/all/map/filter over lists, e.g. %s",
					r.Name, costWords(est.Max), uint64(RuleCostLimit), cheapRuleExample(p))})
			continue
		}
		r.Cost = est.Max
		prg, err := env.Program(ast, cel.CostLimit(RuleRunLimit), cel.InterruptCheckFrequency(interruptEvery), cel.EvalOptions(cel.OptOptimize))
		if err != nil {
			problems = append(problems, Problem{Line: line(at + ".when"), Msg: fmt.Sprintf("exception rule %q: %v", r.Name, err)})
			continue
		}
		r.prog, r.ast = prg, ast.NativeRep()
		if r.Why == "" {
			r.Why = DefaultWhy(r.Name)
		}
	}
	return &ruleSet{rules: p.Exceptions}, problems
}

// keyMistake is a read of team.quota.gpus for a name that is no class, and where it is.
type keyMistake struct {
	loc common.Location
	msg string
}

// quotaOfNoClass finds the reads of team.quota.gpus, in a checked rule, for a name written in the
// rule that is no class of the catalog (team.quota.gpus['h100'], team.quota.gpus.h100): the map
// holds every class and nothing else, so such a read fails on every request that reaches it, and
// the rule could never be checked. has(), in and optional reads are tests, and are left alone.
func quotaOfNoClass(a *celast.AST, p *Policy) []keyMistake {
	isQuotaGPUs := func(e celast.Expr) bool {
		var path []string
		for e.Kind() == celast.SelectKind && !e.AsSelect().IsTestOnly() {
			path = append([]string{e.AsSelect().FieldName()}, path...)
			e = e.AsSelect().Operand()
		}
		return e.Kind() == celast.IdentKind && e.AsIdent() == "team" && slices.Equal(path, []string{"quota", "gpus"})
	}
	classes := p.ClassNames()
	if len(classes) == 0 {
		return nil // a catalog of no classes, or classes the file could not give, is refused once
	}
	var out []keyMistake
	check := func(id int64, key string) {
		if slices.Contains(classes, key) || p.renamedClass(key) {
			return
		}
		msg := fmt.Sprintf("team.quota.gpus has no class '%s'", key) + noClassHint(key, classes, "its classes are")
		out = append(out, keyMistake{loc: a.SourceInfo().GetStartLocation(id), msg: msg})
	}
	celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.CallKind:
			c := e.AsCall()
			if c.FunctionName() != operators.Index || len(c.Args()) != 2 || !isQuotaGPUs(c.Args()[0]) {
				return
			}
			if k := c.Args()[1]; k.Kind() == celast.LiteralKind {
				if key, ok := k.AsLiteral().(types.String); ok {
					check(k.ID(), string(key))
				}
			}
		case celast.SelectKind:
			if sel := e.AsSelect(); !sel.IsTestOnly() && isQuotaGPUs(sel.Operand()) {
				check(e.ID(), sel.FieldName())
			}
		}
	}))
	return out
}

// noClassHint is what a mistake that names no class of classes ends with: the class meant, when
// one is close ("; did you mean 'h200_big'?"), else the classes, after list ("; its classes are …").
// A class refused for its name (cuaderno-l4é) is offered as its refusal says to write it
// (cuaderno-l4e), or not at all when it says none, never as the name just refused.
func noClassHint(name string, classes []string, list string) string {
	var told []string
	for _, c := range classes {
		if c = toldClassName(c); c != "" {
			told = append(told, c)
		}
	}
	classes = told
	if best := Closest(strings.ToLower(name), classes); best != "" {
		return fmt.Sprintf("; did you mean '%s'?", best)
	}
	// A class defined twice (refused on its own) is listed once.
	var once []string
	for _, c := range classes {
		if !slices.ContainsFunc(once, func(o string) bool { return strings.EqualFold(o, c) }) {
			once = append(once, c)
		}
	}
	return "; " + list + " " + strings.Join(once, ", ")
}

// ruleLiteralWarnings finds comparisons in rules that never hold for a name written in them: the
// class (request.class, class.name) with a name that is no class of the catalog, a data class
// (request.data_class, team.data_classes) with one written with capitals, as rules see data classes
// in lower case, class.isolation with neither shared nor exclusive, team.name with a name in
// capitals or a letter or two from a listed team's, and class.sku with a SKU in other capitals. The request such a comparison was written to stop is granted without approval.
func ruleLiteralWarnings(p *Policy, line func(string) int) []Problem {
	classes := p.ClassNames()
	var teams, skus, groups []string
	for _, t := range p.Teams {
		if t != nil {
			teams = append(teams, t.Name)
		}
	}
	for _, c := range p.Classes {
		if c != nil && c.SKU != "" {
			skus = append(skus, c.SKU)
		}
	}
	for _, d := range p.Directory {
		if d != nil {
			groups = append(groups, d.Groups...)
		}
	}
	var out []Problem
	for i, r := range p.Exceptions {
		if r == nil || r.ast == nil {
			continue
		}
		seen := map[string]bool{}
		warn := func(msg string) {
			if !seen[msg] {
				seen[msg] = true
				out = append(out, Problem{Line: line(fmt.Sprintf("exceptions.%d.when", i)), Msg: fmt.Sprintf("exception rule %q: %s", r.Name, msg)})
			}
		}
		eachComparison(r, func(what, name string) {
			switch what {
			case "request.class", "class.name":
				if slices.Contains(classes, name) || p.renamedClass(name) {
					return
				}
				warn(fmt.Sprintf("%s is compared with '%s', which is no class, so it never matches one", what, name) + noClassHint(name, classes, "the classes are"))
			case "request.kind":
				if slices.Contains(RequestKinds, name) {
					return
				}
				hint := fmt.Sprintf("; request.kind is '%s'", strings.Join(RequestKinds, "' or '"))
				if low := strings.ToLower(strings.TrimSpace(name)); slices.Contains(RequestKinds, low) {
					hint = fmt.Sprintf("; write '%s'", low)
				}
				warn(fmt.Sprintf("request.kind is compared with '%s', which rules never see, so it never matches", name) + hint)
			case "user.name":
				if low := NameKey(name); low != name {
					warn(fmt.Sprintf("rules see user.name in lower case, so '%s' never matches it; write '%s'", name, low))
				}
			case "team.budget_owners":
				if low := NameKey(name); low != name {
					warn(fmt.Sprintf("rules see team.budget_owners in lower case, so '%s' never matches one; write '%s'", name, low))
				}
			case "class.isolation":
				if name == "shared" || name == "exclusive" {
					return
				}
				hint := "; class.isolation is 'shared' or 'exclusive'"
				if low := strings.ToLower(strings.TrimSpace(name)); low == "shared" || low == "exclusive" {
					hint = fmt.Sprintf("; write '%s'", low)
				}
				warn(fmt.Sprintf("class.isolation is compared with '%s', which it never is, so it never matches", name) + hint)
			case "team.name":
				if low := strings.ToLower(name); low != name {
					warn(fmt.Sprintf("team names are in lower case, so '%s' never matches one; write '%s'", name, low))
					return
				}
				// A name far from every listed team's may be a team the policy does not
				// list, named after a group: only one a letter or two from a listed team's,
				// and no group of the directory, is a mistake for sure.
				if slices.Contains(teams, name) || slices.ContainsFunc(groups, func(g string) bool { return strings.EqualFold(g, name) }) {
					return
				}
				if best := Closest(name, teams); best != "" {
					warn(fmt.Sprintf("team.name is compared with '%s', which is no team, so it never matches one; did you mean '%s'?", name, best))
				}
			case "class.sku":
				if slices.Contains(skus, name) {
					return
				}
				for _, sku := range skus {
					if strings.EqualFold(sku, name) {
						warn(fmt.Sprintf("class.sku is compared with '%s', which is no class's SKU, so it never matches one; write '%s'", name, sku))
						break
					}
				}
			case "request.data_class", "team.data_classes":
				if low := strings.ToLower(name); low != name {
					warn(fmt.Sprintf("rules see data classes in lower case, so '%s' never matches one; write '%s'", name, low))
				}
			case "request.template":
				// Template names are in lower case; whether one is in the catalog,
				// TemplateWarnings says.
				if low := strings.ToLower(name); low != name {
					warn(fmt.Sprintf("template names are in lower case, so '%s' never matches one; write '%s'", name, low))
				}
			}
		})
	}
	return out
}

// TemplateWarnings finds comparisons of request.template, in the policy's rules, with a name that
// is no template of the catalog (its template names): such a rule never matches, so the request
// it was written to stop is granted without approval. Each warning is at the rule's line, with
// the template meant or some of those there are. No template (”) and a name written with
// capitals (warned of when the policy loads) are left alone.
func (p *Policy) TemplateWarnings(catalog []string) []Problem {
	var out []Problem
	for _, r := range p.Exceptions {
		if r == nil || r.ast == nil {
			continue
		}
		seen := map[string]bool{}
		eachComparison(r, func(what, name string) {
			if what != "request.template" || name == "" || strings.ToLower(name) != name || slices.Contains(catalog, name) || seen[name] {
				return
			}
			seen[name] = true
			hint := "; the templates are " + FewNames(name, catalog, "and")
			best := Closest(name, catalog)
			for _, t := range catalog {
				if best == "" && strings.HasPrefix(t, name+"-") {
					best = t // vllm for vllm-server
				}
			}
			if best != "" {
				hint = fmt.Sprintf("; did you mean '%s'?", best)
			}
			out = append(out, Problem{Line: r.line, Msg: fmt.Sprintf("exception rule %q: request.template is compared with '%s', which is no template of the catalog, so it never matches one%s", r.Name, name, hint)})
		})
	}
	return out
}

// eachComparison calls fn with each field rule r compares with a text written in it (==, != or
// in: "request.template", "cuda-smoke"), once for each text.
func eachComparison(r *Rule, fn func(what, name string)) {
	compare := func(subject celast.Expr, lits []celast.Expr) {
		what := ruleVar(subject)
		for _, l := range lits {
			if l.Kind() != celast.LiteralKind {
				continue
			}
			if v, ok := l.AsLiteral().(types.String); ok {
				fn(what, string(v))
			}
		}
	}
	celast.PreOrderVisit(r.ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind {
			return
		}
		c := e.AsCall()
		if len(c.Args()) != 2 {
			return
		}
		a, b := c.Args()[0], c.Args()[1]
		switch c.FunctionName() {
		case operators.Equals, operators.NotEquals:
			compare(a, []celast.Expr{b})
			compare(b, []celast.Expr{a})
		case operators.In: // x in [..] or 'x' in team.data_classes
			if b.Kind() == celast.ListKind {
				compare(a, b.AsList().Elements())
			}
			compare(b, []celast.Expr{a})
		}
	}))
}

// ruleVar is the variable and field an expression reads ("request.class"), or "".
func ruleVar(e celast.Expr) string {
	if e.Kind() != celast.SelectKind || e.AsSelect().IsTestOnly() {
		return ""
	}
	op := e.AsSelect().Operand()
	if op.Kind() != celast.IdentKind {
		return ""
	}
	return op.AsIdent() + "." + e.AsSelect().FieldName()
}

// badDurations finds the durations a rule writes that CEL cannot read (duration('2d'): the policy
// writes days and weeks, CEL does not), which would make the rule fail on every request, and says
// each as CEL reads it.
func badDurations(a *celast.AST) []keyMistake {
	var out []keyMistake
	celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind || e.AsCall().FunctionName() != "duration" || len(e.AsCall().Args()) != 1 {
			return
		}
		arg := e.AsCall().Args()[0]
		if arg.Kind() != celast.LiteralKind {
			return
		}
		text, ok := arg.AsLiteral().(types.String)
		if !ok {
			return
		}
		if _, err := time.ParseDuration(string(text)); err == nil {
			return
		}
		msg := fmt.Sprintf("duration('%s') is not a duration CEL reads, which knows only h, m, s, ms, us and ns; ", text)
		if d, err := ParseDuration(string(text)); err == nil && d > 0 {
			msg += fmt.Sprintf("write duration('%s')", celDuration(d))
		} else {
			msg += "e.g. duration('36h')"
		}
		out = append(out, keyMistake{loc: a.SourceInfo().GetStartLocation(arg.ID()), msg: msg})
	}))
	return out
}

// celDuration writes d as CEL's duration() reads it, in hours, minutes and seconds, leaving out
// those that are zero: 24h30m, 48h, 90s.
func celDuration(d time.Duration) string {
	if d <= 0 || d%time.Second != 0 {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}

// overloadRE matches CEL's complaint about an operator between values of two types.
var overloadRE = regexp.MustCompile(`^found no matching overload for '(_[^']*_)' applied to '\((\w+), (\w+)\)'`)

// overloadHint, for a comparison of a duration, a number or true/false with a value written in
// quotes (a text, which CEL compares with none of them), says how the value is written: the
// duration in duration() (request.duration > '12h' is request.duration > duration('12h')), the
// number and true/false without quotes; and for a duration compared with a bare number, that a
// duration compares with a duration. loc is where CEL places the mistake: its operator.
func overloadHint(env *cel.Env, when string, loc common.Location, msg string) string {
	m := overloadRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	op, left, right := m[1], m[2], m[3]
	typ, other := left, right
	if left == "string" {
		typ, other = right, left
	}
	if other != "string" {
		if typ == "duration" && (other == "int" || other == "double" || other == "uint") || (other == "duration" && (typ == "int" || typ == "double" || typ == "uint")) {
			return "; a duration compares with a duration, e.g. request.duration > duration('12h')"
		}
		return ""
	}
	// The text compared: the string literal beside the operator CEL names.
	text, found := "", false
	if parsed, iss := env.Parse(when); iss == nil || iss.Err() == nil {
		a := parsed.NativeRep()
		celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
			if found || e.Kind() != celast.CallKind || e.AsCall().FunctionName() != op {
				return
			}
			at := a.SourceInfo().GetStartLocation(e.ID())
			if at.Line() != loc.Line() || at.Column() != loc.Column() {
				return
			}
			for _, arg := range e.AsCall().Args() {
				if arg.Kind() != celast.LiteralKind {
					continue
				}
				if v, ok := arg.AsLiteral().(types.String); ok {
					text, found = string(v), true
				}
			}
		}))
	}
	if !found {
		return "" // a field of text, not a value written in quotes
	}
	switch typ {
	case "duration":
		if d, err := ParseDuration(strings.TrimSpace(text)); err == nil && d > 0 {
			return fmt.Sprintf("; write the duration as duration('%s')", celDuration(d))
		}
		return "; a duration is written duration('12h'), e.g. request.duration > duration('12h')"
	case "bool":
		return "; true and false are written without quotes: request.reservation is true or false, so write request.reservation, or !request.reservation for its opposite"
	case "int", "double", "uint":
		if _, err := strconv.ParseFloat(strings.TrimSpace(text), 64); err == nil {
			return fmt.Sprintf("; a number is written without quotes: write %s", strings.TrimSpace(text))
		}
		return "; a number is written without quotes, e.g. request.gpus > 4"
	}
	return ""
}

// ruleMessage is CEL's complaint in the words a policy's author reads: without its note of the
// container a name was looked up in, which a policy never sets.
func ruleMessage(msg string) string { return strings.Replace(msg, " (in container '')", "", 1) }

// ruleVariables are the variables exception rules see, in the order the docs name them.
var ruleVariables = []string{"request", "user", "team", "usage", "class"}

// undeclaredRE matches CEL's complaint about a name that is no variable rules see.
var undeclaredRE = regexp.MustCompile(`^undeclared reference to '([A-Za-z_][A-Za-z0-9_]*)'`)

// variableHint, for a name rules do not see (now, requests), names those they see: the one meant
// where the name is a slip of it, with the fields the rule wrote after it (did you mean
// request.gpus?), else that they see no clock, which is what a rule on the time or the day of a
// request reaches for, with a rule that works.
func variableHint(when, msg string) string {
	m := undeclaredRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	hint := "; rules see " + strings.Join(ruleVariables[:len(ruleVariables)-1], ", ") + " and " + ruleVariables[len(ruleVariables)-1]
	if best := Closest(strings.ToLower(m[1]), ruleVariables); best != "" {
		meant := best
		if f := regexp.MustCompile(`\b` + regexp.QuoteMeta(m[1]) + `((?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)`).FindStringSubmatch(when); f != nil {
			meant += strings.Join(strings.Fields(f[1]), "")
		}
		return hint + "; did you mean " + meant + "?"
	}
	return hint + ", and no clock, so no rule can look at the time or the day of a request; e.g. request.duration > duration('12h')"
}

// arithmeticRE matches CEL's complaint about arithmetic between a number and a whole number.
var arithmeticRE = regexp.MustCompile(`^found no matching overload for '(_[-+*/%]_)' applied to '\((int|double), (int|double)\)'`)

// arithmeticHint, for arithmetic between a number (a double) and a whole number (an int), which
// CEL does not mix, says how the whole number is written as a number: a literal with .0
// (write 2.0 for 2), anything else in double() (write double(request.gpus)). loc is where CEL
// places the mistake: its operator.
func arithmeticHint(env *cel.Env, when string, loc common.Location, msg string) string {
	m := arithmeticRE.FindStringSubmatch(msg)
	if m == nil || m[2] == m[3] {
		return ""
	}
	whole := 0 // the argument that is the whole number
	if m[3] == "int" {
		whole = 1
	}
	const general = "; arithmetic does not mix a number with a whole number: write a whole number as a number, 2.0 for 2, or double(request.gpus)"
	parsed, iss := env.Parse(when)
	if iss != nil && iss.Err() != nil {
		return general
	}
	a := parsed.NativeRep()
	hint := ""
	celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if hint != "" || e.Kind() != celast.CallKind || e.AsCall().FunctionName() != m[1] || len(e.AsCall().Args()) != 2 {
			return
		}
		at := a.SourceInfo().GetStartLocation(e.ID())
		if at.Line() != loc.Line() || at.Column() != loc.Column() {
			return
		}
		arg := e.AsCall().Args()[whole]
		if arg.Kind() == celast.LiteralKind {
			if v, ok := arg.AsLiteral().(types.Int); ok {
				hint = fmt.Sprintf("; arithmetic does not mix a number with a whole number: write %d.0 for %d", int64(v), int64(v))
				return
			}
		}
		if text, err := parser.Unparse(arg, a.SourceInfo()); err == nil {
			hint = fmt.Sprintf("; arithmetic does not mix a number with a whole number: write double(%s)", text)
		}
	}))
	if hint == "" {
		return general
	}
	return hint
}

// runeOffset is the position, in characters from 0, of CEL's location (line from 1, column from
// 0, in characters) in expr; -1 when it is not in expr.
func runeOffset(expr string, line, col int) int {
	if line < 1 || col < 0 {
		return -1
	}
	off := 0
	for i, l := range strings.Split(expr, "\n") {
		n := utf8.RuneCountInString(l)
		if i+1 == line {
			if col > n {
				return -1
			}
			return off + col
		}
		off += n + 1
	}
	return -1
}

// Evaluate runs every exception rule against a request and returns those that match. A rule that
// fails to evaluate (over its cost limit, or its request's context ended) counts as a match, so an
// error never lets a request skip its approver; the match's Why says so in words and its Err
// carries the detail for the log.
func (p *Policy) Evaluate(ctx context.Context, in RuleInput) []Match {
	if p.rules == nil {
		return nil
	}
	vars := map[string]any{"request": in.Request, "user": in.User, "team": in.Team, "usage": in.Usage, "class": in.Class}
	var out []Match
	for _, r := range p.rules.rules {
		if r == nil || r.prog == nil {
			continue
		}
		val, _, err := r.prog.ContextEval(ctx, vars)
		if err == nil {
			b, ok := val.Value().(bool)
			if ok && !b {
				continue
			}
			if ok {
				out = append(out, Match{Rule: r.Name, Why: r.Why})
				continue
			}
			err = fmt.Errorf("the rule gave %v, not true or false", val)
		}
		out = append(out, Match{Rule: r.Name, Why: fmt.Sprintf("%s (%s)", r.Why, RuleUnevaluated), Err: err})
	}
	return out
}

// RulesCost is the estimated cost of evaluating every exception rule at most (see RuleCostLimit).
func (p *Policy) RulesCost() uint64 {
	var n uint64
	for _, r := range p.Exceptions {
		if r != nil {
			n += r.Cost
		}
	}
	return n
}

// ruleSizes bounds, for the cost estimate, the lists and strings a rule reads from its input,
// by their path (team.data_classes).
type ruleSizes map[string]uint64

// sizesFor is what the rules of a policy can see: its teams' lists are known.
func sizesFor(p *Policy) ruleSizes {
	s := ruleSizes{
		"user.groups":        RuleMaxGroups,
		"user.name":          320, // the longest email address
		"team.data_classes":  1,   // a team the policy does not list is cleared for public data
		"team.budget_owners": 0,
		"team.quota.gpus":    uint64(len(p.Classes)),
	}
	for _, t := range p.Teams {
		if t == nil {
			continue
		}
		s["team.data_classes"] = max(s["team.data_classes"], uint64(len(t.DataClasses)))
		s["team.budget_owners"] = max(s["team.budget_owners"], uint64(len(t.BudgetOwners)))
	}
	return s
}

func (s ruleSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if size, ok := s[strings.Join(n.Path(), ".")]; ok {
		return &checker.SizeEstimate{Min: 0, Max: size}
	}
	switch n.Type().Kind() {
	case types.ListKind, types.MapKind:
		return &checker.SizeEstimate{Min: 0, Max: RuleMaxGroups}
	case types.StringKind, types.BytesKind:
		return &checker.SizeEstimate{Min: 0, Max: RuleMaxStringSize}
	}
	return nil
}

func (ruleSizes) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}

// costWords writes a cost estimate: a number, or "without bound".
func costWords(c uint64) string {
	if c == math.MaxUint64 {
		return "without bound"
	}
	return fmt.Sprintf("up to %d", c)
}

// WeeklyLimit is a quota's GPU-hours per week as rules read it: a quota of 0 (or none) is no
// weekly limit, which rules see as +Inf, so that a rule such as usage.gpu_hours_week +
// request.gpu_hours > team.quota.gpu_hours_per_week holds for no request of a team without one,
// as admission binds none.
func WeeklyLimit(hours float64) float64 {
	if hours <= 0 {
		return math.Inf(1)
	}
	return hours
}

// RuleInputFor builds the class and team parts of a rule input from the policy.
func (p *Policy) RuleInputFor(team, class string) (RuleTeam, RuleClass) {
	q := p.QuotaFor(team)
	rq := RuleQuota{GPUs: map[string]int64{}, GPUHoursPerWeek: WeeklyLimit(q.GPUHoursPerWeek)}
	for k, v := range q.GPUs {
		rq.GPUs[k] = int64(v)
	}
	rt := RuleTeam{Name: team, Quota: rq}
	if t, ok := p.Team(team); ok {
		rt.DataClasses = append([]string{}, t.DataClasses...)
		// Rules see the budget owners as they see user.name, A to Z in lower case, so that
		// user.name in team.budget_owners holds for an owner the policy writes with capitals.
		for _, o := range t.BudgetOwners {
			rt.BudgetOwners = append(rt.BudgetOwners, NameKey(strings.TrimSpace(o)))
		}
	}
	if rt.DataClasses == nil {
		rt.DataClasses = []string{}
	}
	if rt.BudgetOwners == nil {
		rt.BudgetOwners = []string{}
	}
	var rc RuleClass
	if c, ok := p.Class(class); ok {
		rc = RuleClass{Name: c.Name, SKU: c.SKU, Isolation: c.Isolation, MaxGPUs: int64(c.MaxGPUs), MaxDuration: c.MaxDuration.Duration, PricePerGPUHour: c.PricePerGPUHour}
	}
	return rt, rc
}

// ruleFields are the fields of each variable (and of team.quota) a rule sees, by the CEL name.
var ruleFields = map[string][]string{
	"request":    celFields[RuleRequest](),
	"user":       celFields[RuleUser](),
	"team":       celFields[RuleTeam](),
	"team.quota": celFields[RuleQuota](),
	"usage":      celFields[RuleUsage](),
	"class":      celFields[RuleClass](),
}

func celFields[T any]() []string {
	t := reflect.TypeFor[T]()
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		out = append(out, t.Field(i).Tag.Get("cel"))
	}
	return out
}

var undefinedFieldRE = regexp.MustCompile(`undefined field '([A-Za-z0-9_]+)'`)

// fieldHint, for CEL's "undefined field 'x'", names the fields of the variable the rule wrote
// .x after, and the closest of them: "; request has kind, gpus, …; did you mean request.gpus?".
func fieldHint(when, msg string) string {
	m := undefinedFieldRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	for _, v := range []string{"team.quota", "request", "user", "team", "usage", "class"} {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\s*\.\s*` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(when) {
			continue
		}
		hint := fmt.Sprintf("; %s has %s", v, strings.Join(ruleFields[v], ", "))
		if best := Closest(strings.ToLower(m[1]), ruleFields[v]); best != "" {
			hint += "; did you mean " + v + "." + best + "?"
		}
		return hint
	}
	return ""
}

// syntaxHint, for a CEL syntax error that people write out of habit from other languages, says
// how CEL writes it: one = for ==, and/or for &&/||, a bare 12h for duration('12h'), a rule
// that stops after an operator.
func syntaxHint(when, msg string) string {
	if !strings.HasPrefix(msg, "Syntax error:") {
		return ""
	}
	switch {
	case strings.Contains(msg, "token recognition error at: '='"), strings.Contains(msg, "token recognition error at: '= '"):
		return "; CEL compares with ==, e.g. request.gpus == 4"
	case strings.Contains(msg, "input 'and'"), strings.Contains(msg, "input 'AND'"):
		return "; CEL writes and as &&, e.g. request.gpus > 4 && request.reservation"
	case strings.Contains(msg, "input 'or'"), strings.Contains(msg, "input 'OR'"):
		return "; CEL writes or as ||, e.g. request.gpus > 4 || request.reservation"
	case durationUnitRE.MatchString(msg):
		d := "12h"
		if m := bareDurationRE.FindStringSubmatch(when); m != nil {
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "d": // CEL's duration() reads neither days nor weeks
				d = fmt.Sprintf("%dh", n*24)
			case "w":
				d = fmt.Sprintf("%dh", n*24*7)
			default:
				d = m[1] + m[2]
			}
		}
		return fmt.Sprintf("; a duration is written duration('%s'), e.g. request.duration > duration('%s')", d, d)
	case strings.Contains(msg, "mismatched input '<EOF>'"):
		return "; the rule ends too soon: write what its last operator compares or joins"
	}
	return ""
}

// durationUnitRE matches CEL's complaint about a unit written after a number (12h, 30m).
var durationUnitRE = regexp.MustCompile(`extraneous input '(h|m|s|d|w|ms|us|ns)' expecting`)

// bareDurationRE finds a number written with a unit in a rule (12h), as CEL does not read it.
var bareDurationRE = regexp.MustCompile(`\b(\d+)(ms|us|ns|h|m|s|d|w)\b`)

// Closest is the name within edit distance 2 of key (the nearest, the first of equals), or "".
func Closest(key string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := EditDistance(key, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// NearMiss is the one of names that w (in any case) is a near miss of, as a reader would take a
// typo: one letter off for a word of up to four letters, two for a longer one; empty when none
// is that close, or w is one of them. Unlike Closest it never offers root for foo.
func NearMiss(w string, names []string) string {
	w = strings.ToLower(w)
	best, bestD := "", 99
	for _, v := range names {
		if d := EditDistance(w, v); d < bestD {
			best, bestD = v, d
		}
	}
	if bestD == 0 || bestD > 2 || bestD == 2 && (len(w) <= 4 || len(best) <= 4) {
		return ""
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b, in bytes; 99 past 64 bytes, which is
// far from anything a name is meant to be.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// cheapRuleExample is a rule that costs little, in the policy's own terms, for a refusal of one
// over the cost limit: a test of one of its groups (in lower case, as rules see groups), or, in a
// policy that names no group, one of a class limit.
func cheapRuleExample(p *Policy) string {
	var groups []string
	for _, t := range p.Teams {
		if t != nil {
			groups = append(groups, t.IDPGroups...)
		}
	}
	for _, id := range p.Directory {
		if id != nil {
			groups = append(groups, id.Groups...)
		}
	}
	for _, g := range groups {
		if g = strings.ToLower(strings.TrimSpace(g)); g != "" && !strings.ContainsAny(g, "'\\\n\r") {
			return "'" + g + "' in user.groups"
		}
	}
	return "request.gpus > class.max_gpus"
}

// toldClassName is class as the policy is told to name it: itself when it is a valid name, else
// the name its refusal says to write (cuaderno-l4e for cuaderno-l4é), "" when it says none.
func toldClassName(class string) string {
	if nameRE.MatchString(class) {
		return class
	}
	return suggestedName(class)
}

// renamedClass reports whether name is what a class refused for its name is told to be renamed
// (cuaderno-l4e for cuaderno-l4é): a rule or quota naming it so is right once the class is.
func (p *Policy) renamedClass(name string) bool {
	for _, c := range p.Classes {
		if c != nil && !nameRE.MatchString(c.Name) && suggestedName(c.Name) == name {
			return true
		}
	}
	return false
}
