package templates

import (
	"regexp"
	"strings"
	"testing"
)

// A custom catalog whose template has a parameter named data is refused at load, in one sentence
// naming the template, its file and line and a name to give the parameter instead: /gpu submit
// reads data (data CLASS, and data=CLASS) as the job's data class, so such a parameter would take
// a data class typed for the job, which would then run without the rule on data classes.
func TestATemplateParameterNamedDataIsRefused(t *testing.T) {
	def := strings.Replace(goodDefinition, "  - name: greeting\n", "  - name: data\n", 1)
	def = strings.ReplaceAll(def, "greeting", "data")
	_, err := Load(withDefinition(t, "hello.yaml", def))
	if err == nil {
		t.Fatal("a catalog with a parameter named data loads")
	}
	msg := err.Error()
	line := strings.Count(def[:strings.Index(def, "  - name: data")], "\n") + 1
	for _, want := range []string{"hello.yaml:", "template hello", `"data"`, "data class", "name: dataset"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal %q does not say %q", msg, want)
		}
	}
	var le *LoadError
	if le, _ = err.(*LoadError); le == nil || le.Line != line {
		t.Errorf("the refusal %v is not at line %d of hello.yaml", err, line)
	}
	if regexp.MustCompile(`[.;:] [A-Z]|\n`).MatchString(msg) {
		t.Errorf("the refusal is more than one sentence: %q", msg)
	}
}
