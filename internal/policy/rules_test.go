package policy

import (
	"context"
	"strings"
	"testing"
	"time"
)

// baseInput is a request that no example rule stops: 1 interactive GPU for 2h from a cleared team
// member with room in the quota.
func baseInput(p *Policy) RuleInput {
	team, class := p.RuleInputFor("vision", "interactive")
	return RuleInput{
		Request: RuleRequest{Kind: "lease", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour, GPUHours: 2, DataClass: "internal"},
		User:    RuleUser{Name: "alice@acme.example", Groups: []string{"ai-vision"}},
		Team:    team,
		Usage:   RuleUsage{GPUsInUse: 0, GPUHoursWeek: 0},
		Class:   class,
	}
}

// TestExampleRulesBoundaries: each example rule stays quiet exactly at its boundary and fires just past it.
func TestExampleRulesBoundaries(t *testing.T) {
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Evaluate(context.Background(), baseInput(p)); len(got) != 0 {
		t.Fatalf("the base request matches %v", got)
	}
	cases := []struct {
		rule         string
		atBoundary   func(*RuleInput)
		pastBoundary func(*RuleInput)
	}{
		{"large-request",
			func(in *RuleInput) { in.Request.GPUs = 1 }, // interactive max_gpus 1
			func(in *RuleInput) { in.Request.GPUs = 2 }},
		{"long-request",
			func(in *RuleInput) { in.Request.Duration = 8 * time.Hour },
			func(in *RuleInput) { in.Request.Duration = 8*time.Hour + time.Minute }},
		{"exclusive-reservation",
			func(in *RuleInput) { in.Request.Reservation = false },
			func(in *RuleInput) { in.Request.Reservation = true }},
		{"new-data-class",
			func(in *RuleInput) { in.Request.DataClass = "internal" },
			func(in *RuleInput) { in.Request.DataClass = "restricted" }},
		{"contractor",
			func(in *RuleInput) { in.User.Groups = []string{"ai-vision", "contractor-alumni"} },
			func(in *RuleInput) { in.User.Groups = []string{"ai-vision", "contractors"} }},
		{"over-quota", // vision: 4 interactive GPUs at once
			func(in *RuleInput) { in.Usage.GPUsInUse = 3 },
			func(in *RuleInput) { in.Usage.GPUsInUse = 4 }},
		{"over-quota", // vision: 600 GPU-hours a week; the request needs 2
			func(in *RuleInput) { in.Usage.GPUHoursWeek = 598 },
			func(in *RuleInput) { in.Usage.GPUHoursWeek = 598.5 }},
	}
	for _, c := range cases {
		in := baseInput(p)
		c.atBoundary(&in)
		if got := p.Evaluate(context.Background(), in); len(got) != 0 {
			t.Errorf("%s: fires at its boundary: %v", c.rule, got)
		}
		in = baseInput(p)
		c.pastBoundary(&in)
		got := p.Evaluate(context.Background(), in)
		if len(got) != 1 || got[0].Rule != c.rule {
			t.Errorf("%s: just past its boundary got %v", c.rule, got)
		}
		if len(got) == 1 && got[0].Why == "" {
			t.Errorf("%s: no why", c.rule)
		}
	}
}

// TestMalformedRules: policy check names the rule and the position in the expression.
func TestMalformedRules(t *testing.T) {
	head := "organization: X\nclasses:\n  - {name: gpu, max_gpus: 1, max_duration: 1h}\nsim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}\nexceptions:\n  - name: r\n    when: "
	for when, want := range map[string]string{
		`request.gpus >`:                 `exception rule "r", at column 15`,
		`request.gpus > "8"`:             `exception rule "r", at column 14 of its when: found no matching overload`,
		`request.gpu > 8`:                `exception rule "r", at column 8 of its when: undefined field 'gpu'; request has kind, gpus, class, duration, gpu_hours, reservation, data_class, template; did you mean request.gpus?`,
		`team.quota.gpu["gpu"] > 1`:      `exception rule "r", at column 11 of its when: undefined field 'gpu'; team.quota has gpus, gpu_hours_per_week; did you mean team.quota.gpus?`,
		`user.group.size() > 1`:          `exception rule "r", at column 5 of its when: undefined field 'group'; user has name, groups; did you mean user.groups?`,
		`class.colour == 'red'`:          `exception rule "r", at column 6 of its when: undefined field 'colour'; class has name, sku, isolation, max_gpus, max_duration, price_per_gpu_hour`,
		`usage.gpus_in_use + 1`:          `exception rule "r" must give true or false, but its when gives int`,
		`request.duration > 8`:           `exception rule "r", at column 18`,
		`size(user.groups) + 1.5 > 2`:    `exception rule "r", at column 19`,
		`'x' in request.class`:           `exception rule "r", at column 5`,
		`team.quota.gpus["gpu"] > "one"`: `exception rule "r", at column 24`,
	} {
		_, err := Load([]byte(head+"'"+strings.ReplaceAll(when, "'", "''")+"'\n"), "p.yaml")
		if err == nil {
			t.Errorf("%s: accepted", when)
			continue
		}
		if !strings.Contains(err.Error(), "p.yaml:7: "+want) {
			t.Errorf("%s: error does not name rule, line and position (%q):\n%v", when, want, err)
		}
	}
}

