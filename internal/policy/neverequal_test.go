package policy

import (
	"strconv"
	"strings"
	"testing"
)

// A rule comparing class.isolation with a value it never has ('Exclusive', 'dedicated'), team.name
// with a name a letter or two from a listed team's, or written with capitals (team names are in
// lower case), or class.sku with a class's SKU in other capitals, never matches: policy check
// warns at the rule's line with the value that would, as it does for a class that is no class. A
// team name far from every listed team's may be a team the policy does not list (named after a
// group), and is left alone.
func TestARuleComparingWithAValueTheFieldNeverHasIsWarnedAbout(t *testing.T) {
	src := `organization: Sakura Bio Lab
currency: JPY
timezone: Asia/Tokyo
classes:
  - {name: jupyter, sku: L4, max_gpus: 1, max_duration: 6h}
  - {name: a100-big, sku: A100-80G, max_gpus: 4, max_duration: 48h, isolation: exclusive}
teams:
  - {name: vision-lab, idp_groups: [lab-vision], budget_owners: [yuki@sakura.example]}
  - {name: speech, idp_groups: [lab-speech], budget_owners: [yuki@sakura.example]}
sim: {nodes: [{name: a100, count: 2, class: a100-big, gpus: 4}, {name: l4, count: 1, class: jupyter, gpus: 4}]}
exceptions:
  - {name: iso, when: "class.isolation == 'Exclusive' && request.gpus > 2"}
  - {name: iso2, when: "class.isolation in ['dedicated', 'shared'] && request.gpus > 3"}
  - {name: vis, when: "team.name == 'vision_lab' && request.gpus > 1"}
  - {name: sp, when: "team.name in ['Speech', 'physics'] && request.gpus > 1"}
  - {name: sku, when: "class.sku == 'a100-80g' && request.gpus > 2"}
  - {name: fine, when: "class.isolation != 'shared' && team.name in ['speech', 'chemistry'] && class.sku == 'L4' && request.gpus > 1"}
approvals: {fallback_approvers: [ops@sakura.example]}
`
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range p.Warnings {
		if strings.HasPrefix(w.Msg, "exception rule") {
			all = append(all, w.String())
		}
	}
	at := func(name string) string { return "line " + strconv.Itoa(lineOf(t, src, "name: "+name+",")) }
	want := []string{
		at("iso") + `: exception rule "iso": class.isolation is compared with 'Exclusive', which it never is, so it never matches; write 'exclusive'`,
		at("iso2") + `: exception rule "iso2": class.isolation is compared with 'dedicated', which it never is, so it never matches; class.isolation is 'shared' or 'exclusive'`,
		at("vis") + `: exception rule "vis": team.name is compared with 'vision_lab', which is no team, so it never matches one; did you mean 'vision-lab'?`,
		at("sp") + `: exception rule "sp": team names are in lower case, so 'Speech' never matches one; write 'speech'`,
		at("sku") + `: exception rule "sku": class.sku is compared with 'a100-80g', which is no class's SKU, so it never matches one; write 'A100-80G'`,
	}
	if strings.Join(all, "\n") != strings.Join(want, "\n") {
		t.Errorf("got warnings:\n%s\nwant:\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
}

// Rules see user.name and team.budget_owners with A to Z in lower case, so a rule comparing them
// with a name written with capitals never matches: policy check warns, with the name to write.
func TestARuleComparingUserNamesWithCapitalsIsWarnedAbout(t *testing.T) {
	src := `organization: Sakura Bio Lab
classes:
  - {name: jupyter, max_gpus: 1, max_duration: 6h}
teams:
  - {name: speech, idp_groups: [lab-speech], budget_owners: [Rin@Sakura.example]}
sim: {nodes: [{name: l4, count: 1, class: jupyter, gpus: 4}]}
exceptions:
  - {name: vendor, when: "user.name == 'Max@Vendor.example' || request.gpus > class.max_gpus"}
  - {name: owner, when: "'Rin@Sakura.example' in team.budget_owners && request.duration > class.max_duration"}
  - {name: fine, when: "user.name in ['max@vendor.example'] || user.name in team.budget_owners"}
approvals: {fallback_approvers: [ops@sakura.example]}
`
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range p.Warnings {
		if strings.HasPrefix(w.Msg, "exception rule") {
			all = append(all, w.String())
		}
	}
	at := func(name string) string { return "line " + strconv.Itoa(lineOf(t, src, "name: "+name+",")) }
	want := []string{
		at("vendor") + `: exception rule "vendor": rules see user.name in lower case, so 'Max@Vendor.example' never matches it; write 'max@vendor.example'`,
		at("owner") + `: exception rule "owner": rules see team.budget_owners in lower case, so 'Rin@Sakura.example' never matches one; write 'rin@sakura.example'`,
	}
	if strings.Join(all, "\n") != strings.Join(want, "\n") {
		t.Errorf("got warnings:\n%s\nwant:\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
}
