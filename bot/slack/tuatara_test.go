package slack_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
	e.slack.setUsers(map[string]string{
		"UTAMA":   "tama@tuatara.example.nz",
		"UNGAIO":  "ngaio@tuatara.example.nz",
		"URAWIRI": "rawiri@tuatara.example.nz",
		"UKIRI":   "kiri@tuatara.example.nz",
		"UMOANA":  "moana@tuatara.example.nz",
		"UOPS":    "ops-duty@tuatara.example.nz",
	})
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
			!strings.Contains(got.Text, "Example: `/gpu status L-1`") {
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
	if !strings.Contains(got.Text, "ou cannot decide your own request L-2; only the group harakeke-kaitiaki (rawiri@tuatara.example.nz) or ops-duty@tuatara.example.nz can.") {
		t.Errorf("ngaio's Approve of her own request answered %q", got.Text)
	}
}

// A number or a duration typed in quotes, as a class, team or lease id may be (“1”, "2h", ‘1h’,
// as a phone or a copied example writes them), is read as the value inside the quotes: it is
// neither refused as out of place nor echoed back in doubled quotes.
func TestQuotedNumbersAndDurationsReadAsTheirValues(t *testing.T) {
	e := newTuataraEnv(t)
	got := e.ask("UTAMA", "request “1” kete for “2h”")
	if !strings.HasPrefix(got.Text, "L-1 is active: 1 × kete") || !strings.Contains(got.Text, "(in 2h)") {
		t.Fatalf("/gpu request “1” kete for “2h” answered %q", got.Text)
	}
	for _, ask := range []string{`extend L-1 "1h"`, `extend “L-1” ‘1h’`} {
		if got := e.ask("UTAMA", ask); !strings.HasPrefix(got.Text, "L-1 now runs until") {
			t.Errorf("/gpu %s answered %q", ask, got.Text)
		}
	}
	if l := e.lease("L-1"); l.Duration != 4*time.Hour {
		t.Errorf("L-1 lasts %s after two extensions by 1h, want 4h", l.Duration)
	}
	if got := e.ask("UTAMA", `estimate '2' kete "3h"`); got.Text == "" || strings.Contains(got.Text, "Example:") || !strings.Contains(got.Text, "2 × kete for 3h") {
		t.Errorf("/gpu estimate '2' kete \"3h\" answered %q", got.Text)
	}
	if got := e.ask("UTAMA", `quota request "+1" kete for “2d” because a deadline`); !strings.Contains(got.Text, "+1 kete GPU for team harakeke for 2d") {
		t.Errorf("a quota request with a quoted duration answered %q", got.Text)
	}
	// A quoted word that is no duration is still refused, quoted once.
	if got := e.ask("UTAMA", `extend L-1 "soon"`); !strings.Contains(got.Text, `"soon" is not a duration`) {
		t.Errorf("/gpu extend L-1 \"soon\" answered %q", got.Text)
	}
}

// A number of GPUs too large for any request, however many digits it has, is refused as too
// many, in chat and in the request form, not as something other than a whole number.
func TestAHugeNumberOfGPUsIsRefusedAsTooMany(t *testing.T) {
	e := newTuataraEnv(t)
	huge := "99999999999999999999"
	got := e.ask("UTAMA", "request "+huge+" kete for 2h")
	if strings.Contains(got.Text, "not a whole number") || !strings.Contains(got.Text, "more than any request can hold") || !strings.Contains(got.Text, "Example: `/gpu request") {
		t.Errorf("/gpu request %s kete answered %q", huge, got.Text)
	}
	if got := e.ask("UTAMA", "estimate "+huge+" kete 2h"); strings.Contains(got.Text, "not a whole number") || !strings.Contains(got.Text, "more than any request can hold") {
		t.Errorf("/gpu estimate %s kete 2h answered %q", huge, got.Text)
	}
	code, body := e.interaction(map[string]any{
		"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UTAMA"},
		"view": map[string]any{"id": "VHUGE", "callback_id": "qm.request", "private_metadata": `{"c":"CGENERAL"}`, "state": stateOf("kete", huge, "2h")},
	})
	e.wait()
	if code != 200 || strings.Contains(body, "Write a whole number") || !strings.Contains(body, "more than any request can hold") {
		t.Errorf("the form with %s GPUs answered HTTP %d %s", huge, code, body)
	}
	if n := len(e.leases()); n != 0 {
		t.Errorf("%d leases made", n)
	}
}

