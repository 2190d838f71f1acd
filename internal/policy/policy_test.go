package policy

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

const examplePath = "../../docs/quartermaster.example.yaml"

func TestExampleLoads(t *testing.T) {
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Classes) != 2 || p.Classes[1].MaxDuration.Duration != 72*time.Hour {
		t.Fatalf("classes not read: %+v", p.Classes)
	}
	if got := p.Capacity(); got["interactive"] != 16 || got["train"] != 16 {
		t.Fatalf("capacity = %v", got)
	}
	if q := p.QuotaFor("nobody"); q.GPUs["interactive"] != 1 || q.GPUHoursPerWeek != 24 {
		t.Fatalf("default quota = %+v", q)
	}
	if p.Location.String() != "America/Chicago" {
		t.Fatalf("location = %v", p.Location)
	}
}

func TestProblemsHaveLines(t *testing.T) {
	src := `organization: X
timezone: Mars/Olympus
classes:
  - name: gpu
    max_gpus: 0
    max_duration: forever
    isolation: private
    colour: blue
default_quota: {gpus: {gpu: 1, tpu: 2}}
exceptions:
  - name: bad
    when: request.gpus > "four"
  - name: typo
    when: requests.gpus > 1
  - name: notbool
    when: request.gpus + 1
backend: sim
sim: {nodes: [{name: n, count: 1, class: gpu, gpus: 4}]}
`
	_, err := Load([]byte(src), "p.yaml")
	if err == nil {
		t.Fatal("want errors")
	}
	pe := err.(*Error)
	want := []struct {
		line int
		has  string
	}{
		{6, "forever"},
		{8, "colour"},
	}
	for _, w := range want {
		if !hasProblem(pe, w.line, w.has) {
			t.Errorf("no problem at line %d mentioning %q in:\n%v", w.line, w.has, err)
		}
	}
	// Type errors stop semantic checks; fix them and look again.
	src = strings.Replace(src, "    max_duration: forever\n", "    max_duration: 8h\n", 1)
	src = strings.Replace(src, "    colour: blue\n", "", 1)
	_, err = Load([]byte(src), "p.yaml")
	pe = err.(*Error)
	for _, w := range []struct {
		line int
		has  string
	}{
		{2, "Mars/Olympus"},
		{5, "max_gpus"},
		{7, "isolation"},
		{8, `class "tpu"`},
		{11, `"bad", at column 14`},
		{13, `"typo", at column 1`},
		{15, `"notbool" must give true or false`},
	} {
		if !hasProblem(pe, w.line, w.has) {
			t.Errorf("no problem at line %d mentioning %q in:\n%v", w.line, w.has, err)
		}
	}
}

// TestBadNamesGetOneThatWorks: a class or team name that is not lower case letters, digits, - or
// _ is refused with the name to write instead, where there is one.
func TestBadNamesGetOneThatWorks(t *testing.T) {
	for name, want := range map[string]string{
		"GPU":         `class name "GPU" must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most); write "gpu"`,
		"a100_":       `class name "a100_" must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most); write "a100"`,
		"gpu-":        `; write "gpu"`,
		"A100 shared": `; write "a100-shared"`,
		"h100.sxm":    `; write "h100-sxm"`,
		"1gpu":        `class name "1gpu" must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most)`,
	} {
		src := "organization: X\nclasses:\n  - {name: \"" + name + "\", max_gpus: 1, max_duration: 1h}\nsim: {nodes: [{name: n, count: 1, class: \"" + name + "\", gpus: 1}]}\n"
		_, err := Load([]byte(src), "p.yaml")
		pe, ok := err.(*Error)
		if !ok || !hasProblem(pe, 3, want) {
			t.Errorf("%q: %v; want line 3 to say %q", name, err, want)
			continue
		}
		if _, suggested, ok := strings.Cut(want, "write "); ok {
			fixed := strings.ReplaceAll(src, "\""+name+"\"", suggested)
			if _, err := Load([]byte(fixed), "p.yaml"); err != nil {
				t.Errorf("%q: the name suggested, %s, does not load: %v", name, suggested, err)
			}
		}
	}
}

