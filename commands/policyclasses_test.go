package commands

import (
	"strings"
	"testing"
)

// /gpu policy counts the classes a team has no GPUs in so that it reads right: the one other
// class by its name, several by how many, and nothing where the team has GPUs in every class.
func TestPolicyCountsTheClassesATeamHasNoGPUsIn(t *testing.T) {
	h := newHarnessOn(t, "testdata/harbor.yaml")
	p := mustOK(t, h.say("mere@harbor.example", "/gpu policy")).PlainText()
	if want := "kelp: 3 bench GPUs at once, none in class rack,"; !strings.Contains(p, want) {
		t.Errorf("/gpu policy says %q; want %q", p, want)
	}
	if strings.Contains(p, "1 other class") {
		t.Errorf("/gpu policy counts one class as %q", p)
	}
	if want := "seismic: 2 bench GPUs and 8 rack GPUs at once,"; !strings.Contains(p, want) {
		t.Errorf("/gpu policy says %q; want %q", p, want)
	}
}