// A lease id written with a dash that looks like the hyphen but is another character (an en
// dash, a minus sign or a non-breaking hyphen, as autocorrect, a word processor or a copied
// message put in) is refused saying so, and the example writes the id with the hyphen, where it
// names a lease of the asker's; it is not refused as no lease id while it reads as one.
func TestALeaseIDWithAnotherDashSaysSo(t *testing.T) {
	e := newTuataraEnv(t)
	e.ask("UTAMA", "request 1 kete for 2h")
	for _, tc := range []struct{ ask, example string }{
		{"extend L\u20131 1h", "Example: `/gpu extend L-1 1h`"}, // en dash
		{"status L\u22121", "Example: `/gpu status L-1`"},       // minus sign
		{"release L\u20111", "Example: `/gpu release L-1`"},     // non-breaking hyphen
		{"extend L\u20141 1h", "Example: `/gpu extend L-1 1h`"}, // em dash
	} {
		got := e.ask("UTAMA", tc.ask)
		if !strings.Contains(got.Text, "dash other than the hyphen -") || !strings.HasSuffix(got.Text, tc.example) {
			t.Errorf("/gpu %s answered %q; want the dash named and %q", tc.ask, got.Text, tc.example)
		}
	}
	if l := e.lease("L-1"); l.State != qm.Active || l.Duration != 2*time.Hour {
		t.Errorf("a refused command changed L-1: %s for %s", l.State, l.Duration)
	}
	// Someone else's lease is not named in their example.
	if got := e.ask("UKIRI", "status L\u20131"); !strings.Contains(got.Text, "dash other than the hyphen -") || strings.Contains(got.Text, "Example: `/gpu status L-1`") {
		t.Errorf("kiri's /gpu status L–1 answered %q", got.Text)
	}
}

// /gpu extend of a lease that has ended is refused with the request that asks for it again as it
// was asked, as a Request again button would: its template and parameters, its data class and
// whole nodes where it had them, not a plain request of as many shared GPUs.
func TestExtendingAnEndedLeaseOffersItAgainAsItWasAsked(t *testing.T) {
	e := newTuataraEnv(t)
	for _, tc := range []struct{ ask, again string }{
		{"request 1 waka for 3h exclusive", "/gpu request 8 waka for 3h exclusive"},
		{"request 1 kete for 2h template jupyterlab root=nb", "/gpu request 1 kete for 2h template jupyterlab root=nb"},
		{"request 1 kete for 1h data restricted", "/gpu request 1 kete for 1h data restricted"},
	} {
		got := e.ask("UTAMA", tc.ask)
		ls := e.leases()
		id := ls[len(ls)-1].ID.String()
		if strings.HasPrefix(got.Text, id+" waits for approval") {
			e.ask("UNGAIO", "approve "+id) // whole nodes of waka are more than four GPUs
			got.Text = string(e.lease(id).State)
		}
		if !strings.Contains(got.Text, id+" is active") && got.Text != "active" {
			t.Fatalf("/gpu %s answered %q", tc.ask, got.Text)
		}
		e.ask("UTAMA", "release "+id)
		got = e.ask("UTAMA", "extend "+id+" 1h")
		if !strings.Contains(got.Text, "cannot be extended; ask for a new lease instead") || !strings.HasSuffix(got.Text, "Example: `"+tc.again+"`") {
			t.Errorf("/gpu extend of the released %s (%s) answered %q; want the example %q", id, tc.ask, got.Text, tc.again)
		}
	}
}

// "/gpu" followed by nothing but characters that do not show (a zero-width space, a direction
// mark, a byte order mark, as a paste can bring) is "/gpu" alone, as the command reads it: it
// opens the request form, not the help.
func TestGPUWithOnlyInvisibleCharactersOpensTheForm(t *testing.T) {
	e := newTuataraEnv(t)
	for _, text := range []string{"\u200b", " \u200e\u2060 ", "\ufeff"} {
		trigger := e.command("UTAMA", text)
		e.wait()
		_, _, responses, views := e.slack.snapshot()
		opened := false
		for _, v := range views {
			opened = opened || v.Method == "open" && v.Trigger == trigger
		}
		if !opened {
			t.Errorf("/gpu %q opened no request form", text)
		}
		for _, r := range responses {
			if r.Channel == trigger {
				t.Errorf("/gpu %q was answered %q instead", text, r.Text)
			}
		}
	}
}

