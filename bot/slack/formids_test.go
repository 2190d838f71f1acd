package slack_test

import (
	"fmt"
	"strings"
	"testing"
)

// The request form echoes what was typed in it as typed: a user or channel id (<@UNGAIO>,
// <#CHARAKEKECOMPUTE>) in a field of free text keeps its capital letters, in the refusal DMed
// after the form is sent and in the form itself as its estimate is updated, rather than coming
// back as <@ungaio>, an id of no one. A team and a data class typed in capitals still name them.
func TestTheRequestFormEchoesIDsAsTyped(t *testing.T) {
	e := newTuataraEnv(t)
	text := func(v string) map[string]any { return map[string]any{"type": "plain_text_input", "value": v} }
	n := 0
	for _, field := range []string{"qm.form.team", "qm.form.data", "qm.form.template"} {
		for _, typed := range []string{"<@UNGAIO>", "<#CHARAKEKECOMPUTE>"} {
			state := stateOf("kete", "1", "2h")
			state["values"].(map[string]any)[field] = map[string]any{field: text(typed)}
			if field != "qm.form.team" { // a menu here: its choices are the policy's teams
				e.changeFormState("UTAMA", "1", state)
				_, _, _, views := e.slack.snapshot()
				if got := initialOf(views[len(views)-1].View, field); got != typed {
					t.Errorf("the updated form shows %s %q as %q", field, typed, got)
				}
			}
			n++
			code, body := e.interaction(map[string]any{
				"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UTAMA"},
				"view": map[string]any{"id": fmt.Sprintf("VID%d", n), "callback_id": "qm.request", "private_metadata": `{"c":"CGENERAL"}`, "state": state},
			})
			e.wait()
			if code != 200 || body != "" {
				t.Fatalf("the form answered HTTP %d %s", code, body)
			}
			dms := e.postsTo(dm("UTAMA"))
			got := dms[len(dms)-1].Text
			escaped := strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(typed)
			if !strings.Contains(got, `"`+escaped+`"`) || strings.Contains(got, strings.ToLower(escaped)) || !strings.Contains(got, "Example: `/gpu ") {
				t.Errorf("the form with %s %s was answered %q; want it named as typed", field, typed, got)
			}
		}
	}
	if n := len(e.leases()); n != 0 {
		t.Fatalf("%d leases made", n)
	}
	state := stateOf("kete", "1", "2h")
	state["values"].(map[string]any)["qm.form.team"] = map[string]any{"qm.form.team": text("HARAKEKE")}
	state["values"].(map[string]any)["qm.form.data"] = map[string]any{"qm.form.data": text("Restricted")}
	state["values"].(map[string]any)["qm.form.template"] = map[string]any{"qm.form.template": text("JupyterLab")}
	code, body := e.interaction(map[string]any{
		"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UTAMA"},
		"view": map[string]any{"id": "VCAPS", "callback_id": "qm.request", "private_metadata": `{"c":"CGENERAL"}`, "state": state},
	})
	e.wait()
	if ls := e.leases(); code != 200 || body != "" || len(ls) != 1 || ls[0].Team != "harakeke" || ls[0].DataClass != "restricted" || ls[0].Template != "jupyterlab" {
		dms := e.postsTo(dm("UTAMA"))
		t.Fatalf("the form with team HARAKEKE, data Restricted, template JupyterLab: HTTP %d %s, leases %+v, answered %q", code, body, ls, dms[len(dms)-1].Text)
	}
}
