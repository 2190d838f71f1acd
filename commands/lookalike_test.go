package commands

import "testing"

// Data classes and template names typed in a command compare as class and team names do: the
// same text, upper and lower case of A to Z aside. A letter that only looks like one (a dotted
// capital İ, a Kelvin sign for a K) names no data class and no template: "data İnternal" is not
// the team's internal data, and "tr\u0130ton-server" is not triton-server.
func TestDataClassesAndTemplateNamesCompareOnlyAToZCase(t *testing.T) {
	h := templatesOn(t, "../docs/quartermaster.example.yaml")
	alice := "alice@acme.example"
	for line, want := range map[string]string{
		"/gpu request 1 interactive for 1h data \u0130nternal":            "is not a data class",
		"/gpu request 1 interactive for 1h data publi\u212a":              "is not a data class",
		"/gpu submit tr\u0130ton-server":                                  "no template",
		"/gpu submit chec\u212apoint-training script=train.py":            "no template",
		"/gpu request 1 interactive for 1h template rapids-noteboo\u212a": "no template",
		"/gpu template tr\u0130ton-server":                                "no template",
	} {
		refusedWithAWorkingExample(t, h, alice, line, want)
	}
	// Upper case A to Z still names them.
	for _, line := range []string{"/gpu request 1 interactive for 1h data INTERNAL", "/gpu template TRITON-SERVER", "/gpu submit CUDA-SMOKE"} {
		if r := h.say(alice, line); r.Error {
			t.Errorf("%s: %s", line, r.Text)
		}
	}
}
