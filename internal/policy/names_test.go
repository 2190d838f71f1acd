package policy

import (
	"testing"
)

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