// A refusal of a quote left open or never opened is a sentence as every other refusal is: it
// starts with a capital letter.
func TestAStrayQuoteIsRefusedInASentence(t *testing.T) {
	e := newTuataraEnv(t)
	e.ask("UTAMA", "request 1 kete for 1h")
	for ask, want := range map[string]string{
		"request 1 kete for 2h team “harakeke": "The quote before harakeke is not closed",
		"release 'L-1":                         "The quote before L-1 is not closed",
		"request 2” kete":                      "The quote after 2 was never opened",
		`release L-1 "`:                        "A quote stands alone",
	} {
		if got := e.ask("UTAMA", ask); !strings.HasPrefix(got.Text, want) || !strings.Contains(got.Text, "Example: `/gpu ") {
			t.Errorf("/gpu %s answered %q; want it to start %q", ask, got.Text, want)
		}
	}
}

// /gpu extend LEASE for (or by) with no duration after it says a duration must follow, with an
// example extending that lease, not that "" is no duration; so does a quota request's "for".
func TestExtendForWithoutADurationSaysOneMustFollow(t *testing.T) {
	e := newTuataraEnv(t)
	e.ask("UTAMA", "request 1 kete for 1h")
	for _, word := range []string{"for", "by", "For"} {
		got := e.ask("UTAMA", "extend L-1 "+word)
		if strings.Contains(got.Text, `""`) || !strings.Contains(got.Text, `"`+word+`" must be followed by how much longer`) || !strings.HasSuffix(got.Text, "Example: `/gpu extend L-1 2h`") {
			t.Errorf("/gpu extend L-1 %s answered %q", word, got.Text)
		}
	}
	if l := e.lease("L-1"); l.Duration != time.Hour {
		t.Errorf("L-1 lasts %s", l.Duration)
	}
	// So does a quota request's "for" with no duration before "because".
	got := e.ask("UTAMA", "quota request +2 kete for because a deadline")
	if strings.Contains(got.Text, `""`) || !strings.Contains(got.Text, `"for" must be followed by how long`) || !strings.HasSuffix(got.Text, "Example: `/gpu quota request +2 kete because a deadline`") {
		t.Errorf("/gpu quota request +2 kete for because … answered %q", got.Text)
	}
	if n := len(e.leases()); n != 1 {
		t.Errorf("%d leases, want L-1 alone", n)
	}
}

// changeForm sends a change of the request form's GPUs field as user, the form holding class,
// gpus and duration, and returns the estimate the form then shows.
func (e *env) changeForm(user, class, gpus, duration string) string {
	e.t.Helper()
	return e.changeFormState(user, gpus, stateOf(class, gpus, duration))
}

// changeFormState is changeForm with the form's whole state.
func (e *env) changeFormState(user, gpus string, state map[string]any) string {
	e.t.Helper()
	code, _ := e.interaction(map[string]any{
		"type": "block_actions", "trigger_id": e.newTrigger(), "user": map[string]any{"id": user},
		"container": map[string]any{"type": "view", "view_id": "VCHANGE"},
		"view":      map[string]any{"id": "VCHANGE", "callback_id": "qm.request", "private_metadata": `{"c":"CGENERAL"}`, "state": state},
		"actions":   []any{map[string]any{"type": "number_input", "action_id": "qm.form.gpus", "block_id": "qm.form.gpus", "value": gpus}},
	})
	if code != 200 {
		e.t.Fatalf("HTTP %d", code)
	}
	e.wait()
	_, _, _, views := e.slack.snapshot()
	v := views[len(views)-1]
	if v.Method != "update" || v.ViewID != "VCHANGE" {
		e.t.Fatalf("the change updated no form: %+v", v)
	}
	blocks, _ := v.View["blocks"].([]any)
	for _, b := range blocks {
		if m, _ := b.(map[string]any); m["block_id"] == "qm.estimate" {
			return textIn([]map[string]any{m})
		}
	}
	e.t.Fatalf("the form has no estimate: %v", v.View)
	return ""
}

// While the request form holds a number of GPUs it will refuse (0, more than any request holds,
// not a whole number), its estimate says what is wrong with it, in the words the field's refusal
// uses, instead of asking to choose a number of GPUs that was chosen.
func TestTheFormsEstimateSaysWhatIsWrongWithTheGPUs(t *testing.T) {
	e := newTuataraEnv(t)
	for gpus, want := range map[string]string{
		"0":    "The number of GPUs must be at least 1, not 0.",
		"5000": "5000 GPUs is more than any request can hold (at most 4096).",
		"1.5":  "Write a whole number of GPUs, 1 or more.",
	} {
		if got := e.changeForm("UTAMA", "kete", gpus, "2h"); strings.Contains(got, "Choose a class") || !strings.Contains(got, want) {
			t.Errorf("with %s GPUs the form's estimate says %s; want %q", gpus, got, want)
		}
	}
	if got := e.changeForm("UTAMA", "kete", "2", "2h"); !strings.Contains(got, "2 × kete for 2h") {
		t.Errorf("with 2 GPUs the form's estimate says %s", got)
	}
	// A template written with a space is refused beside its field when the form is sent; the
	// estimate, which it does not change, is still shown.
	state := stateOf("kete", "2", "2h")
	state["values"].(map[string]any)["qm.form.template"] = map[string]any{"qm.form.template": map[string]any{"type": "plain_text_input", "value": "jupyter lab"}}
	if got := e.changeFormState("UTAMA", "2", state); !strings.Contains(got, "2 × kete for 2h") {
		t.Errorf("with the template \"jupyter lab\" the form's estimate says %s", got)
	}
}