// TestNamesEndWithALetterOrDigit: a team or class name is a Kubernetes label value on every
// object of its leases, which must end with a letter or digit; a name ending in - or _ loaded,
// and then every lease of it failed to start. Such a team is refused on its line, and a group
// written so names no unlisted team.
func TestNamesEndWithALetterOrDigit(t *testing.T) {
	pe := refused(t, "  - name: vision\n", "  - name: vision_\n")
	if !hasProblem(pe, 39, `team name "vision_" must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most); write "vision"`) {
		t.Errorf("team vision_: %v", pe)
	}
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"ml-", "ML_", "data-eng-"} {
		if name, ok := p.UnlistedTeam(g); ok {
			t.Errorf("group %q names team %q", g, name)
		}
	}
	if name, ok := p.UnlistedTeam("ML_Ops"); !ok || name != "ml_ops" {
		t.Errorf("group ML_Ops: %q %v", name, ok)
	}
}

func hasProblem(e *Error, line int, sub string) bool {
	for _, p := range e.Problems {
		if p.Line == line && strings.Contains(p.Msg, sub) {
			return true
		}
	}
	return false
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"45m": 45 * time.Minute, "4h": 4 * time.Hour, "1h30m": 90 * time.Minute, "2d": 48 * time.Hour, "1w": 168 * time.Hour, "2 hours": 2 * time.Hour, "1.5h": 90 * time.Minute} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "forever", "90", "h", "-2h", "3x", "99999999d", "1.2.3h", "1..5h", "2.5.h", "."} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

// FuzzLoad: no policy file, however broken, makes the loader panic; a refusal always says why.
func FuzzLoad(f *testing.F) {
	if b, err := os.ReadFile(examplePath); err == nil {
		f.Add(string(b))
	}
	f.Add("organization: X\nclasses: [{name: a, max_gpus: 1, max_duration: 1h}]\nexceptions: [{name: r, when: 'request.gpus > 1'}]\nsim: {nodes: [{name: n, count: 1, class: a, gpus: 2}]}\n")
	f.Add("classes: 3")
	f.Add("organization: X\nclasses:\n  -\nsim:\n nodes:\n - {}\n")
	f.Add("organization: X\nclasses: [{name: a, max_gpus: 1, max_duration: 1h}]\nteams: [{name: t, idp_groups: [g, ~]}]\ndirectory: [~, {user: u@x, groups: ['']}]\nsim: {nodes: [~, {name: n, count: 1, class: a, gpus: 2}]}\n")
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Load([]byte(src), "f.yaml")
		if err != nil {
			pe, ok := err.(*Error)
			if !ok || len(pe.Problems) == 0 || pe.Problems[0].Msg == "" {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		if len(p.Classes) == 0 {
			t.Fatal("a policy with no classes was accepted")
		}
		usePolicy(t, p)
	})
}

// usePolicy does with a loaded policy what console and serve do with it at start and on every
// request: every lookup, the capacity, the teams of every directory entry, and every rule.
func usePolicy(t *testing.T, p *Policy) {
	t.Helper()
	_ = p.TotalCapacity()
	_ = p.SharedClasses()
	_ = p.CapacityShare()
	_ = p.ClassNames()
	for _, c := range p.Classes {
		if _, ok := p.Class(c.Name); !ok {
			t.Fatalf("class %q is listed but not found", c.Name)
		}
		_ = c.Exclusive()
	}
	names := []string{"nobody"}
	for _, tm := range p.Teams {
		names = append(names, tm.Name)
	}
	for _, n := range names {
		_ = p.QuotaFor(n)
		_ = p.Approvers(n)
		_ = p.IsApprover("someone@x.example", n)
		_ = p.MayApprove("someone@x.example", []string{"g"}, n)
		for _, c := range p.Classes {
			rt, rc := p.RuleInputFor(n, c.Name)
			in := RuleInput{Request: RuleRequest{Kind: "lease", GPUs: 1, Class: c.Name, Duration: time.Hour, GPUHours: 1},
				User: RuleUser{Name: "someone@x.example", Groups: []string{}}, Team: rt, Class: rc}
			_ = p.Evaluate(context.Background(), in)
		}
	}
	for _, id := range p.Directory {
		_ = p.TeamsOf(id.Groups)
		_, _ = p.Identity(id.User)
		for _, g := range id.Groups {
			_ = p.Members(g)
		}
		for _, a := range id.Accounts {
			_, _ = p.UserByAccount(a)
		}
	}
	_ = p.IsSSOAdmin("someone@x.example", nil)
}

