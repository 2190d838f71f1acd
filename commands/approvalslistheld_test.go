package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// /gpu approvals says of each request what its approval message says the budget owner decides
// on: what the team holds now of the class, where the request (by a rule that reads the quota
// itself) goes past it, and for a quota increase or an extension; and an extension names its
// team, as a lease does, so that a fallback approver deciding for every team knows whose it is.
func TestApprovalsListSaysWhatTheTeamHoldsAndWhoseAnExtensionIs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lumen.yaml")
	pol := strings.Replace(lumenPolicy, "approvals:",
		"exceptions:\n"+
			"  - {name: past-quota, when: \"usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]\", why: Beyond the team's quota}\n"+
			"  - {name: too-long, when: \"request.duration > class.max_duration\"}\n"+
			"approvals:", 1)
	if err := os.WriteFile(file, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	const uma, odile, ops = "uma@lumen.example", "odile@lumen.example", "ops@lumen.example"

	mustOK(t, h.say(uma, "/gpu request 3 lathe for 2h"))
	held := leaseIn(t, mustOK(t, h.say(uma, "/gpu request 1 lathe for 2h")).Text).String()
	over := leaseIn(t, mustOK(t, h.say(uma, "/gpu request 1 lathe for 2h")).Text).String()
	extReply := mustOK(t, h.say(uma, "/gpu extend "+held+" 5h")).Text
	ext := regexp.MustCompile(`waits for approval as (L-\d+)`).FindStringSubmatch(extReply)
	if ext == nil {
		t.Fatalf("/gpu extend %s 5h: %q; want it to wait for approval", held, extReply)
	}
	inc := leaseIn(t, mustOK(t, h.say(uma, "/gpu quota request +2 lathe for 1d because a sweep")).Text).String()

	// The line each approval message gives of what the team holds.
	holds := map[string]string{}
	for _, n := range h.notices(odile) {
		for _, id := range []string{over, ext[1], inc} {
			if strings.HasPrefix(n.Text, "Approval needed:") && strings.Contains(n.Text, " as "+id) {
				if m := regexp.MustCompile(`Team photon holds [^.]*\.`).FindString(n.Text); m != "" {
					holds[id] = m
				}
			}
		}
	}
	for _, id := range []string{over, ext[1], inc} {
		if holds[id] == "" {
			t.Fatalf("the approval message of %s says nothing of what team photon holds", id)
		}
	}
	for _, who := range []string{odile, ops} {
		r := mustOK(t, h.say(who, "/gpu approvals"))
		for _, sec := range r.Sections {
			id := strings.Fields(sec.Title)[0]
			if want := holds[id]; want != "" && !strings.Contains(sec.Text, want) {
				t.Errorf("%s: /gpu approvals says of %s %q; want what its approval message says: %q", who, id, sec.Text, want)
			}
			if id == ext[1] && !strings.Contains(sec.Text, "rule too-long.") {
				t.Errorf("%s: /gpu approvals says of %s %q; want the rule without a why named alone, as its approval message names it", who, id, sec.Text)
			}
			if id == ext[1] && !hasField(sec, "Team", "photon") {
				t.Errorf("%s: /gpu approvals does not name the team of the extension %s: %+v", who, id, sec)
			}
		}
	}
}

func hasField(sec bot.Section, label, value string) bool {
	for _, f := range sec.Fields {
		if f.Label == label && f.Value == value {
			return true
		}
	}
	return false
}