// Someone whose Slack profile shows no email (a guest) may still read the help and browse the
// templates, which anyone may, even someone Quartermaster does not know; what needs to know who
// they are is refused saying why, with /gpu help, which works for them, as the example.
func TestAGuestWithoutAnEmailReadsTheHelp(t *testing.T) {
	e := newTuataraEnv(t)
	e.slack.mu.Lock()
	e.slack.users["UGUEST"] = ""
	e.slack.mu.Unlock()
	if got := e.ask("UGUEST", "help"); !strings.HasPrefix(got.Text, "Quartermaster gets you GPUs without a ticket") {
		t.Errorf("/gpu help for a guest answered %q", got.Text)
	}
	if got := e.ask("UGUEST", "help request"); !strings.Contains(got.Text, "/gpu request") || got.Text == "" || strings.Contains(got.Text, "shows none") {
		t.Errorf("/gpu help request for a guest answered %q", got.Text)
	}
	if got := e.ask("UGUEST", "templates"); strings.Contains(got.Text, "shows none") || !strings.Contains(got.Text, "jupyterlab") {
		t.Errorf("/gpu templates for a guest answered %q", got.Text)
	}
	for _, ask := range []string{"request 1 kete for 1h", "approvals", "catalog"} {
		got := e.ask("UGUEST", ask)
		if !strings.Contains(got.Text, "yours shows none") || !strings.HasSuffix(got.Text, "Example: `/gpu help`") {
			t.Errorf("/gpu %s for a guest answered %q", ask, got.Text)
		}
	}
	if n := len(e.leases()); n != 0 {
		t.Errorf("%d leases made for a guest", n)
	}
}

// An Extend button pressed again after the lease it extended has ended does not answer that the
// lease "now runs until" its old end and may be extended by typing: it says the lease has ended
// and cannot be extended, with the request that asks for it again, for the length first asked
// (2h, not the 3h it ran to), as the example.
func TestExtendPressedAgainAfterTheLeaseEndedSaysItEnded(t *testing.T) {
	e := newTuataraEnv(t)
	grant := e.ask("UTAMA", "request 1 kete for 2h template jupyterlab")
	extend := findButton(t, grant.Blocks, "/gpu extend L-1 1h")
	if got := e.press("UTAMA", grant, extend); !strings.HasPrefix(got.Text, "L-1 now runs until") {
		t.Fatalf("Extend answered %q", got.Text)
	}
	e.ask("UTAMA", "release L-1")
	got := e.press("UTAMA", grant, extend)
	if strings.Contains(got.Text, "now runs") || strings.Contains(got.Text, "extend it once more") ||
		!strings.Contains(got.Text, "L-1 is released and cannot be extended") || !strings.HasSuffix(got.Text, "Example: `/gpu request 1 kete for 2h template jupyterlab`") {
		t.Errorf("Extend pressed again after L-1 was released answered %q", got.Text)
	}
}

// An Extend button that sent an extension to the budget owners, pressed again once they have
// decided it, says what became of it, not that they will decide.
func TestExtendPressedAgainAfterTheDecisionSaysWhatBecameOfIt(t *testing.T) {
	e := newTuataraEnv(t)
	for _, tc := range []struct{ decide, want string }{
		{"approve LEASE", "which ngaio@tuatara.example.nz approved"},
		{"deny LEASE not today", "which ngaio@tuatara.example.nz denied"},
	} {
		grant := e.ask("UTAMA", "request 1 kete for 10h") // kete's longest without approval
		id, _, _ := strings.Cut(grant.Text, " ")
		extend := findButton(t, grant.Blocks, "/gpu extend "+id+" 1h")
		first := e.press("UTAMA", grant, extend)
		_, after, ok := strings.Cut(first.Text, "waits for approval as ")
		if !ok {
			t.Fatalf("Extend of %s answered %q", id, first.Text)
		}
		ext, _, _ := strings.Cut(after, ":")
		decided := e.ask("UNGAIO", strings.Replace(tc.decide, "LEASE", ext, 1))
		if decided.Text == "" || strings.Contains(decided.Text, "Example:") {
			t.Fatalf("/gpu %s answered %q", tc.decide, decided.Text)
		}
		got := e.press("UTAMA", grant, extend)
		if strings.Contains(got.Text, "will decide") || !strings.Contains(got.Text, tc.want) || !strings.Contains(got.Text, "/gpu status "+ext) {
			t.Errorf("Extend pressed again after %s of %s answered %q; want %q", tc.decide, ext, got.Text, tc.want)
		}
	}
}

