package slack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// The request form's team and data class (and template) compare as typed ones do: A to Z case aside,
// no other letter folded. A team typed in the form as "V\u0130SION" (a dotted capital İ) or a data
// class as "\u0130nternal" names no team or data class and makes no lease; "VISION" and
// "INTERNAL" do.
func TestTheRequestFormFoldsOnlyAToZ(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	submit := func(view, team, template, data string) {
		t.Helper()
		in := func(v string) map[string]any { return map[string]any{"type": "plain_text_input", "value": v} }
		values := map[string]any{
			"qm.form.class":    map[string]any{"qm.form.class": map[string]any{"type": "static_select", "selected_option": map[string]any{"value": "interactive"}}},
			"qm.form.gpus":     map[string]any{"qm.form.gpus": in("1")},
			"qm.form.duration": map[string]any{"qm.form.duration": map[string]any{"type": "static_select", "selected_option": map[string]any{"value": "1h"}}},
			"qm.form.team":     map[string]any{"qm.form.team": in(team)},
			"qm.form.template": map[string]any{"qm.form.template": in(template)},
			"qm.form.data":     map[string]any{"qm.form.data": in(data)},
		}
		code, body := e.interaction(map[string]any{
			"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UALICE"},
			"view": map[string]any{"id": view, "callback_id": "qm.request", "private_metadata": "{}", "state": map[string]any{"values": values}},
		})
		if code != http.StatusOK || strings.Contains(body, `"errors"`) {
			t.Fatalf("%s: HTTP %d %s", view, code, body)
		}
		e.wait()
	}
	for i, f := range [][3]string{{"V\u0130SION", "", ""}, {"", "", "\u0130nternal"}, {"", "", "publi\u212a"}} {
		submit("VLOOK"+string(rune('A'+i)), f[0], f[1], f[2])
		if n := len(e.leases()); n != 0 {
			t.Fatalf("the form with team %q, template %q, data class %q made %d lease(s)", f[0], f[1], f[2], n)
		}
	}
	submit("VPLAIN", "VISION", "", "INTERNAL")
	if ls := e.leases(); len(ls) != 1 || ls[0].Team != "vision" || ls[0].DataClass != "internal" {
		t.Fatalf("VISION and INTERNAL: %+v", ls)
	}
}

// A one-word field of the request form holding any white space (a no-break space, an
// ideographic space) is refused in the form itself, as one with an ordinary space is: its words
// never reach the command as more of it ("vision<NBSP>data<NBSP>secret" is not team vision and
// data class secret).
func TestTheRequestFormRefusesAnyWhiteSpaceInOneWordFields(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	in := func(v string) map[string]any { return map[string]any{"type": "plain_text_input", "value": v} }
	for i, field := range []string{"qm.form.team", "qm.form.template", "qm.form.data", "qm.form.class"} {
		for j, v := range []string{"vision\u00a0data\u00a0internal", "vision\u3000data\u3000internal", "a\u2003b"} {
			values := map[string]any{
				"qm.form.class":    map[string]any{"qm.form.class": in("interactive")},
				"qm.form.gpus":     map[string]any{"qm.form.gpus": in("1")},
				"qm.form.duration": map[string]any{"qm.form.duration": in("1h")},
			}
			values[field] = map[string]any{field: in(v)}
			code, body := e.interaction(map[string]any{
				"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UALICE"},
				"view": map[string]any{"id": "VSPACE" + string(rune('A'+i)) + string(rune('a'+j)), "callback_id": "qm.request", "private_metadata": "{}",
					"state": map[string]any{"values": values}},
			})
			if code != http.StatusOK || !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, field) {
				t.Errorf("%s = %q: HTTP %d %s; want the form to refuse that field", field, v, code, body)
			}
		}
	}
	e.wait()
	if n := len(e.leases()); n != 0 {
		t.Fatalf("%d lease(s) made", n)
	}
}
