package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// /gpu approvals, like the approval message, says by how much an exception would also take its
// team past its quota (not only that it would), and its week's figures count the requests of the
// teams the viewer decides for, named: a budget owner of one team is not shown every team's
// requests as theirs; a fallback approver, who decides for all of them, sees all of them.
func TestApprovalsShowTheQuotaNumbersAndTheViewersTeams(t *testing.T) {
	// The Tokyo lab without its published rule on the quota, so that the quota note is added.
	h := newHarnessOn(t, policyVariant(t, tokyoPolicy,
		"    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name] || usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week\n", "    when: \"false\"\n"))
	const sora, yuki, infra = "sora@sakura.example", "yuki@sakura.example", "infra@sakura.example"

	// proteomics: two requests, one decided by its budget owner.
	mustOK(t, h.say(haru, "/gpu request 1 jupyter for 1h"))
	long := leaseIn(t, mustOK(t, h.say(haru, "/gpu request 1 jupyter for 10h")).Text).String()
	mustOK(t, h.say(kenji, "/gpu deny "+long+" too long"))
	// vision-lab: its whole a100-big quota, then a long lease that would go past it.
	mustOK(t, h.say(sora, "/gpu request 4 a100-big for 2h"))
	h.notices(yuki)
	id := leaseIn(t, mustOK(t, h.say(sora, "/gpu request 1 a100-big for 50h")).Text).String()
	var note string
	for _, n := range h.notices(yuki) {
		if m := regexp.MustCompile(`quota: (It would also take [^.]*\d[^.]*)\.`).FindStringSubmatch(n.Text); m != nil && strings.Contains(n.Text, id) {
			note = m[1]
		}
	}
	if note == "" {
		t.Fatalf("the approval message of %s gives no quota note with numbers", id)
	}

	a := texts([]bot.Reply{mustOK(t, h.say(yuki, "/gpu approvals"))})
	if !strings.Contains(a, "quota: "+note) {
		t.Errorf("/gpu approvals does not give the approval message's quota note %q:\n%s", note, a)
	}
	if !strings.Contains(a, "team vision-lab: 0 human decisions on 2 requests") {
		t.Errorf("/gpu approvals of vision-lab's budget owner counts other teams' requests:\n%s", a)
	}
	k := mustOK(t, h.say(kenji, "/gpu approvals")).Text
	if !strings.Contains(k, "team proteomics: 1 human decision on 2 requests") {
		t.Errorf("/gpu approvals of proteomics' budget owner: %s", k)
	}
	all := mustOK(t, h.say(infra, "/gpu approvals")).Text
	if !strings.Contains(all, "all teams: 1 human decision on 4 requests") {
		t.Errorf("/gpu approvals of the fallback approver: %s", all)
	}
}