// TestMalformedRuleOnLaterLine: a rule written over several lines (a block scalar, folded or
// literal, or a plain scalar that continues) is refused at the line of the file that holds the
// mistake, not at its when: key.
func TestMalformedRuleOnLaterLine(t *testing.T) {
	head := "organization: X\nclasses:\n  - {name: gpu-x_1, max_gpus: 1, max_duration: 1h}\nsim: {nodes: [{name: n, count: 1, class: gpu-x_1, gpus: 1}]}\nexceptions:\n  - name: r\n"
	for _, c := range []struct{ rule, want string }{
		{"    when: >-\n      request.gpus > 2 &&\n      user.groups.exists(g, g == 1) &&\n      request.duration > duration('1h')\n",
			`p.yaml:9: exception rule "r", at column 31 of this line: found no matching overload for '_==_'`},
		{"    when: |\n      request.gpus > 2\n      && request.gpu > 3\n",
			`p.yaml:9: exception rule "r", at column 17 of this line: undefined field 'gpu'`},
		{"    when: request.gpus > 2 &&\n      request.gpu > 3\n",
			`p.yaml:8: exception rule "r", at column 14 of this line: undefined field 'gpu'`},
		{"    when: \"request.gpus > 2 &&\n      request.gpu > 3\"\n",
			`p.yaml:8: exception rule "r", at column 14 of this line: undefined field 'gpu'`},
		{"    when:\n      request.gpus > 2 && request.gpu > 3\n",
			`p.yaml:8: exception rule "r", at column 34 of this line: undefined field 'gpu'`},
		{"    when: >-\n      request.gpus > '2' &&\n      request.gpus > 3\n",
			`p.yaml:8: exception rule "r", at column 20 of this line`},
		// On the when: line itself, the column is the expression's, as for any one-line rule.
		{"    when: request.gpus > '2' &&\n      request.gpus > 3\n",
			`p.yaml:7: exception rule "r", at column 14 of its when`},
	} {
		_, err := Load([]byte(head+c.rule), "p.yaml")
		if err == nil {
			t.Errorf("%q: accepted", c.rule)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: want %q in:\n%v", c.rule, c.want, err)
		}
	}
}

// TestQuotaOfNoClass: team.quota.gpus holds every class of the catalog and nothing else, so a rule
// that reads it for a name that is no class could never be checked (every request it reached
// would wait for a person): policy check refuses it, naming the class meant. Classes with - and _
// in their names are read as written.
func TestQuotaOfNoClass(t *testing.T) {
	head := "organization: X\nclasses:\n  - {name: b200-train_x, max_gpus: 4, max_duration: 1h}\n  - {name: l4-nb, max_gpus: 1, max_duration: 1h}\nsim: {nodes: [{name: n, count: 1, class: b200-train_x, gpus: 4}]}\nexceptions:\n  - name: r\n    when: "
	for when, want := range map[string]string{
		`team.quota.gpus['b200-train-x'] < 4`:                             `p.yaml:8: exception rule "r", at column 17 of its when: team.quota.gpus has no class 'b200-train-x'; did you mean 'b200-train_x'?`,
		`request.gpus > 1 && team.quota.gpus.l4 < 2`:                      `p.yaml:8: exception rule "r", at column 36 of its when: team.quota.gpus has no class 'l4'; its classes are b200-train_x, l4-nb`,
		`request.class == 'b200-train_x' && team.quota.gpus["h100"] == 0`: `at column 52 of its when: team.quota.gpus has no class 'h100'`,
	} {
		wantRuleRefused(t, head, when, want)
	}
	for _, when := range []string{
		`team.quota.gpus['b200-train_x'] < 4 && team.quota.gpus['l4-nb'] < 2`,
		`team.quota.gpus[class.name] < usage.gpus_in_use + request.gpus`,
		`has(team.quota.gpus.h100) || 'h100' in team.quota.gpus`,
	} {
		p, err := Load([]byte(head+"'"+strings.ReplaceAll(when, "'", "''")+"'\n"), "p.yaml")
		if err != nil {
			t.Errorf("%s: refused: %v", when, err)
			continue
		}
		team, class := p.RuleInputFor("anyone", "b200-train_x")
		in := RuleInput{Request: RuleRequest{Kind: "lease", GPUs: 1, Class: class.Name, Duration: time.Hour, GPUHours: 1}, Team: team, Class: class}
		for _, m := range p.Evaluate(context.Background(), in) {
			if m.Err != nil {
				t.Errorf("%s: could not be evaluated: %v", when, m.Err)
			}
		}
	}
}

