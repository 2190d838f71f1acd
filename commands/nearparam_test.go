package commands

import (
	"strings"
	"testing"
)

// An unknown parameter of /gpu submit is met with "did you mean" only for a near miss of one of
// the template's parameters (a letter or two off a long name, one off a short one), as help topics
// are: foo is no near miss of root, and a guess that far off misleads.
func TestSubmitSuggestsOnlyANearMissOfAParameter(t *testing.T) {
	h := tokyoHarness(t)
	for _, c := range []struct{ cmd, near string }{
		{"/gpu submit jupyterlab foo=1", ""},
		{"/gpu submit jupyterlab xyz=1", ""},
		{"/gpu submit jupyterlab rot=true", "root"},
		{"/gpu submit cuda-smoke sise=1024", "size"},
		{"/gpu submit cuda-smoke sz=1024", ""},
	} {
		r := h.say(haru, c.cmd)
		if !r.Error {
			t.Errorf("%s was not refused: %s", c.cmd, r.Text)
			continue
		}
		switch {
		case c.near == "" && strings.Contains(r.Text, "did you mean"):
			t.Errorf("%s is answered with a far-off guess: %s", c.cmd, r.Text)
		case c.near != "" && !strings.Contains(r.Text, "did you mean "+c.near+"?"):
			t.Errorf("%s does not suggest %s: %s", c.cmd, c.near, r.Text)
		}
	}
}
