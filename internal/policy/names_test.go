package policy

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestSimNodeGroupsThatNameANodeAlikeAreRefused: two sim node groups whose nodes are named alike
// (the same group name written twice, in any case) used to pass policy check, and the service then
// handed out the same GPUs of "h100-01" to two leases at once. A group name that is no host name
// (a comma, which the service reads as between two nodes, or a space) is refused too.
func TestSimNodeGroupsThatNameANodeAlikeAreRefused(t *testing.T) {
	const h100 = "    - {name: h100, count: 2, class: train, gpus: 8, nvlink_islands: 1}"
	pe := refused(t, h100, h100+"\n    - {name: H100, count: 1, class: interactive, gpus: 4}")
	wantProblem(t, pe, 117, "sim node group H100 makes node h100-01, which group h100 makes too; give each group a name of its own")
	for _, name := range []string{`"gpu,b"`, `"gpu b"`, `"../b"`, `"<!channel>"`} {
		pe = refused(t, "{name: h100,", "{name: "+name+",")
		if len(pe.Problems) != 1 || pe.Problems[0].Line != 116 {
			t.Errorf("group name %s: want one problem at line 116, got:\n%v", name, pe)
		}
	}
	if _, err := Load([]byte(exampleWith(t, h100, h100+"\n    - {name: h100-1, count: 3, class: train, gpus: 8}")), "p.yaml"); err != nil {
		t.Errorf("groups whose nodes are all named apart (h100-01, h100-1-01) are refused: %v", err)
	}
}

// TestDataClassesAreOneWordInAnyCase: a team cleared for [Public, Internal] used to send every
// request of its own team to a budget owner, its first data class included, because a request's
// data class is compared in lower case. Data classes are kept in lower case, and one that a
// request cannot name (two words) is refused.
func TestDataClassesAreOneWordInAnyCase(t *testing.T) {
	p, err := Load([]byte(exampleWith(t, "data_classes: [public, internal]", "data_classes: [Public, INTERNAL]")), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := p.Team("vision")
	if !reflect.DeepEqual(tm.DataClasses, []string{"public", "internal"}) {
		t.Errorf("data classes: %q", tm.DataClasses)
	}
	in := baseInput(p) // a request for internal data
	if ms := p.Evaluate(context.Background(), in); len(ms) != 0 {
		t.Errorf("a request for internal data of a team cleared for INTERNAL meets %v", ms)
	}
	pe := refused(t, "data_classes: [public, internal]", "data_classes: [public, Restricted Data]")
	wantProblem(t, pe, 44, `team vision: data class "Restricted Data" must be one word of the letters a to z, digits, -, _ or . (40 at most), as a request names it (data restricted-data); write "restricted-data"`)
}

// TestExceptionRuleNamesAreOneLineWithoutCommas: a blank rule name passed as a name, and a name
// with a comma in it broke the list of rules the approvers read ("rules a: …; b; ; quota").
func TestExceptionRuleNamesAreOneLineWithoutCommas(t *testing.T) {
	pe := refused(t, "  - name: contractor\n", "  - name: \"  \"\n")
	wantProblem(t, pe, 69, "exception rule 5 needs a name; e.g. name: large-request")
	pe = refused(t, "  - name: contractor\n", "  - name: \"contractor, vendor\"\n")
	wantProblem(t, pe, 69, `exception rule name "contractor, vendor" may not hold a comma, a line break or an invisible character; e.g. name: large-request`)
	pe = refused(t, "  - name: contractor\n", "  - name: \"contr\\u202eactor\"\n")
	wantProblem(t, pe, 69, `exception rule name "contr\u202eactor" may not hold a comma, a line break or an invisible character; e.g. name: large-request`)
}

// TestDataClassesNamedByARequestWordAreRefused: after "data" a request reads its own words (for,
// team, template, exclusive…) as themselves, so a data class named by one could not be asked for;
// the policy refuses it, as it refuses such a class.
func TestDataClassesNamedByARequestWordAreRefused(t *testing.T) {
	for _, w := range []string{"for", "Exclusive", "team"} {
		pe := refused(t, "data_classes: [public, internal]", "data_classes: [public, "+w+"]")
		wantProblem(t, pe, 44, `team vision: data class "`+w+`" is a word /gpu request reads as its own after data (`+RequestWords[strings.ToLower(w)]+`), so no request could name it; e.g. data_classes: [public, internal]`)
	}
}
