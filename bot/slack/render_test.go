package slack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// checkLimits fails the test where blocks break a Block Kit limit.
func checkLimits(t *testing.T, name string, blocks []slack.Block, maxBlocks int) []map[string]any {
	t.Helper()
	raw, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	var bs []map[string]any
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatal(err)
	}
	if len(bs) > maxBlocks {
		t.Errorf("%s: %d blocks, at most %d", name, len(bs), maxBlocks)
	}
	runes := func(v any) int {
		m, _ := v.(map[string]any)
		s, _ := m["text"].(string)
		return utf8.RuneCountInString(s)
	}
	blockIDs := map[string]bool{}
	for i, b := range bs {
		if id, ok := b["block_id"].(string); ok {
			if blockIDs[id] {
				t.Errorf("%s: block id %q twice", name, id)
			}
			blockIDs[id] = true
		}
		switch b["type"] {
		case "section":
			if n := runes(b["text"]); n > slackbot.MaxSectionText {
				t.Errorf("%s: block %d: section text of %d characters", name, i, n)
			}
			fields, _ := b["fields"].([]any)
			if len(fields) > slackbot.MaxSectionFields {
				t.Errorf("%s: block %d: %d fields", name, i, len(fields))
			}
			for _, f := range fields {
				if n := runes(f); n > slackbot.MaxFieldText {
					t.Errorf("%s: block %d: field of %d characters", name, i, n)
				}
			}
			if b["text"] == nil && len(fields) == 0 {
				t.Errorf("%s: block %d: an empty section", name, i)
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) > slackbot.MaxActionButtons || len(els) == 0 {
				t.Errorf("%s: block %d: %d elements", name, i, len(els))
			}
			ids := map[string]bool{}
			for _, e := range els {
				m := e.(map[string]any)
				id, _ := m["action_id"].(string)
				if len(id) > slackbot.MaxActionID || ids[id] {
					t.Errorf("%s: block %d: action id %q too long or repeated", name, i, id)
				}
				ids[id] = true
				if v, _ := m["value"].(string); len(v) > slackbot.MaxButtonValue {
					t.Errorf("%s: block %d: button value of %d bytes", name, i, len(v))
				}
				if n := runes(m["text"]); n > slackbot.MaxButtonLabel {
					t.Errorf("%s: block %d: button label of %d characters", name, i, n)
				}
			}
		}
	}
	return bs
}

// leaseList is a /gpu list reply of n leases, shaped as the handler shapes it.
func leaseList(n int) bot.Reply {
	r := bot.Reply{Text: fmt.Sprintf("Your leases (%d, ended ones from the last day included):", n)}
	for i := 1; i <= n; i++ {
		r.Sections = append(r.Sections, bot.Section{Title: fmt.Sprintf("L-%d", i), Fields: []bot.Field{
			{Label: "State", Value: "active"}, {Label: "GPUs", Value: "1 × interactive"}, {Label: "Team", Value: "vision"},
			{Label: "Node", Value: "l40s-01"}, {Label: "Time left", Value: "1h 59m"}, {Label: "Utilization", Value: "60%"}, {Label: "Cost so far", Value: "$0.02"},
		}})
	}
	return r
}

