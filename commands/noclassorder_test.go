package commands

import (
	"strings"
	"testing"
)

// A class that is no class of the catalog is refused naming the catalog's classes with the one
// the example uses first, by one rule: the class a reader takes the typo for (policy.NearMiss),
// else the asker's. Before, the sentence put first the class within two letters of the one typed
// (xyss: abyss) while the example named another (tidal), as a near miss of four letters is one
// letter off. A job's example that names no class (none is near the one typed) lists them in the
// policy's order.
func TestTheClassNamedFirstIsTheExamplesClass(t *testing.T) {
	h := kelpOn(t)
	for _, ask := range []string{
		"request 1 xyss for 2h", "request 2 tidl for 1h", "request 1 abys", "estimate 1 xyss 2h", "estimate 2 abbys 3h",
		"quota request +1 xyss because poster session", "quota request +1 abbys because poster session",
		"submit depth-probe class=xyss", "submit depth-probe class=abys",
	} {
		r := h.say("mara@kelp.example", "/gpu "+ask)
		msg, ex, _ := strings.Cut(r.Text, " Example: ")
		_, listed, ok := strings.Cut(msg, "the catalog has ")
		if !r.Error || !ok {
			t.Errorf("/gpu %s answered %q; want the catalog's classes named", ask, r.Text)
			continue
		}
		first := strings.Fields(strings.NewReplacer(",", " ", ".", " ").Replace(listed))[0]
		named := strings.Contains(ex, "class=") || !strings.HasPrefix(ex, "/gpu submit ") // a job without class= names none
		if named && !strings.Contains(" "+ex+" ", " "+first+" ") && !strings.Contains(ex, "class="+first) {
			t.Errorf("/gpu %s answered %q; the class named first, %s, is not the example's", ask, r.Text, first)
		}
		if again := h.say("mara@kelp.example", ex); again.Error {
			t.Errorf("/gpu %s: its example %s answered %q", ask, ex, again.Text)
		}
	}
}
