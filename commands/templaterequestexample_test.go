package commands

import "testing"

// A template request refused for one thing (a word out of place, a data class that is no word, a
// class the policy does not have) gives an example that works as typed: it keeps only the
// parameters that are right, and no class the policy lacks. Before, "/gpu request 1 interactive
// for 2h template jupyterlab bogus=1 extra" was refused for "extra" with an example that kept
// bogus=1, refused in turn as an unknown parameter.
func TestATemplateRequestsExampleKeepsOnlyWhatIsRight(t *testing.T) {
	h := templatesOn(t, "../docs/quartermaster.example.yaml")
	for line, want := range map[string]string{
		"/gpu request 1 interactive for 2h template jupyterlab bogus=1 extra":         `"extra" is not part of a request`,
		"/gpu request 1 interactive for 2h template jupyterlab bogus=1 data <x>":      `"<x>" is not a data class`,
		"/gpu request 1 interactive for 2h template jupyterlab root=<x> 2":            `"2" is out of place`,
		"/gpu request 1 nosuch for 2h template jupyterlab bogus=1":                    `Unknown parameter "bogus"`,
		"/gpu request 1 interactive for 2h template jupyterlab root=work bogus=1 zzz": `"zzz" is not part of a request`,
		"/gpu submit cuda-smoke class=nosuch bogus=1":                                 `There is no class "nosuch"`,
		"/gpu request 2 nosuch for 1h template cuda-smoke size=x":                     `size`,
	} {
		refusedWithAWorkingExample(t, h, "alice@acme.example", line, want)
	}
}