// TestRenderLimits: the largest replies (the catalog, a list of 100 leases, the /gpu policy text,
// a queue of 100 approvals with 200 buttons, a text of 20,000 characters) fit Slack's limits,
// and what is left out is said.
func TestRenderLimits(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ctx := context.Background()
	ask := func(text string) bot.Reply {
		rs := e.bot.Handle(ctx, bot.Request{User: "alice@acme.example", Text: text})
		if len(rs) == 0 || rs[0].Error {
			t.Fatalf("%s: %+v", text, rs)
		}
		return rs[0]
	}
	approvals := bot.Reply{Text: "100 request(s) wait for your decision:"}
	for _, s := range leaseList(100).Sections {
		approvals.Sections = append(approvals.Sections, s)
		approvals.Actions = append(approvals.Actions, bot.Action{Label: "Approve " + s.Title, Command: "/gpu approve " + s.Title, Style: "primary"},
			bot.Action{Label: "Deny " + s.Title, Command: "/gpu deny " + s.Title, Style: "danger"})
	}
	long := strings.Repeat("The published rules say <this> & that, in words. ", 400) // 20,000 characters
	policy := ask("policy")
	policy.Sections = append(policy.Sections, bot.Section{Title: "Everything", Text: long})
	cases := map[string]bot.Reply{
		"catalog":   ask("catalog"),
		"help":      ask("help"),
		"policy":    policy,
		"list":      leaseList(100),
		"approvals": approvals,
		"long text": {Text: long, Actions: []bot.Action{{Label: strings.Repeat("a very long label ", 10), Command: "/gpu list"}, {Label: "too long", Command: "/gpu " + strings.Repeat("x", 3000)}}},
		"fields":    {Text: "many fields", Sections: []bot.Section{{Title: "T", Fields: make([]bot.Field, 25)}}},
	}
	for i := range cases["fields"].Sections[0].Fields {
		cases["fields"].Sections[0].Fields[i] = bot.Field{Label: fmt.Sprint(i), Value: strings.Repeat("v", 2500)}
	}
	for name, r := range cases {
		for _, max := range []int{slackbot.MaxMessageBlocks, slackbot.MaxViewBlocks} {
			text, blocks := slackbot.Render(r, max)
			if text == "" || utf8.RuneCountInString(text) > 3000 {
				t.Errorf("%s: fallback text of %d characters", name, utf8.RuneCountInString(text))
			}
			checkLimits(t, name, blocks, max)
		}
	}

	// What a shortened list says, and what it keeps.
	_, blocks := slackbot.Render(leaseList(100), slackbot.MaxMessageBlocks)
	bs := checkLimits(t, "list", blocks, slackbot.MaxMessageBlocks)
	all := textIn(bs)
	if strings.Contains(all, "not shown") || !strings.Contains(all, "*L-1*") || !strings.Contains(all, "*L-100*") {
		t.Errorf("the long list leaves leases out: %s", all[len(all)-400:])
	}
	_, blocks = slackbot.Render(approvals, slackbot.MaxMessageBlocks)
	bs = checkLimits(t, "approvals", blocks, slackbot.MaxMessageBlocks)
	if n := len(buttonsIn(bs)); n != 50 {
		t.Errorf("%d buttons kept, want 50", n)
	}
	if all := textIn(bs); !strings.Contains(all, "150 more buttons left out") {
		t.Errorf("the shortened approvals do not say what was left out")
	}
	// Long text is split, not cut, and escaped.
	_, blocks = slackbot.Render(bot.Reply{Text: long}, slackbot.MaxMessageBlocks)
	bs = checkLimits(t, "long text", blocks, slackbot.MaxMessageBlocks)
	var joined strings.Builder
	for _, b := range bs {
		joined.WriteString(b["text"].(map[string]any)["text"].(string) + " ")
	}
	if got := strings.Count(joined.String(), "&lt;this&gt; &amp; that"); got != 400 {
		t.Errorf("the split text has %d of 400 sentences", got)
	}
	// A button whose command does not fit a value is left out; a long label is shortened.
	_, blocks = slackbot.Render(cases["long text"], slackbot.MaxMessageBlocks)
	if bts := buttonsIn(checkLimits(t, "long text", blocks, slackbot.MaxMessageBlocks)); len(bts) != 1 || bts[0].Value != "/gpu list" || !strings.HasSuffix(bts[0].Label, "…") {
		t.Errorf("buttons = %+v", bts)
	}
}

// TestRenderManyClasses: a policy of 150 classes with long names and descriptions gets a catalog
// reply that names every class within one message, and a list of 1000 leases says how many it left
// out and how to see them.
func TestRenderManyClasses(t *testing.T) {
	r := bot.Reply{Text: "Acme Forschung GmbH GPU catalog (150 classes):"}
	for i := 1; i <= 150; i++ {
		r.Sections = append(r.Sections, bot.Section{
			Title: fmt.Sprintf("h100-nvl-94gb-sxm5-class-number-%03d — %s", i, strings.Repeat("Very long description <beta> & more ", 3)),
			Fields: []bot.Field{{Label: "GPU", Value: "NVIDIA H100 NVL 94 GB"}, {Label: "Price", Value: "1.234,50 € per GPU-hour"},
				{Label: "Without approval", Value: "up to 8 GPU(s) for up to 3d"}, {Label: "Free now", Value: "16 of 64"}, {Label: "Predicted wait", Value: "about 2h (90%: under 6h)"}},
		})
	}
	r.Actions = []bot.Action{{Label: "Request 1 h100-nvl-94gb-sxm5-class-number-001", Command: "/gpu request 1 h100-nvl-94gb-sxm5-class-number-001 for 2h", Style: "primary"}}
	_, blocks := slackbot.Render(r, slackbot.MaxMessageBlocks)
	all := textIn(checkLimits(t, "catalog", blocks, slackbot.MaxMessageBlocks))
	for i := 1; i <= 150; i++ {
		if !strings.Contains(all, fmt.Sprintf("class-number-%03d", i)) {
			t.Errorf("class %d is not in the catalog", i)
		}
	}
	if strings.Contains(all, `\u003cbeta`) || !strings.Contains(all, `\u0026lt;beta\u0026gt; \u0026amp; more`) {
		t.Error("the packed catalog is not escaped")
	}
	if len(buttonsIn(checkLimits(t, "catalog", blocks, slackbot.MaxMessageBlocks))) != 1 {
		t.Error("the catalog lost its button")
	}

	_, blocks = slackbot.Render(leaseList(1000), slackbot.MaxMessageBlocks)
	all = textIn(checkLimits(t, "list", blocks, slackbot.MaxMessageBlocks))
	if !strings.Contains(all, "*L-1*") || !strings.Contains(all, "more not shown here; /gpu status LEASE shows any one of them.") {
		t.Errorf("the shortened list: %s", all[len(all)-300:])
	}
}

