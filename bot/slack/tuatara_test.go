package slack_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// tuataraPolicy is a policy of its own names: Tuatara Research in Auckland, billing in NZD;
// classes kete (shared) and waka (exclusive); team harakeke decided by the group
// harakeke-kaitiaki (ngaio and rawiri), team pohutukawa by moana; ops-duty the fallback
// approver; rules on the GPU count (heaps-of-gpus) and on a data class (taonga-data).
const tuataraPolicy = "testdata/tuatara.yaml"

// newTuataraEnv is the product on the Tuatara policy, with a Slack user for each person it lists.
func newTuataraEnv(t *testing.T) *env {
	t.Helper()
	p, err := policy.LoadFile(tuataraPolicy)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, storetest.SQLite(t), p, []string{"harakeke", "pohutukawa"})
	e.svc.Directory = groupDirectory{directory{p}}
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	commands.AddTemplates(e.bot, cat, workload.Settings{})
	e.slack.mu.Lock()
	e.slack.users = map[string]string{
		"UTAMA":   "tama@tuatara.example.nz",
		"UNGAIO":  "ngaio@tuatara.example.nz",
		"URAWIRI": "rawiri@tuatara.example.nz",
		"UKIRI":   "kiri@tuatara.example.nz",
		"UMOANA":  "moana@tuatara.example.nz",
		"UOPS":    "ops-duty@tuatara.example.nz",
	}
	e.slack.mu.Unlock()
	return e
}

// approvalCopy is the approval message of lease id posted to channel (a DM or a team channel).
func (e *env) approvalCopy(channel, id string) message {
	e.t.Helper()
	for _, m := range e.postsTo(channel) {
		if strings.HasPrefix(m.Text, "Approval needed") && strings.Contains(m.Text, " as "+id+".") {
			return m
		}
	}
	e.t.Fatalf("no approval message for %s in %s", id, channel)
	return message{}
}

// Someone who may not decide a request and presses Approve or Deny on its card in the team's
// channel is told who decides it by names they can reach: a group of budget owners is named with
// its members, as the requester's own answer names them, not by the directory group's name alone.
// A budget owner who asked is told the others of the group decide.
func TestARefusedDecisionNamesTheMembersOfTheGroupThatDecides(t *testing.T) {
	e := newTuataraEnv(t)
	asked := e.ask("UTAMA", "request 6 waka for 4h")
	if !strings.Contains(asked.Text, "harakeke-kaitiaki (ngaio@tuatara.example.nz, rawiri@tuatara.example.nz)") {
		t.Fatalf("the request's answer does not name the group's members: %q", asked.Text)
	}
	card := e.approvalCopy("CHARAKEKECOMPUTE", "L-1")
	for _, label := range []string{"Approve", "Deny"} {
		got := e.press("UTAMA", card, buttonLabelled(t, card, label))
		if !strings.Contains(got.Text, "harakeke-kaitiaki (ngaio@tuatara.example.nz, rawiri@tuatara.example.nz) or ops-duty@tuatara.example.nz can decide L-1") ||
			!strings.Contains(got.Text, "Example: /gpu status L-1") {
			t.Errorf("the requester's %s answered %q; want the group named with its members", label, got.Text)
		}
	}
	if s := e.lease("L-1").State; s != qm.PendingApproval {
		t.Fatalf("a refused click changed the request: %s", s)
	}

	// ngaio, one of the group, asks: rawiri alone of it decides.
	e.ask("UNGAIO", "request 5 waka for 2h")
	card = e.approvalCopy("CHARAKEKECOMPUTE", "L-2")
	got := e.press("UNGAIO", card, buttonLabelled(t, card, "Approve"))
	if !strings.Contains(got.Text, "ou cannot decide your own request L-2; only harakeke-kaitiaki (rawiri@tuatara.example.nz) or ops-duty@tuatara.example.nz can.") {
		t.Errorf("ngaio's Approve of her own request answered %q", got.Text)
	}
}
