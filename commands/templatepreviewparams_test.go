package commands

import "testing"

// /gpu template NAME with parameters is told that it takes only the name and that /gpu submit runs
// a template with parameters, with the template it named as the example; before, the example was
// another template.
func TestATemplatePreviewWithParametersKeepsTheTemplateNamed(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"template depth-probe size=128", `/gpu template takes only a template's name, not "size=128"; /gpu submit runs a template with its parameters.`, "template depth-probe"},
		{"template lagoon-lab root=notes gpus=1", `/gpu template takes only a template's name, not "root=notes gpus=1"; /gpu submit runs a template with its parameters.`, "template lagoon-lab"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
