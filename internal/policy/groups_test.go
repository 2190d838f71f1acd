package policy

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestPolicyCheckWarnsOfAGroupThatLooksLikeATeamName: a directory entry whose group spells a
// team's name (in any case or look-alike letters) without being one of its idp_groups loads, with
// a warning naming the entry, the group and the team; entries in a team's own groups, and groups
// unlike any team, draw none. A rule comparing user.groups with capitals draws one too.
func TestPolicyCheckWarnsOfAGroupThatLooksLikeATeamName(t *testing.T) {
	b, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "directory:\n", `directory:
  - {user: mallory@acme.example, groups: [Vision]}
  - {user: oscar@acme.example, groups: [ai-vision, LANGUAGE]}
  - {user: pia@acme.example, groups: ["vіsion"]}
  - {user: quinn@acme.example, groups: [AI-Vision, ai-robotics]}
`, 1)
	src = strings.Replace(src, "exceptions:\n", "exceptions:\n  - {name: interns, when: \"'Interns' in user.groups\"}\n", 1)
	src = strings.Replace(src, "teams:\n", "teams:\n  - {name: robotics, idp_groups: [ai-robotics]}\n  - {name: r0botics, idp_groups: [ai-r0botics]}\n", 1)
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
		`directory entry mallory@acme.example: group "Vision" looks like the name of team vision, but the members of team vision are those in ai-vision, so mallory@acme.example is not in team vision`,
		`directory entry oscar@acme.example: group "LANGUAGE" looks like the name of team language`,
		`directory entry pia@acme.example: group "vіsion" looks like the name of team vision`,
		`exception rule "interns": rules see user.groups in lower case, so 'Interns' never matches a group; write "interns"`,
		`team r0botics looks like team robotics: people will take one for the other`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no warning %q in:\n%s", want, text)
		}
	}
	if len(p.Warnings) != 5 || strings.Contains(text, "quinn") {
		t.Errorf("want exactly 5 warnings, got:\n%s", text)
	}
	if p.Warnings[0].Line == 0 {
		t.Errorf("a warning without its line: %v", p.Warnings[0])
	}
	if plain, _ := LoadFile(examplePath); len(plain.Warnings) != 0 {
		t.Errorf("the example draws warnings: %v", plain.Warnings)
	}
}

