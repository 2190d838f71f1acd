package policy

import (
	"slices"
	"strings"
	"testing"
)

// loadsWith loads otherPolicy with old replaced by new, and fails the test if it is refused.
func loadsWith(t *testing.T, old, new string) *Policy {
	t.Helper()
	if !strings.Contains(otherPolicy, old) {
		t.Fatalf("the policy has no %q", old)
	}
	p, err := Load([]byte(strings.Replace(otherPolicy, old, new, 1)), "p.yaml")
	if err != nil {
		t.Fatalf("%s: %v", new, err)
	}
	return p
}

// TestADistinguishedNameWrittenAsTheValueStaysWholeInTheExample: a group's LDAP distinguished
// name written as the value of a list (idp_groups: cn=seq-core,ou=groups,dc=kita) is refused
// with the list it was meant to be, the name whole and in quotes, not cut at its commas into
// groups nobody is in; the example, typed back, loads with the name as one group. Plain groups
// written so are still split at their commas, and a value that holds two names gets both.
func TestADistinguishedNameWrittenAsTheValueStaysWholeInTheExample(t *testing.T) {
	const old = "idp_groups: [grp-genomics]"
	line := lineOf(t, otherPolicy, old)
	for _, c := range []struct {
		value, eg string
		groups    []string
	}{
		{"CN=Genomics Lab,OU=Groups,DC=kita,DC=example", `idp_groups: ["CN=Genomics Lab,OU=Groups,DC=kita,DC=example"]`,
			[]string{"CN=Genomics Lab,OU=Groups,DC=kita,DC=example"}},
		{"grp-genomics, uid=seq-core,ou=groups,o=kita", `idp_groups: [grp-genomics, "uid=seq-core,ou=groups,o=kita"]`,
			[]string{"grp-genomics", "uid=seq-core,ou=groups,o=kita"}},
		{"cn=seq-core, ou=groups, dc=kita", `idp_groups: ["cn=seq-core, ou=groups, dc=kita"]`,
			[]string{"cn=seq-core, ou=groups, dc=kita"}},
		{"cn=seq-core,dc=kita,cn=wet-lab,dc=kita", `idp_groups: ["cn=seq-core,dc=kita", "cn=wet-lab,dc=kita"]`,
			[]string{"cn=seq-core,dc=kita", "cn=wet-lab,dc=kita"}},
		{"grp-genomics, grp-sequencing", "idp_groups: [grp-genomics, grp-sequencing]",
			[]string{"grp-genomics", "grp-sequencing"}},
	} {
		pe := refusedOther(t, old, "idp_groups: "+c.value)
		wantProblem(t, pe, line, `team genomics-2: idp_groups must be a list, not "`+c.value+`"; e.g. `+c.eg)
		if p := loadsWith(t, old, c.eg); !slices.Equal(p.Teams[0].IDPGroups, c.groups) {
			t.Errorf("%s loads as the groups %q; want %q", c.eg, p.Teams[0].IDPGroups, c.groups)
		}
	}

	// Budget owners may be groups too.
	const owners = "budget_owners: [hana@kita.example]"
	pe := refusedOther(t, owners, "budget_owners: cn=genomics-leads,ou=groups,dc=kita")
	wantProblem(t, pe, lineOf(t, otherPolicy, owners), `team genomics-2: budget_owners must be a list, not "cn=genomics-leads,ou=groups,dc=kita"; e.g. budget_owners: ["cn=genomics-leads,ou=groups,dc=kita"]`)

	// In a map in braces YAML cuts the name at its commas into keys; it is still one name.
	const entry = "groups: [grp-genomics]}"
	pe = refusedOther(t, entry, "groups: cn=grp-genomics, ou=groups, dc=kita}")
	wantProblem(t, pe, lineOf(t, otherPolicy, entry), `directory entry hana@kita.example: groups must be a list, not "cn=grp-genomics, ou=groups, dc=kita"; e.g. groups: ["cn=grp-genomics, ou=groups, dc=kita"]`)
	if len(pe.Problems) != 1 {
		t.Errorf("want one problem, got:\n%v", pe)
	}
	if p := loadsWith(t, entry, `groups: ["cn=grp-genomics, ou=groups, dc=kita"]}`); !slices.Equal(p.Directory[0].Groups, []string{"cn=grp-genomics, ou=groups, dc=kita"}) {
		t.Errorf("the example loads as the groups %q", p.Directory[0].Groups)
	}
}

