package policy

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// numbers is a CEL list literal [1, 2, ..., n].
func numbers(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// nested is depth exists() over [1..n], one inside the other.
func nested(depth, n int) string {
	expr := "v1 < 0"
	for d := depth; d >= 1; d-- {
		expr = fmt.Sprintf("%s.exists(v%d, %s)", numbers(n), d, expr)
	}
	return expr
}

// withRule is the example policy with one more exception rule.
func withRule(t testing.TB, name, when string) []byte {
	t.Helper()
	b, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	rule := fmt.Sprintf("exceptions:\n  - name: %s\n    when: %q\n", name, when)
	if !strings.Contains(string(b), "exceptions:\n") {
		t.Fatal("the example has no exceptions section")
	}
	return []byte(strings.Replace(string(b), "exceptions:\n", rule, 1))
}

var estimateRE = regexp.MustCompile(`could cost (up to \d+|without bound) to evaluate, over the limit of 100000`)

// TestPolicyCheckRefusesARuleOverTheCostLimit: a rule whose estimated cost is over the limit (seven
// nested exists over 30 numbers, three over the user's groups, a map of a map over them) is
// refused, naming the rule and its estimated cost; the example's rules all pass.
func TestPolicyCheckRefusesARuleOverTheCostLimit(t *testing.T) {
	for name, when := range map[string]string{
		"seven-nested":  nested(7, 30),
		"groups-cubed":  "user.groups.exists(a, user.groups.exists(b, user.groups.exists(c, a + b == c)))",
		"groups-mapped": "user.groups.map(a, user.groups.map(b, a + b)).size() > 3",
		"long-strings":  "user.groups.exists(a, user.groups.exists(b, a.contains(b)))",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(withRule(t, name, when), "p.yaml")
			if err == nil {
				t.Fatalf("a rule over the cost limit loaded: %s", when)
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("exception rule %q could cost", name)) || !estimateRE.MatchString(msg) {
				t.Fatalf("the refusal does not name the rule and its estimate:\n%s", msg)
			}
		})
	}
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Exceptions {
		if r.Cost == 0 || r.Cost > RuleCostLimit {
			t.Errorf("rule %s: estimated cost %d", r.Name, r.Cost)
		}
	}
}

// costliest is the rule of nested exists over [1..n] with the largest n whose estimate the limit
// allows.
func costliest(t testing.TB) (string, uint64) {
	t.Helper()
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	best, cost := "", uint64(0)
	for n := 10; ; n++ {
		when := nested(2, n)
		ast, iss := env.Compile(when)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		est, err := env.EstimateCost(ast, ruleSizes{})
		if err != nil {
			t.Fatal(err)
		}
		if est.Max > RuleCostLimit {
			return best, cost
		}
		best, cost = when, est.Max
	}
}

