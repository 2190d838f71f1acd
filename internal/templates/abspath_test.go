package templates_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
)

// A path parameter may be written relative to the team storage (keys/authorized_keys) or as an
// absolute path inside it (/projects/vision/keys/authorized_keys): both name the same file, and
// every template renders both alike on both backends. An absolute path is never appended to the
// storage root a second time ("$QM_DATA/"/projects/vision/…, a file that does not exist).
func TestAbsoluteAndRelativePathParametersRenderAlike(t *testing.T) {
	c := catalog(t)
	n := 0
	for _, tp := range c.List() {
		for _, p := range tp.Parameters {
			if p.Type != templates.TypePath {
				continue
			}
			rel := "qm-dir/sub"
			render := func(v string) templates.Rendered {
				t.Helper()
				params := templates.Params{}
				for k, ev := range tp.ExampleParams() {
					params[k] = ev
				}
				params[p.Name] = v
				r, err := tp.Render(templates.ExampleInput(tp, "", params))
				if err != nil {
					t.Fatalf("%s %s=%s: %v", tp.Name, p.Name, v, err)
				}
				return r
			}
			a, b := render(rel), render("/projects/vision/"+rel)
			if a.SlurmScript != b.SlurmScript || a.KubernetesYAML != b.KubernetesYAML {
				t.Errorf("%s: %s=/projects/vision/%s renders otherwise than %s=%s:\n%s", tp.Name, p.Name, rel, p.Name, rel, firstDiff(a.SlurmScript+a.KubernetesYAML, b.SlurmScript+b.KubernetesYAML))
			}
			if strings.Contains(b.SlurmScript+b.KubernetesYAML, "/projects/vision/projects/vision") || strings.Contains(b.SlurmScript+b.KubernetesYAML, `"/projects/vision/`) && strings.Contains(b.SlurmScript, `$QM_DATA/"/`) {
				t.Errorf("%s: %s=/projects/vision/%s names the storage root twice", tp.Name, p.Name, rel)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no template has a path parameter")
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "  " + al[i] + "\n  " + bl[i]
		}
	}
	return "(lengths differ)"
}