// TestNamesCompareOnlyAToZWithoutCase: names are one only when their text is, A to Z in any case.
func TestNamesCompareOnlyAToZWithoutCase(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"ai-vision", "AI-Vision", true},
		{"dana@acme.example", "Dana@ACME.example", true},
		{"ai-vision", "ai-viſion", false},                // long s
		{"kate@x.example", "\u212Aate@x.example", false}, // Kelvin sign
		{"vision", "vіsion", false},                      // Cyrillic і
		{"vision", "vision ", false},
	} {
		if got := SameName(c.a, c.b); got != c.same {
			t.Errorf("SameName(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// TestUnlistedTeamIsNeverALookAlike: someone whose groups meet no team's gets a team named after
// their first group only when that group is written as a team name and looks like no listed team.
func TestUnlistedTeamIsNeverALookAlike(t *testing.T) {
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	for g, want := range map[string]string{"robotics": "robotics", "Robotics": "robotics", "ml_ops": "ml_ops",
		"vision": "", "Vision": "", "v1sion": "", "vision-": "", "lang-uage": "", "ML Ops": "", "ｒｏｂｏｔｉｃｓ": "", "": ""} {
		got, ok := p.UnlistedTeam(g)
		if got != want || ok != (want != "") {
			t.Errorf("UnlistedTeam(%q) = %q, %v; want %q", g, got, ok, want)
		}
	}
}

// TestPolicyCheckWarnsOfALimitNoRuleReads: a policy whose exception rules never read
// class.max_duration (or class.max_gpus) loads, with one warning per limit at the first class's
// line for it, saying such requests are granted without approval and giving the rule to add.
func TestPolicyCheckWarnsOfALimitNoRuleReads(t *testing.T) {
	src := exampleWith(t, "    when: request.duration > class.max_duration\n", "    when: request.duration > duration('100h')\n")
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 {
		t.Fatalf("want one warning, got %v", p.Warnings)
	}
	w := p.Warnings[0]
	want := "no exception rule reads class.max_duration, so a request for longer than the max_duration of class interactive is granted without approval, though the catalog says it needs one; add a rule with when: request.duration > class.max_duration"
	if w.Msg != want || !strings.Contains(strings.Split(src, "\n")[w.Line-1], "max_duration: 8h") {
		t.Errorf("warning %d: %q, want %q at the line of interactive's max_duration", w.Line, w.Msg, want)
	}
	src = strings.Replace(src, "    when: request.gpus > class.max_gpus\n", "    when: request.gpus > 64\n", 1)
	if p, err = Load([]byte(src), "p.yaml"); err != nil || len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0].Msg, "class.max_gpus, so a request for more GPUs than the max_gpus of class interactive") {
		t.Errorf("without a max_gpus rule: %v, %v", p.Warnings, err)
	}
}

// TestPolicyCheckWarnsOfAnApproverNobodyIs: a budget owner, or a fallback approver, that is no
// directory entry's user (or, for a group, no entry's group) draws a warning at its line; a
// policy without a directory (single sign-on) draws none.
func TestPolicyCheckWarnsOfAnApproverNobodyIs(t *testing.T) {
	src := exampleWith(t, "budget_owners: [dana@acme.example]", "budget_owners: [dana@acme.example, dnaa@acme.example, leads, finance]",
		"fallback_approvers: [platform-leads@acme.example]", "fallback_approvers: [platform-leads@acme.example, ops@acme.example]")
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := warningText(p.Warnings)
	lines := strings.Split(src, "\n")
	for _, c := range []struct{ want, line string }{
		{"team vision's budget owner dnaa@acme.example is not in the directory, so without single sign-on nobody can decide as them", "dnaa@acme.example"},
		{"team vision's budget owner finance is a group no directory entry is in", "finance"},
		{"fallback approver ops@acme.example is not in the directory", "ops@acme.example"},
	} {
		found := false
		for _, w := range p.Warnings {
			if strings.Contains(w.Msg, c.want) && strings.Contains(lines[w.Line-1], c.line) {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning %q at the line naming %s in:\n%s", c.want, c.line, text)
		}
	}
	if len(p.Warnings) != 3 {
		t.Errorf("want 3 warnings (dana and the group leads are in the directory), got:\n%s", text)
	}
	var kept []string
	for _, l := range lines {
		if l != "directory:" && !strings.HasPrefix(l, "  - {user:") {
			kept = append(kept, l)
		}
	}
	p, err = Load([]byte(strings.Join(kept, "\n")), "p.yaml")
	if err != nil {
		t.Fatalf("without a directory: %v", err)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("without a directory: %v", p.Warnings)
	}
}

// TestPolicyCheckWarnsOfExceptionsNobodyDecides: without fallback approvers, a team with no
// budget owners, and the teams the policy does not list, draw a warning each.
func TestPolicyCheckWarnsOfExceptionsNobodyDecides(t *testing.T) {
	src := exampleWith(t, "fallback_approvers: [platform-leads@acme.example]", "fallback_approvers: []",
		"    budget_owners: [lee@acme.example]\n", "",
		"directory:\n", "directory:\n  - {user: visitor@acme.example, groups: [guests]}\n")
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := warningText(p.Warnings)
	for _, want := range []string{
		"team language has no budget_owners and approvals.fallback_approvers is empty, so nobody can decide its exceptions",
		"nobody can decide the exceptions of teams the policy does not list (such as that of visitor@acme.example)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no warning %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "team vision has no budget_owners") {
		t.Errorf("team vision has a budget owner, yet:\n%s", text)
	}
}

// exampleWith is the example policy with each old text (in pairs: old, new) replaced once.
func exampleWith(t *testing.T, pairs ...string) string {
	t.Helper()
	b, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for i := 0; i+1 < len(pairs); i += 2 {
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	return src
}

// warningText is the warnings' messages, one a line, each after its line number.
func warningText(ws []Problem) string {
	var all []string
	for _, w := range ws {
		all = append(all, fmt.Sprintf("%d: %s", w.Line, w.Msg))
	}
	return strings.Join(all, "\n")
}

// TestADiscordChannelOfNoChannelIsPointedOut: a discord.channels entry that names no channel of
// the policy (a typo) would leave the channel meant without Discord posts; policy check says so
// at its line, with the channels the policy names. Upper and lower case aside, it is the channel.
func TestADiscordChannelOfNoChannelIsPointedOut(t *testing.T) {
	p, err := Load([]byte(exampleWith(t, `"#vision-gpu": "200000000000000001"`, `"#vison-gpu": "200000000000000001"`)), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "discord.channels: #vison-gpu is no channel the policy names, so nothing is posted to it on Discord; the policy's channels are #vision-gpu, #language-gpu, #gpu-showback"
	if text := warningText(p.Warnings); !strings.Contains(text, want) || p.Warnings[len(p.Warnings)-1].Line == 0 {
		t.Errorf("warnings:\n%s\nwant %q", text, want)
	}
	p, err = Load([]byte(exampleWith(t, `"#vision-gpu": "200000000000000001"`, `"#Vision-GPU": "200000000000000001"`)), "p.yaml")
	if err != nil || len(p.Warnings) != 0 {
		t.Errorf("#Vision-GPU: %v %s", err, warningText(p.Warnings))
	}
}

// TestATeamNobodyDecidesForIsToldWhoCould: the warning of a team with no budget owners and no
// fallback approvers said that its exceptions are refused, but not what to write. It names the
// fix, with someone of the team the directory lists as its budget owner, and that policy draws no
// such warning.
func TestATeamNobodyDecidesForIsToldWhoCould(t *testing.T) {
	src := exampleWith(t, "fallback_approvers: [platform-leads@acme.example]", "fallback_approvers: []",
		"    budget_owners: [lee@acme.example]\n", "")
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "team language has no budget_owners and approvals.fallback_approvers is empty, so nobody can decide its exceptions: a request that needs approval (a quota increase too) is refused; name who decides them, e.g. budget_owners: [lee@acme.example] under team language, or approvals.fallback_approvers"
	if text := warningText(p.Warnings); !strings.Contains(text, want) {
		t.Fatalf("no warning %q in:\n%s", want, text)
	}
	fixed := strings.Replace(src, "  - name: language\n", "  - name: language\n    budget_owners: [lee@acme.example]\n", 1)
	p, err = Load([]byte(fixed), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if text := warningText(p.Warnings); strings.Contains(text, "team language has no budget_owners") {
		t.Errorf("with the budget owner offered, still:\n%s", text)
	}
}
