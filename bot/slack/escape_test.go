package slack_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// hostile are things a user may type that Slack would turn into a mention, a link dressed up as
// something else, or an escape that is not one.
var hostile = []string{
	"<!channel> <https://evil.example|click to approve>",
	"<!here|here> <@UDANA> <!subteam^S0123|@admins>",
	"<#CVISIONGPU|vision-gpu> &lt;!everyone&gt; & more",
	"<mailto:x@evil.example|dana> <https://evil.example>",
}

// rawControl finds what must never reach a mrkdwn field from user text: a < or > that Slack
// would read as the start or end of a link or mention, or an & that is not one of its escapes.
var rawControl = regexp.MustCompile(`<[!@#]|<https?:|<mailto:|&(?:[^agl]|a[^m]|am[^p]|amp[^;]|g[^t]|gt[^;]|l[^t]|lt[^;])`)

// mrkdwnTexts are the top-level text and every text of the blocks (and views) Slack received.
func mrkdwnTexts(e *env) []string {
	posts, updates, responses, views := e.slack.snapshot()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["text"].(string); ok && x["type"] != "plain_text" {
				out = append(out, t)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		case []map[string]any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	for _, ms := range [][]message{posts, updates, responses} {
		for _, m := range ms {
			out = append(out, m.Text)
			walk(m.Blocks)
		}
	}
	for _, v := range views {
		walk(v.View)
	}
	return out
}

// User text reaches Slack escaped in every field it renders as mrkdwn, the top-level text
// (notifications) included: reasons of quota requests and denials in the approval posts and the
// requester's DM, template parameters, and class and team names echoed in refusals, with long
// text clipped without cutting an escape in two.
func TestUserTextReachesSlackEscaped(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	commands.AddTemplates(e.bot, cat, workload.Settings{})
	id := overQuota(e)
	for _, h := range hostile {
		e.command("UALICE", "quota request +1 interactive for 1d because "+h)
		e.command("UALICE", "request 1 "+h+" for 2h")
		e.command("UALICE", "request 1 interactive for 2h team "+h)
		e.command("UALICE", "submit cuda-smoke note="+h)
		e.command("UALICE", "status "+h)
		e.command("UALICE", "quota "+h)
		e.command("UALICE", h)
	}
	e.command("UALICE", "quota request +1 interactive for 1d because "+strings.Repeat("&", commands.MaxReason))
	e.command("UDANA", "deny "+id+" "+hostile[0]+" "+hostile[1])
	e.wait()
	texts := mrkdwnTexts(e)
	if len(texts) < 20 {
		t.Fatalf("only %d texts reached Slack", len(texts))
	}
	for _, s := range texts {
		if loc := rawControl.FindStringIndex(s); loc != nil {
			t.Errorf("user text reached Slack unescaped (%q) in %q", s[loc[0]:min(loc[1]+20, len(s))], s)
		}
	}
	approvals := 0
	for _, m := range e.postsTo(dm("UDANA")) {
		if strings.Contains(m.Text, "&lt;!channel&gt; &lt;https://evil.example|click to approve&gt;") {
			approvals++
		}
	}
	if approvals == 0 {
		t.Error("the quota request's reason is not shown (escaped) in dana's approval post")
	}
	told := false
	for _, m := range e.postsTo(dm("UALICE")) {
		told = told || strings.Contains(m.Text, "&lt;@UDANA&gt;")
	}
	if !told {
		t.Error("alice was not told the denial's reason, escaped")
	}
}