// TestRuleComparingWithNoClassWarns: a rule that compares the class with a name that is no class
// (h200-big for h200_big), or a data class with one written with capitals (rules see data classes
// in lower case), has a comparison that never holds, so the request it was written for is granted
// without approval: policy check warns of it, at its line. Names as the policy writes them draw
// nothing.
func TestRuleComparingWithNoClassWarns(t *testing.T) {
	src := `organization: X
classes:
  - {name: h200_big, max_gpus: 8, max_duration: 1h}
  - {name: a100-dev, max_gpus: 1, max_duration: 1h}
sim: {nodes: [{name: n, count: 1, class: h200_big, gpus: 8}]}
teams:
  - {name: genomics, idp_groups: [g], data_classes: [open, PHI]}
exceptions:
  - {name: big, when: "request.gpus > class.max_gpus || request.duration > class.max_duration"}
  - {name: h200, when: "request.class == 'h200-big' && request.gpus > 2"}
  - {name: dev, when: "class.name in ['a100_dev', 'h200_big'] && request.gpus > 1"}
  - {name: phi, when: "request.data_class in ['PHI', 'pii']"}
  - {name: phi2, when: "'PHI' in team.data_classes && request.data_class != 'open'"}
  - {name: fine, when: "request.class == 'a100-dev' && request.data_class == 'phi' && class.name != 'h200_big' && 'phi' in team.data_classes"}
approvals: {fallback_approvers: [ops@x.example]}
`
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range p.Warnings {
		all = append(all, w.String())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		`line 10: exception rule "h200": request.class is compared with 'h200-big', which is no class, so it never matches one; did you mean 'h200_big'?`,
		`line 11: exception rule "dev": class.name is compared with 'a100_dev', which is no class, so it never matches one; did you mean 'a100-dev'?`,
		`line 12: exception rule "phi": rules see data classes in lower case, so 'PHI' never matches one; write 'phi'`,
		`line 13: exception rule "phi2": rules see data classes in lower case, so 'PHI' never matches one; write 'phi'`,
		// dev sends a request of h200_big for more than 1 GPU to a budget owner, whoever asks.
		`line 3: exception rule "dev" sends a request of class h200_big for more than 1 GPU to approval for every team, so its max_gpus of 8 is never reached without one; the catalog says up to 1 GPU; write max_gpus: 1, or change the rule`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no warning %q in:\n%s", want, text)
		}
	}
	if len(p.Warnings) != 5 {
		t.Errorf("want exactly 5 warnings, got:\n%s", text)
	}
}

// TestRuleDurationInDays: the policy writes durations with d and w, CEL's duration() does not read
// them; a rule that writes duration('2d') is refused with its column and the duration written as
// CEL reads it.
func TestRuleDurationInDays(t *testing.T) {
	head := "organization: X\nclasses:\n  - {name: gpu, max_gpus: 1, max_duration: 1h}\nsim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}\nexceptions:\n  - name: r\n    when: "
	for when, want := range map[string]string{
		`request.duration > duration('2d')`:     `p.yaml:7: exception rule "r", at column 29 of its when: duration('2d') is not a duration CEL reads, which knows only h, m, s, ms, us and ns; write duration('48h')`,
		`request.duration > duration('1w1d')`:   `write duration('192h')`,
		`request.duration > duration('36 hrs')`: `at column 29 of its when: duration('36 hrs') is not a duration CEL reads, which knows only h, m, s, ms, us and ns; write duration('36h')`,
	} {
		wantRuleRefused(t, head, when, want)
	}
	if _, err := Load([]byte(head+"'request.duration > duration(\"36h\") || request.duration < duration(\"1h30m\")'\n"), "p.yaml"); err != nil {
		t.Error(err)
	}
}

// wantRuleRefused loads the policy head ends with, its last rule's when being when (quoted),
// and checks that it is refused with want in what it says.
func wantRuleRefused(t *testing.T, head, when, want string) {
	t.Helper()
	_, err := Load([]byte(head+"'"+strings.ReplaceAll(when, "'", "''")+"'\n"), "p.yaml")
	if err == nil {
		t.Errorf("%s: accepted", when)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: want %q in:\n%v", when, want, err)
	}
}