// TestCostliestAllowedRuleEndsWhenItsRequestIsAbandoned: the most expensive rule the limit allows
// loads, runs to its end on a live request, and stops on an abandoned one; a rule stopped counts
// as fired, and what the requester reads says a person decides, without the evaluator's error.
func TestCostliestAllowedRuleEndsWhenItsRequestIsAbandoned(t *testing.T) {
	when, cost := costliest(t)
	p, err := Load(withRule(t, "costliest", when), "p.yaml")
	if err != nil {
		t.Fatalf("the costliest allowed rule (estimate %d) is refused: %v", cost, err)
	}
	if got := p.Evaluate(context.Background(), baseInput(p)); len(got) != 0 {
		t.Fatalf("on a live request the rule ran to its end and matched %+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := p.Evaluate(ctx, baseInput(p))
	var stopped *Match
	for i := range got {
		if got[i].Rule == "costliest" {
			stopped = &got[i]
		}
	}
	if stopped == nil || stopped.Err == nil {
		t.Fatalf("the rule of an abandoned request did not stop: %+v", got)
	}
	if !strings.Contains(stopped.Why, "a person decides") || strings.Contains(stopped.Why, stopped.Err.Error()) ||
		strings.Contains(strings.ToLower(stopped.Why), "interrupt") || strings.Contains(stopped.Why, "context") {
		t.Fatalf("the requester reads %q", stopped.Why)
	}
}

// TestRuleOverItsCostAtRunTimeGoesToAPerson: a rule within its estimate for the groups it assumes
// meets a user with far more groups; evaluation stops at the cost limit, the rule counts as fired
// (the request waits for a person, never granted silently) and no error text reaches the requester.
func TestRuleOverItsCostAtRunTimeGoesToAPerson(t *testing.T) {
	when := "user.groups.exists(g, g.contains('contractor'))"
	p, err := Load(withRule(t, "contractor-like", when), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := baseInput(p)
	for i := 0; i < 50*RuleMaxGroups; i++ {
		in.User.Groups = append(in.User.Groups, fmt.Sprintf("group-%06d-with-a-long-name-%s", i, strings.Repeat("x", 200)))
	}
	got := p.Evaluate(context.Background(), in)
	if len(got) != 1 || got[0].Rule != "contractor-like" || got[0].Err == nil {
		t.Fatalf("matches: %+v", got)
	}
	if !strings.Contains(got[0].Err.Error(), "cost limit") {
		t.Fatalf("the log's error is %v", got[0].Err)
	}
	for _, bad := range []string{"cost", "limit", "exceeded", got[0].Err.Error()} {
		if strings.Contains(got[0].Why, bad) {
			t.Fatalf("the requester reads %q", got[0].Why)
		}
	}
}

// BenchmarkCostliestAllowedRule: one evaluation of the most expensive rule the cost limit allows,
// the longest any one rule can hold a request.
func BenchmarkCostliestAllowedRule(b *testing.B) {
	when, _ := costliest(b)
	p, err := Load(withRule(b, "costliest", when), "p.yaml")
	if err != nil {
		b.Fatal(err)
	}
	in := baseInput(p)
	ctx := context.Background()
	for b.Loop() {
		p.Evaluate(ctx, in)
	}
}

// BenchmarkGroupsRuleAtTheAssumedSize: a rule that matches a pattern against each of the 500
// groups (of 256 characters) its estimate assumes.
func BenchmarkGroupsRuleAtTheAssumedSize(b *testing.B) {
	p, err := Load(withRule(b, "pattern", "user.groups.exists(g, g.matches('^contract.*ors$'))"), "p.yaml")
	if err != nil {
		b.Fatal(err)
	}
	in := baseInput(p)
	in.User.Groups = nil
	for i := 0; i < RuleMaxGroups; i++ {
		in.User.Groups = append(in.User.Groups, fmt.Sprintf("%03d%s", i, strings.Repeat("g", RuleMaxStringSize-3)))
	}
	ctx := context.Background()
	for b.Loop() {
		if ms := p.Evaluate(ctx, in); len(ms) != 0 {
			b.Fatalf("matched %+v", ms)
		}
	}
}

// TestRulesWithinTheLimitRunToTheirEndOnInputsOfTheAssumedSize: a rule policy check accepts is
// never stopped at run time on inputs as large as its estimate assumes (500 groups of 256
// characters), so it never sends every request to a person.
func TestRulesWithinTheLimitRunToTheirEndOnInputsOfTheAssumedSize(t *testing.T) {
	when, _ := costliest(t)
	rules := []string{
		when,
		"user.groups.exists(g, g.matches('^contract.*ors$'))",
		"user.groups.exists(g, g.startsWith('x') || g.endsWith('y') || g.contains('z'))",
		"user.groups.filter(g, g.size() > 3).size() > 1000",
		"user.groups.map(g, g + 'x').exists(h, h == 'y')",
		"user.groups.all(g, !(g in team.data_classes))",
		"team.quota.gpus.exists(c, team.quota.gpus[c] > 100) && user.name.matches('@contractor')",
	}
	for i, when := range rules {
		name := fmt.Sprintf("rule-%d", i)
		p, err := Load(withRule(t, name, when), "p.yaml")
		if err != nil {
			t.Errorf("%s (%.60s) is refused: %v", name, when, err)
			continue
		}
		in := baseInput(p)
		in.User.Name = strings.Repeat("u", 300) + "@acme.example"
		in.User.Groups = nil
		for j := 0; j < RuleMaxGroups; j++ {
			in.User.Groups = append(in.User.Groups, fmt.Sprintf("%03d%s", j, strings.Repeat("g", RuleMaxStringSize-3)))
		}
		for _, m := range p.Evaluate(context.Background(), in) {
			if m.Err != nil {
				t.Errorf("%s (%.60s) stopped at run time: %v", name, when, m.Err)
			}
		}
	}
}