// The Deny form asks for a reason: one of nothing but characters that do not show (zero-width
// spaces, direction marks) is no reason, and is refused beside the field as an empty one is,
// rather than denying the request with "no reason given".
func TestTheDenyFormRefusesAnInvisibleReason(t *testing.T) {
	e := newTuataraEnv(t)
	e.ask("UTAMA", "request 6 waka for 3h")
	for i, reason := range []string{"   ", "\u200b\u202e\u2060", "\u200e \ufeff\n"} {
		code, body := e.interaction(map[string]any{
			"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UNGAIO"},
			"view": map[string]any{"id": fmt.Sprintf("VDENY%d", i), "callback_id": "qm.deny", "private_metadata": `{"l":"L-1"}`,
				"state": map[string]any{"values": map[string]any{"qm.deny.reason": map[string]any{"qm.deny.reason": map[string]any{"type": "plain_text_input", "value": reason}}}}},
		})
		e.wait()
		if code != 200 || !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, "Say why") {
			t.Errorf("the reason %q answered HTTP %d %s", reason, code, body)
		}
	}
	if s := e.lease("L-1").State; s != qm.PendingApproval {
		t.Errorf("L-1 is %s after reasons that say nothing", s)
	}
}

// An optional field of the request form holding nothing that shows (a pasted zero-width space or
// direction mark) is left out, as an empty one is: the request goes through as the rest of the
// form asks, and no field is read as the next one's word ("There is no team \"data\"").
func TestAFormFieldOfNothingThatShowsIsLeftOut(t *testing.T) {
	e := newTuataraEnv(t)
	state := stateOf("kete", "1", "2h")
	values := state["values"].(map[string]any)
	text := func(v string) map[string]any { return map[string]any{"type": "plain_text_input", "value": v} }
	values["qm.form.template"] = map[string]any{"qm.form.template": text("\u200b")}
	values["qm.form.team"] = map[string]any{"qm.form.team": text(" \u200e")}
	values["qm.form.data"] = map[string]any{"qm.form.data": text("\u2060\ufeff")}
	code, body := e.interaction(map[string]any{
		"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UTAMA"},
		"view": map[string]any{"id": "VINVISIBLE", "callback_id": "qm.request", "private_metadata": `{"c":"CGENERAL"}`, "state": state},
	})
	e.wait()
	if code != 200 || body != "" {
		t.Fatalf("the form answered HTTP %d %s", code, body)
	}
	dms := e.postsTo(dm("UTAMA"))
	if len(dms) != 1 || !strings.HasPrefix(dms[0].Text, "L-1 is active: 1 × kete") {
		t.Fatalf("the form's request was answered %+v", dms)
	}
}

// A number of GPUs written with a minus sign that is not the hyphen-minus (−2, as a phone or a
// copied text writes it) is refused as the negative number it reads as, as -2 is, not as a
// class name.
func TestANegativeGPUCountWithAnotherMinusIsRefusedAsNegative(t *testing.T) {
	e := newTuataraEnv(t)
	for _, ask := range []string{"request \u22122 kete", "request \uff0d2 kete for 1h", "estimate \u22122 kete 1h"} {
		got := e.ask("UTAMA", ask)
		if strings.Contains(got.Text, "class name") || !strings.Contains(got.Text, "must be at least 1, not") || !strings.Contains(got.Text, "Example: `/gpu ") {
			t.Errorf("/gpu %s answered %q", ask, got.Text)
		}
	}
	if n := len(e.leases()); n != 0 {
		t.Errorf("%d leases made", n)
	}
	// So is a duration written with a dash for its minus (–1h), as −1h is.
	e.ask("UTAMA", "request 1 kete for 1h")
	for _, ask := range []string{"extend L-1 \u20131h", "extend L-1 \u22121h"} {
		got := e.ask("UTAMA", ask)
		if !strings.Contains(got.Text, "is negative, but a duration cannot be negative; write it like 1h.") || !strings.HasSuffix(got.Text, "Example: `/gpu extend L-1 1h`") {
			t.Errorf("/gpu %s answered %q", ask, got.Text)
		}
	}
}