// FuzzParseDuration: durations never panic and are never negative.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"45m", "1h30m", "2d", "1.5h", "forever", "-1h", "9999999w", "1.2.3h", "521w", "3649d23h59m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 || d > LongestDuration {
			t.Fatalf("%q = %v", s, d)
		}
		// As written back (by the minute), it reads as itself.
		if d >= time.Minute {
			if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d.Round(time.Minute) {
				t.Fatalf("%q = %v, written %q, reads back as %v, %v", s, d, FormatDuration(d), back, err)
			}
		}
	})
}

func TestDiscordAccountsAndChannels(t *testing.T) {
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := p.UserByAccount("discord:100000000000000004"); !ok || u != "dana@acme.example" {
		t.Errorf("discord:100000000000000004 is %q, %v; want dana", u, ok)
	}
	if _, ok := p.UserByAccount("discord:1"); ok {
		t.Error("an unknown account resolved")
	}
	if id, ok := p.Account("Alice@Acme.example", "discord"); !ok || id != "100000000000000001" {
		t.Errorf("alice's Discord account = %q, %v", id, ok)
	}
	if _, ok := p.Account("lee@acme.example", "discord"); ok {
		t.Error("lee has no Discord account in the example")
	}
	if p.Discord.Channels["#vision-gpu"] != "200000000000000001" {
		t.Errorf("channels = %v", p.Discord.Channels)
	}

	src := `organization: X
classes: [{name: gpu, max_gpus: 1, max_duration: 1h}]
directory:
  - {user: a@x.example, groups: [g], accounts: ["discord:123"]}
  - {user: b@x.example, groups: [g], accounts: ["slack:U1", "discord:12ab", "discord:123"]}
discord:
  channels: {"general": "5", "#ok": "not-a-number"}
sim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}
`
	_, err = Load([]byte(src), "p.yaml")
	if err == nil {
		t.Fatal("bad accounts and channels loaded")
	}
	msg := err.Error()
	for _, want := range []string{`p.yaml:5: b@x.example: account "slack:U1" is not one Quartermaster knows; accounts are written discord:USER_ID`, `p.yaml:5: b@x.example: "12ab" is not a Discord user id`,
		"p.yaml:5: b@x.example: account discord:123 already belongs to a@x.example", `"general" must be a channel as the policy names it`, `"not-a-number" is not a Discord channel id`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

// The currency is an ISO 4217 code, in any case; anything else is refused at its line
// with an example, since every price and bill is written in it.
func TestCurrencyIsAnISOCode(t *testing.T) {
	src := "organization: X\ncurrency: %s\nclasses:\n  - {name: gpu, max_gpus: 1, max_duration: 1h}\nsim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}\n"
	for _, c := range []string{"gbpx", "$", "euro", "\"E U\""} {
		_, err := Load(fmt.Appendf(nil, src, c), "p.yaml")
		pe, ok := err.(*Error)
		if !ok || !hasProblem(pe, 2, "is not an ISO 4217 currency code (three letters, such as USD, EUR or JPY); e.g. currency: EUR") {
			t.Errorf("currency %s: %v", c, err)
		}
	}
	p, err := Load(fmt.Appendf(nil, src, "jpy"), "p.yaml")
	if err != nil {
		t.Fatalf("currency jpy: %v", err)
	}
	if p.Currency != "JPY" {
		t.Errorf("currency jpy reads as %q; want JPY", p.Currency)
	}
}

// Amounts are written in the currency's minor unit, rounded half away from zero, the same way
// everywhere; a price keeps the decimals it has.
func TestMoneyInTheCurrencysMinorUnit(t *testing.T) {
	for _, c := range []struct {
		currency string
		v        float64
		money    string
		price    string
	}{
		{"USD", 12.5, "$12.50", "$12.50"},
		{"EUR", 0.125, "0.13 EUR", "0.125 EUR"},
		{"EUR", 0.5, "0.50 EUR", "0.50 EUR"},
		{"JPY", 150, "150 JPY", "150 JPY"},
		{"JPY", 144.03, "144 JPY", "144.03 JPY"},
		{"JPY", 1234.5, "1235 JPY", "1234.5 JPY"},
		{"KWD", 1.2345, "1.235 KWD", "1.2345 KWD"},
		{"GBP", -3.004, "-3.00 GBP", "-3.004 GBP"},
		{"USD", -0.001, "$0.00", "-$0.001"},
		// Half a cent as written is rounded up, though its binary value is a hair below it.
		{"EUR", 1.005, "1.01 EUR", "1.005 EUR"},
		{"EUR", 17.435, "17.44 EUR", "17.435 EUR"},
		{"GBP", -1.005, "-1.01 GBP", "-1.005 GBP"},
		{"KWD", 1.0005, "1.001 KWD", "1.0005 KWD"},
	} {
		if got := Money(c.currency, c.v); got != c.money {
			t.Errorf("Money(%s, %v) = %q, want %q", c.currency, c.v, got, c.money)
		}
		if got := Price(c.currency, c.v); got != c.price {
			t.Errorf("Price(%s, %v) = %q, want %q", c.currency, c.v, got, c.price)
		}
	}
}

// TestAClassNamedAfterARequestWordIsRefused: a class named "exclusive" (or "for", "team", …)
// could never be asked for by name, in Slack or in Discord's class option: /gpu request 1
// exclusive asks for a reservation of the first class. It is refused with a name that works.
func TestAClassNamedAfterARequestWordIsRefused(t *testing.T) {
	src := "organization: Globex\nclasses:\n  - {name: shared, max_gpus: 1, max_duration: 1h}\n  - {name: exclusive, isolation: exclusive, max_gpus: 8, max_duration: 1h}\n" +
		"sim: {nodes: [{name: a, count: 1, class: shared, gpus: 1}, {name: b, count: 1, class: exclusive, gpus: 8}]}\n"
	_, err := Load([]byte(src), "p.yaml")
	pe, ok := err.(*Error)
	want := `class name "exclusive" is a word /gpu request reads otherwise (it asks for whole nodes), so nobody could ask for the class by name; rename it, e.g. name: exclusive-gpu`
	if !ok || !hasProblem(pe, 4, want) {
		t.Fatalf("%v; want line 4 to say %q", err, want)
	}
	if _, err := Load([]byte(strings.NewReplacer("name: exclusive,", "name: exclusive-gpu,", "class: exclusive,", "class: exclusive-gpu,").Replace(src)), "p.yaml"); err != nil {
		t.Errorf("the name suggested does not load: %v", err)
	}
}

// TestATeamNamedAfterAWordTheGrammarReadsOtherwiseIsRefused: a team named "because" could not be
// named in /gpu quota request (the reason starts at the first "because"), and /gpu quota request
// is a quota request, not the quota of a team named "request". Both are refused with a name that
// works; a team named after a word that is read right after "team" ("for", "data") still loads.
func TestATeamNamedAfterAWordTheGrammarReadsOtherwiseIsRefused(t *testing.T) {
	src := "organization: Globex\nclasses:\n  - {name: shared, max_gpus: 1, max_duration: 1h}\n" +
		"teams:\n  - {name: because, idp_groups: [g1]}\n  - {name: request, idp_groups: [g2]}\n  - {name: for, idp_groups: [g3]}\n  - {name: data, idp_groups: [g4]}\n" +
		"sim: {nodes: [{name: a, count: 1, class: shared, gpus: 1}]}\n"
	_, err := Load([]byte(src), "p.yaml")
	pe, ok := err.(*Error)
	if !ok {
		t.Fatalf("%v; want the teams because and request refused", err)
	}
	for line, want := range map[int]string{
		5: `team name "because" is a word the /gpu commands read otherwise (in /gpu quota request the reason follows it), so nobody could name the team there; rename it, e.g. name: because-team`,
		6: `team name "request" is a word the /gpu commands read otherwise (/gpu quota request asks for more quota instead of showing the team's), so nobody could name the team there; rename it, e.g. name: request-team`,
	} {
		if !hasProblem(pe, line, want) {
			t.Errorf("%v; want line %d to say %q", err, line, want)
		}
	}
	if len(pe.Problems) != 2 {
		t.Errorf("%v; want only the teams because and request refused", err)
	}
	if _, err := Load([]byte(strings.NewReplacer("name: because,", "name: because-team,", "name: request,", "name: request-team,").Replace(src)), "p.yaml"); err != nil {
		t.Errorf("the names suggested do not load: %v", err)
	}
}

// TestGroupName: a top-level group path is the group of that name, unless the policy names the
// path itself (in a team, among approvers, in the directory or in a rule); nested paths and
// other groups are as sent.
func TestGroupName(t *testing.T) {
	src := "organization: Globex\nclasses:\n  - {name: shared, max_gpus: 1, max_duration: 1h}\n" +
		"teams:\n  - {name: a, idp_groups: [team-a, /research]}\n  - {name: b, idp_groups: [/parent/ml], budget_owners: [/b-leads]}\n" +
		"exceptions:\n  - {name: contractor, when: \"'/contractors' in user.groups\"}\n" +
		"sim: {nodes: [{name: a, count: 1, class: shared, gpus: 1}]}\n"
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"/team-a": "team-a", "/Team-A": "Team-A", "team-a": "team-a", "/research": "/research", "/parent/ml": "/parent/ml",
		"/parent/team-a": "/parent/team-a", "/b-leads": "/b-leads", "/contractors": "/contractors", "/": "/", "/other": "other",
	} {
		if got := p.GroupName(in); got != want {
			t.Errorf("GroupName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseWeekly: a policy's weekly schedule of any shape is read without a panic; what is read
// writes back (as "MON 09:00") to the same day and time, and a refusal is one line with an example
// that is read.
func FuzzParseWeekly(f *testing.F) {
	for _, s := range []string{"MON 09:00", "monday 9:00", "Fri 23:59", "SUN 00:00", "MONDAY", "MONDAYS 09:00", "MO 09:00", "TUE 24:00", "wed 9:60", "  thu   07:05  ", "ſun 09:00", "\xff 09:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		day, at, err := ParseWeekly(s)
		if err != nil {
			msg := err.Error()
			_, ex, ok := strings.Cut(msg, `write e.g. "`)
			ex, _, closed := strings.Cut(ex, `"`)
			if strings.Contains(msg, "\n") || !ok || !closed {
				t.Fatalf("%q refused with %q: not one line with an example", s, msg)
			}
			if _, _, err := ParseWeekly(ex); err != nil {
				t.Fatalf("%q refused with the example %q, which is refused too: %v", s, ex, err)
			}
			return
		}
		if at < 0 || at >= 24*time.Hour || at%time.Minute != 0 {
			t.Fatalf("%q read as %v %v", s, day, at)
		}
		back := fmt.Sprintf("%s %02d:%02d", strings.ToUpper(day.String()[:3]), int(at.Hours()), int(at.Minutes())%60)
		d2, at2, err := ParseWeekly(back)
		if err != nil || d2 != day || at2 != at {
			t.Fatalf("%q read as %v %v, written %q, reads back as %v %v (%v)", s, day, at, back, d2, at2, err)
		}
	})
}