// TestRenderShortenedLongSections: a shortened reply whose sections are each longer than one
// block (the /gpu policy of 120 classes and 150 teams, each team's line naming every class's
// quota) shows each section across as many blocks as it needs instead of cutting it at 3000
// characters, and says where it stopped.
func TestRenderShortenedLongSections(t *testing.T) {
	name := func(kind string, i int) string { return fmt.Sprintf("%s-%03d-%s", kind, i, strings.Repeat("n", 31)) }
	var classes, teams []string
	for i := 1; i <= 120; i++ {
		classes = append(classes, fmt.Sprintf("%s: H100-SXM5, 3,50 €/GPU-hour, up to 8 GPU(s) for 30d without approval", name("class", i)))
	}
	for i := 1; i <= 150; i++ {
		var q []string
		for j := 1; j <= 120; j++ {
			q = append(q, "4 "+name("class", j))
		}
		teams = append(teams, fmt.Sprintf("%s: %s GPUs at once; budget owners owner@x.example", name("team", i), strings.Join(q, ", ")))
	}
	r := bot.Reply{Text: "The published rules of Probe Org.", Sections: []bot.Section{
		{Title: "Classes", Text: strings.Join(classes, "\n")},
		{Title: "Exceptions (a budget owner decides)", Text: "none"},
		{Title: "Quotas", Text: strings.Join(teams, "\n")},
		{Title: "Approvals", Text: "undecided after 1d → denied"},
	}}
	_, blocks := slackbot.Render(r, slackbot.MaxMessageBlocks)
	all := textIn(checkLimits(t, "policy", blocks, slackbot.MaxMessageBlocks))
	for i := 1; i <= 120; i++ {
		if !strings.Contains(all, name("class", i)+": H100") {
			t.Fatalf("class %d is cut from the shortened policy", i)
		}
	}
	if !strings.Contains(all, name("team", 1)) {
		t.Error("the shortened policy shows no team at all")
	}
	if !strings.Contains(all, "the rest of Quotas") || !strings.Contains(all, "1 more not shown here") {
		t.Errorf("the shortened policy does not say what it left out: %s", all[len(all)-300:])
	}
}

// TestRenderShortenedApprovalsNameALeftOutCommand: /gpu approvals for a budget owner with 80
// requests keeps the buttons of the first 25 and names the typed command of the first left out,
// not /gpu approvals, which would only show the same 25 buttons again.
func TestRenderShortenedApprovalsNameALeftOutCommand(t *testing.T) {
	r := bot.Reply{Text: "80 request(s) wait for your decision."}
	for _, s := range leaseList(80).Sections {
		r.Sections = append(r.Sections, s)
		r.Actions = append(r.Actions, bot.Action{Label: "Approve " + s.Title, Command: "/gpu approve " + s.Title, Style: "primary"},
			bot.Action{Label: "Deny " + s.Title, Command: "/gpu deny " + s.Title, Style: "danger"})
	}
	_, blocks := slackbot.Render(r, slackbot.MaxMessageBlocks)
	bs := checkLimits(t, "approvals", blocks, slackbot.MaxMessageBlocks)
	if b := buttonsIn(bs); len(b) != 50 || b[49].Value != "/gpu deny L-25" {
		t.Fatalf("kept buttons: %d", len(b))
	}
	all := textIn(bs)
	if !strings.Contains(all, "110 more buttons left out; type their commands instead (e.g. /gpu approve L-26)") {
		t.Errorf("the note does not name a left-out command: %s", all[len(all)-300:])
	}
}
