package commands

import (
	"strings"
	"testing"
	"time"
)

// Releasing a quota increase, or its running out, says the quota it is back to with its unit.
func TestQuotaBackToNamesItsUnit(t *testing.T) {
	h := newHarnessOn(t, "testdata/tokyo.yaml")
	const haru, kenji = "haru@sakura.example", "kenji@sakura.example"
	q := leaseIn(t, mustOK(t, h.say(haru, "/gpu quota request +3 a100-big for 1d because a deadline")).Text)
	mustOK(t, h.say(kenji, "/gpu approve "+q.String()))
	r := mustOK(t, h.say(haru, "/gpu release "+q.String()))
	if !strings.Contains(r.Text, "quota is back to 8 a100-big GPUs.") {
		t.Errorf("release of a quota increase: %q; want the quota with its unit", r.Text)
	}

	q = leaseIn(t, mustOK(t, h.say(haru, "/gpu quota request +1 jupyter for 1d because a deadline")).Text)
	mustOK(t, h.say(kenji, "/gpu approve "+q.String()))
	h.notices(haru)
	h.advance(25 * time.Hour)
	var got []string
	for _, n := range h.notices(haru) {
		got = append(got, n.Text)
		if strings.Contains(n.Text, q.String()+" ended") && strings.Contains(n.Text, "quota is back to 2 jupyter GPUs.") {
			return
		}
	}
	t.Errorf("notices when the quota increase ran out: %q; want one saying the quota is back to 2 jupyter GPUs", got)
}
