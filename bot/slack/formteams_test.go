package slack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// saltmarsh is a policy of n teams reed-00, reed-01, …, each of its own directory group
// (g-reed-00, …); reed-07 is cleared for sediment data, reed-31 (where there is one) for
// sonar-logs and public, the rest for public data alone. directory lists its people.
func saltmarsh(t *testing.T, n int, directory string) *policy.Policy {
	t.Helper()
	var b strings.Builder
	b.WriteString("organization: Saltmarsh Survey\ncurrency: EUR\ntimezone: Europe/Amsterdam\n")
	b.WriteString("classes:\n  - {name: tide, sku: L4, price_per_gpu_hour: 0.8, max_gpus: 4, max_duration: 8h, isolation: shared}\n")
	b.WriteString("default_quota: {gpus: {tide: 1}, gpu_hours_per_week: 10}\nteams:\n")
	for i := range n {
		data := ""
		switch i {
		case 7:
			data = ", data_classes: [sediment]"
		case 31:
			data = ", data_classes: [sonar-logs, public]"
		}
		fmt.Fprintf(&b, "  - {name: reed-%02d, idp_groups: [g-reed-%02d], quota: {gpus: {tide: 4}, gpu_hours_per_week: 100}%s}\n", i, i, data)
	}
	b.WriteString("backend: sim\ndirectory:\n" + directory)
	b.WriteString("sim:\n  nodes:\n    - {name: l4, count: 2, class: tide, gpus: 4}\n")
	p, err := policy.Load([]byte(b.String()), "saltmarsh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newSaltmarshEnv is the product on p with the request form as serve makes it: the teams and
// data classes it offers are the person's (Bot.FormTeams, Bot.FormDataClasses), read as it opens.
func newSaltmarshEnv(t *testing.T, p *policy.Policy) *env {
	t.Helper()
	e := newEnvOn(t, storetest.SQLite(t), p, nil)
	e.useHTTPAdapter(e.bot, func(c *slackbot.Config) {
		c.Choices = slackbot.Choices{Classes: []slackbot.Choice{{Value: "tide"}}}
		c.FormClass, c.FormTeams, c.FormDataClasses = e.bot.DefaultClass, e.bot.FormTeams, e.bot.FormDataClasses
	})
	e.slack.setUsers(map[string]string{
		"UHERON": "heron@saltmarsh.example",
		"UEGRET": "egret@saltmarsh.example",
		"UWREN":  "wren@saltmarsh.example",
		"USTRAY": "stray@elsewhere.example",
	})
	return e
}

// formField is a request form's field: its element's type, its options' values and its initial
// option's value.
type formField struct {
	Type    string
	Options []string
	Initial string
}

func fieldOf(t *testing.T, v map[string]any, action string) formField {
	t.Helper()
	blocks, _ := v["blocks"].([]any)
	for _, b := range blocks {
		el, _ := b.(map[string]any)["element"].(map[string]any)
		if el["action_id"] != action {
			continue
		}
		var f formField
		f.Type, _ = el["type"].(string)
		opts, _ := el["options"].([]any)
		for _, o := range opts {
			f.Options = append(f.Options, o.(map[string]any)["value"].(string))
		}
		if o, ok := el["initial_option"].(map[string]any); ok {
			f.Initial, _ = o["value"].(string)
		}
		return f
	}
	return formField{}
}

// openForm opens the request form as user and returns it.
func (e *env) openForm(user string) map[string]any {
	e.t.Helper()
	e.command(user, "")
	e.wait()
	return e.lastOpened()
}

// The request form's team menu offers the teams the person may charge, and no other: heron, in
// two of forty teams, is offered those two, their first team chosen (a request naming none is
// charged to it); egret, in one, is offered it, chosen; someone the directory does not know is
// offered none of the policy's teams. The data class is a menu of the policy's data classes, the
// person's teams' first, none chosen (the default follows the team).
func TestRequestFormOffersThePersonsOwnTeams(t *testing.T) {
	p := saltmarsh(t, 40, "  - {user: heron@saltmarsh.example, groups: [g-reed-31, g-reed-07]}\n  - {user: egret@saltmarsh.example, groups: [g-reed-12]}\n")
	e := newSaltmarshEnv(t, p)

	heron := e.openForm("UHERON")
	if f := fieldOf(t, heron, "qm.form.team"); f.Type != "static_select" || strings.Join(f.Options, " ") != "reed-07 reed-31" || f.Initial != "reed-07" {
		t.Errorf("heron's team field: %+v; want a menu of reed-07 and reed-31, reed-07 chosen", f)
	}
	if f := fieldOf(t, heron, "qm.form.data"); f.Type != "static_select" || strings.Join(f.Options, " ") != "sediment sonar-logs public" || f.Initial != "" {
		t.Errorf("heron's data class field: %+v; want a menu of sediment, sonar-logs, public, none chosen", f)
	}
	egret := e.openForm("UEGRET")
	if f := fieldOf(t, egret, "qm.form.team"); f.Type != "static_select" || strings.Join(f.Options, " ") != "reed-12" || f.Initial != "reed-12" {
		t.Errorf("egret's team field: %+v; want reed-12 alone, chosen", f)
	}
	if f := fieldOf(t, egret, "qm.form.data"); strings.Join(f.Options, " ") != "public sediment sonar-logs" {
		t.Errorf("egret's data class field: %+v; want public (reed-12's) first", f)
	}
	if form := textIn([]map[string]any{egret}); !strings.Contains(form, "public — your team's") || strings.Contains(form, "sediment — your team's") {
		t.Errorf("egret's data classes are not marked as their team's or not: %s", form)
	}
	stray := e.openForm("USTRAY")
	if form := textIn([]map[string]any{stray}); strings.Contains(form, "reed-") || strings.Contains(form, "sediment") {
		t.Errorf("someone the directory does not know is offered the policy's names: %s", form)
	}
	if f := fieldOf(t, stray, "qm.form.team"); f.Type != "plain_text_input" {
		t.Errorf("stray's team field: %+v; want free text", f)
	}

	// A changed directory shows in the next form at once: heron moved to reed-20.
	p2 := saltmarsh(t, 40, "  - {user: heron@saltmarsh.example, groups: [g-reed-20]}\n")
	e.svc.Policy, e.svc.Directory = p2, directory{p2}
	if f := fieldOf(t, e.openForm("UHERON"), "qm.form.team"); strings.Join(f.Options, " ") != "reed-20" || f.Initial != "reed-20" {
		t.Errorf("after the change heron's team field is %+v; want reed-20", f)
	}
}

// A form sent with the second of the person's teams and a data class from the menu charges that
// team, with that data class.
func TestRequestFormChargesTheTeamChosen(t *testing.T) {
	p := saltmarsh(t, 40, "  - {user: heron@saltmarsh.example, groups: [g-reed-07, g-reed-31]}\n")
	e := newSaltmarshEnv(t, p)
	e.openForm("UHERON")
	sel := func(v string) map[string]any {
		return map[string]any{"type": "static_select", "selected_option": map[string]any{"value": v}}
	}
	state := map[string]any{"values": map[string]any{
		"qm.form.class":    map[string]any{"qm.form.class": sel("tide")},
		"qm.form.gpus":     map[string]any{"qm.form.gpus": map[string]any{"type": "number_input", "value": "1"}},
		"qm.form.duration": map[string]any{"qm.form.duration": sel("2h")},
		"qm.form.team":     map[string]any{"qm.form.team": sel("reed-31")},
		"qm.form.data":     map[string]any{"qm.form.data": sel("sonar-logs")},
	}}
	// A change (the number of GPUs) brings the estimate and keeps the menus as they were, on the
	// team chosen.
	code, _ := e.interaction(map[string]any{
		"type": "block_actions", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UHERON"},
		"container": map[string]any{"type": "view", "view_id": "VSALT"},
		"view":      map[string]any{"id": "VSALT", "callback_id": "qm.request", "state": state},
		"actions":   []any{map[string]any{"type": "number_input", "action_id": "qm.form.gpus", "block_id": "qm.form.gpus", "value": "1"}},
	})
	if code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	_, _, _, views := e.slack.snapshot()
	updated := views[len(views)-1]
	if f := fieldOf(t, updated.View, "qm.form.team"); updated.Method != "update" || strings.Join(f.Options, " ") != "reed-07 reed-31" || f.Initial != "reed-31" {
		t.Errorf("after a change the team field is %+v (%s); want reed-07 and reed-31, reed-31 chosen", f, updated.Method)
	}
	if f := fieldOf(t, updated.View, "qm.form.data"); f.Initial != "sonar-logs" {
		t.Errorf("after a change the data class field is %+v; want sonar-logs chosen", f)
	}
	code, body := e.interaction(map[string]any{"type": "view_submission", "user": map[string]any{"id": "UHERON"}, "team": map[string]any{"id": "T1"},
		"view": map[string]any{"id": "VSALT", "callback_id": "qm.request", "state": state}})
	if code != http.StatusOK || strings.Contains(body, "errors") {
		t.Fatalf("HTTP %d: %s", code, body)
	}
	e.wait()
	if leases := e.leases(); len(leases) != 1 || leases[0].Team != "reed-31" || leases[0].DataClass != "sonar-logs" {
		b, _ := json.Marshal(leases)
		t.Errorf("the form's request made %s; want one lease of reed-31 with sonar-logs", b)
	}
}

// Someone who may charge more than 100 teams may still pick any of them: the menu loads their
// teams as they type (Slack takes 100 options in a menu), and offers nobody else's.
func TestRequestFormOffersEveryTeamPast100(t *testing.T) {
	groups := make([]string, 150)
	for i := range groups {
		groups[i] = fmt.Sprintf("g-reed-%02d", i)
	}
	p := saltmarsh(t, 160, "  - {user: wren@saltmarsh.example, groups: ["+strings.Join(groups, ", ")+"]}\n  - {user: heron@saltmarsh.example, groups: [g-reed-07, g-reed-140]}\n")
	e := newSaltmarshEnv(t, p)
	form := e.openForm("UWREN")
	if f := fieldOf(t, form, "qm.form.team"); f.Type != "external_select" || f.Initial != "reed-00" {
		t.Fatalf("150 teams: the team field is %+v; want a menu loaded as typed, reed-00 chosen", f)
	}
	suggest := func(user, typed string) string {
		t.Helper()
		code, body := e.interaction(map[string]any{"type": "block_suggestion", "user": map[string]any{"id": user},
			"action_id": "qm.form.team", "block_id": "qm.form.team", "value": typed,
			"view": map[string]any{"id": "V1", "callback_id": "qm.request"}})
		if code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
		return body
	}
	body := suggest("UWREN", "14")
	for _, want := range []string{"reed-14", "reed-140", "reed-149"} {
		if !strings.Contains(body, want) {
			t.Errorf("typing 14 does not offer %s: %s", want, body)
		}
	}
	for _, not := range []string{"reed-15", "reed-154"} { // not one of wren's, or not typed
		if strings.Contains(body, `"`+not+`"`) {
			t.Errorf("typing 14 offers %s: %s", not, body)
		}
	}
	// Another person typing in a form loaded so is offered only their own.
	if body := suggest("UHERON", "14"); !strings.Contains(body, "reed-140") || strings.Contains(body, "reed-14\"") || strings.Contains(body, "reed-141") {
		t.Errorf("heron typing 14 is offered %s; want reed-140 alone", body)
	}
}
