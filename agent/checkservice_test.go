package agent

import (
	"strings"
	"testing"
)

// A --service written without its scheme, or with a query, is refused with the URL the operator
// meant as the example (the scheme added, the query taken off), which the check then takes; an
// address with a port other than 443 is taken for plain HTTP.
func TestAServiceURLRefusedGivesTheURLMeant(t *testing.T) {
	for _, c := range []struct{ typed, want string }{
		{"127.0.0.1:18810", "http://127.0.0.1:18810"},
		{"qm.marlin.example", "https://qm.marlin.example"},
		{"qm.marlin.example:443", "https://qm.marlin.example:443"},
		{"gpu-svc.internal:8080/", "http://gpu-svc.internal:8080/"},
		{"https://qm.marlin.example/?x=1", "https://qm.marlin.example/"},
	} {
		err := CheckService(c.typed)
		if err == nil {
			t.Errorf("%q: taken", c.typed)
			continue
		}
		if !strings.HasSuffix(err.Error(), "e.g. --service "+c.want) {
			t.Errorf("%q: %q, want the example --service %s", c.typed, err, c.want)
		}
		if err := CheckService(c.want); err != nil {
			t.Errorf("the example %q is refused: %v", c.want, err)
		}
	}
}