// TestADistinguishedNameInBracketsWithoutQuotesIsRefused: idp_groups: [cn=seq-core,ou=groups,
// dc=kita] is a list YAML reads as three groups (cn=seq-core, ou=groups, dc=kita) that nobody is
// in, so the team would have no members without a word. Policy check refuses it at its line, in
// one sentence, with the list written so that the name is one group; that list, typed back,
// loads. A name in quotes, or in a list of lines (- cn=…), is one group, and loads as it is.
func TestADistinguishedNameInBracketsWithoutQuotesIsRefused(t *testing.T) {
	for _, c := range []struct {
		old, new, msg, eg string
		groups            func(*Policy) []string
	}{
		{"idp_groups: [grp-genomics]", "idp_groups: [cn=seq-core,ou=groups,dc=kita]",
			`team genomics-2: idp_groups reads "cn=seq-core,ou=groups,dc=kita" as 3 groups (cn=seq-core, ou=groups and dc=kita) that nobody is in, as YAML splits a list in brackets at each comma; write the distinguished name in quotes, e.g. idp_groups: ["cn=seq-core,ou=groups,dc=kita"]`,
			`idp_groups: ["cn=seq-core,ou=groups,dc=kita"]`,
			func(p *Policy) []string { return p.Teams[0].IDPGroups }},
		{"idp_groups: [grp-genomics]", "idp_groups: [grp-genomics, CN=Seq Core, OU=Groups, DC=kita, DC=example]",
			`team genomics-2: idp_groups reads "CN=Seq Core, OU=Groups, DC=kita, DC=example" as 4 groups (CN=Seq Core, OU=Groups, DC=kita and DC=example) that nobody is in, as YAML splits a list in brackets at each comma; write the distinguished name in quotes, e.g. idp_groups: [grp-genomics, "CN=Seq Core, OU=Groups, DC=kita, DC=example"]`,
			`idp_groups: [grp-genomics, "CN=Seq Core, OU=Groups, DC=kita, DC=example"]`,
			func(p *Policy) []string { return p.Teams[0].IDPGroups }},
		{"idp_groups: [grp-genomics]", `idp_groups: [uid=seq,o=kita,uid=wet,o=kita, "grp-genomics"]`,
			`team genomics-2: idp_groups reads "uid=seq,o=kita" and "uid=wet,o=kita" as 4 groups (uid=seq, o=kita, uid=wet and o=kita) that nobody is in, as YAML splits a list in brackets at each comma; write each distinguished name in quotes, e.g. idp_groups: ["uid=seq,o=kita", "uid=wet,o=kita", grp-genomics]`,
			`idp_groups: ["uid=seq,o=kita", "uid=wet,o=kita", grp-genomics]`,
			func(p *Policy) []string { return p.Teams[0].IDPGroups }},
		{"budget_owners: [hana@kita.example]", "budget_owners: [hana@kita.example, cn=genomics-leads,ou=groups,dc=kita]",
			`team genomics-2: budget_owners reads "cn=genomics-leads,ou=groups,dc=kita" as 3 groups (cn=genomics-leads, ou=groups and dc=kita) that nobody is in, as YAML splits a list in brackets at each comma; write the distinguished name in quotes, e.g. budget_owners: [hana@kita.example, "cn=genomics-leads,ou=groups,dc=kita"]`,
			`budget_owners: [hana@kita.example, "cn=genomics-leads,ou=groups,dc=kita"]`,
			func(p *Policy) []string { return p.Teams[0].BudgetOwners }},
		{"groups: [grp-genomics]}", "groups: [cn=grp-genomics,ou=groups,dc=kita]}",
			`directory entry hana@kita.example: groups reads "cn=grp-genomics,ou=groups,dc=kita" as 3 groups (cn=grp-genomics, ou=groups and dc=kita) that nobody is in, as YAML splits a list in brackets at each comma; write the distinguished name in quotes, e.g. groups: ["cn=grp-genomics,ou=groups,dc=kita"]`,
			`groups: ["cn=grp-genomics,ou=groups,dc=kita"]}`,
			func(p *Policy) []string { return p.Directory[0].Groups }},
	} {
		pe := refusedOther(t, c.old, c.new)
		wantProblem(t, pe, lineOf(t, otherPolicy, c.old), c.msg)
		if len(pe.Problems) != 1 {
			t.Errorf("%s: want one problem, got:\n%v", c.new, pe)
		}
		p := loadsWith(t, c.old, c.eg)
		var dns int
		for _, g := range c.groups(p) {
			if strings.Count(g, "=") > 1 {
				dns++
			}
			if strings.Count(g, "=") == 1 {
				t.Errorf("%s loads with the group %q, a piece of a distinguished name", c.eg, g)
			}
		}
		if dns == 0 {
			t.Errorf("%s loads with no distinguished name: %q", c.eg, c.groups(p))
		}
	}

	// Quoted, or one a line, the name is one group and loads; so do groups that merely hold an =.
	for _, ok := range []string{
		`idp_groups: ["cn=seq-core,ou=groups,dc=kita", grp-genomics]`,
		"idp_groups:\n      - cn=seq-core,ou=groups,dc=kita\n      - grp-genomics",
		"idp_groups: [grp-genomics, role=admin]",
		"idp_groups: [cn=seq-core]",
	} {
		loadsWith(t, "idp_groups: [grp-genomics]", ok)
	}
}
