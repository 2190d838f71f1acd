package policy

import (
	"strconv"
	"strings"
	"testing"
)

// TestARuleComparingRequestKindWithAValueRulesNeverSeeIsWarnedAbout: rules see request.kind as
// lease or extend (a quota increase is decided by a budget owner without the rules), so a rule
// comparing it with 'quota' or 'Lease' never matches; policy check warns at the rule's line, as it
// does for a class or data class that never matches, naming the values it takes.
func TestARuleComparingRequestKindWithAValueRulesNeverSeeIsWarnedAbout(t *testing.T) {
	src := exampleWith(t, "exceptions:\n", "exceptions:\n"+
		"  - {name: quota-ask, when: \"request.kind == 'quota' && request.gpus > 2\", why: Asks for more quota}\n"+
		"  - {name: lease-ask, when: \"request.kind in ['Lease', 'extend'] && request.gpus > 4\", why: Big}\n"+
		"  - {name: fine, when: \"request.kind != 'extend' && request.kind == 'lease' && request.gpus > 6\", why: Big}\n")
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "request.kind") {
			all = append(all, w.String())
		}
	}
	want := []string{
		"line " + strconv.Itoa(lineOf(t, src, "name: quota-ask")) + `: exception rule "quota-ask": request.kind is compared with 'quota', which rules never see, so it never matches; request.kind is 'lease' or 'extend'`,
		"line " + strconv.Itoa(lineOf(t, src, "name: lease-ask")) + `: exception rule "lease-ask": request.kind is compared with 'Lease', which rules never see, so it never matches; write 'lease'`,
	}
	if strings.Join(all, "\n") != strings.Join(want, "\n") {
		t.Errorf("got warnings:\n%s\nwant:\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
}
