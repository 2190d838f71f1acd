package slack_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	"github.com/acme/quartermaster/reports/showback"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// bigPolicy is a policy far from the example's: 40 classes and 60 teams, all with names of the
// longest length allowed, and a long organisation name with non-ASCII letters. Its user
// u@x.example is in 12 teams; boss@x.example owns every team's budget.
const bigPolicy = "../../commands/testdata/big.yaml"

// bigTemplates is the embedded template catalog grown to 30 templates with long names and titles.
func bigTemplates(t *testing.T) *templates.Catalog {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(qmtemplates.FS, "layouts", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(qmtemplates.FS, p)
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	base, err := fs.ReadFile(qmtemplates.FS, "jupyterlab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 30; i++ {
		name := fmt.Sprintf("notebook-%02d-with-a-long-name-xyz", i)[:32]
		s := strings.Replace(string(base), "name: jupyterlab", "name: "+name, 1)
		s = strings.Replace(s, "title: JupyterLab", fmt.Sprintf("title: JupyterLab für Forschung — Variante %02d mit einem sehr langen Titel, der weitergeht", i), 1)
		m[name+".yaml"] = &fstest.MapFile{Data: []byte(s)}
	}
	cat, err := templates.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// newBigEnv is the whole product on the big policy, with 30 templates, 200 active leases of
// u@x.example (UU) and 60 requests waiting for boss@x.example (UBOSS). The leases and requests are made
// through the bot once per test binary (bigSlackDB); each test starts on a copy of that database,
// which no test changes for another, and its simulated cluster runs the active leases' jobs again
// as their grants started them (the simulated clock has not moved since, so the cluster holds
// what it held after the requests).
func newBigEnv(t *testing.T) *env {
	t.Helper()
	bigSlackDB.once.Do(func() { bigSlackDB.data, bigSlackDB.err = makeBigSlackDB(t) })
	if bigSlackDB.err != nil {
		t.Fatalf("the big policy's leases and requests: %v", bigSlackDB.err)
	}
	url := storetest.SQLite(t)
	if err := os.WriteFile(strings.TrimPrefix(url, "sqlite:"), bigSlackDB.data, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newBigEnvOn(t, url)
	ls, err := e.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind, States: []qm.State{qm.Active}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 200 {
		t.Fatalf("%d active leases in the copy of the big policy's database, want 200", len(ls))
	}
	cluster := e.svc.Backend.(*sim.Cluster)
	for _, l := range ls {
		if _, err := cluster.Start(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// newBigEnvOn is the whole product on the big policy, with 30 templates, and the database at
// url; the fake Slack knows u@x.example (UU) and boss@x.example (UBOSS).
func newBigEnvOn(t *testing.T, url string) *env {
	t.Helper()
	p, err := policy.LoadFile(bigPolicy)
	if err != nil {
		t.Fatal(err)
	}
	var teams []string
	for _, tm := range p.Teams {
		teams = append(teams, tm.Name)
	}
	e := newEnvOn(t, url, p, teams)
	commands.AddTemplates(e.bot, bigTemplates(t), workload.Settings{})
	e.slack.mu.Lock()
	e.slack.users["UU"] = "u@x.example"
	e.slack.users["UBOSS"] = "boss@x.example"
	e.slack.mu.Unlock()
	return e
}

// bigSlackDB is the SQLite file of makeBigSlackDB, made by the first test that asks for it.
var bigSlackDB struct {
	once sync.Once
	data []byte
	err  error
}

// makeBigSlackDB makes the big policy's 200 leases and 60 requests through the bot, in a
// database of its own, and returns the file once it is closed.
func makeBigSlackDB(t *testing.T) ([]byte, error) {
	dir, err := os.MkdirTemp("", "qm-bigslack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "big.db")
	e := newBigEnvOn(t, "sqlite:"+file)
	p := e.svc.Policy
	ctx := context.Background()
	c1 := p.Classes[0].Name
	for i := range 200 {
		team := p.Teams[i%12].Name
		rs := e.bot.Handle(ctx, bot.Request{User: "u@x.example", Text: fmt.Sprintf("/gpu request 1 %s for 48h team %s", c1, team)})
		if len(rs) == 0 || rs[0].Error || !strings.Contains(rs[0].Text, "is active") {
			return nil, fmt.Errorf("lease %d: %+v", i, rs)
		}
	}
	for i := range 60 {
		team := p.Teams[i%12].Name
		rs := e.bot.Handle(ctx, bot.Request{User: "u@x.example", Text: fmt.Sprintf("/gpu request 9 %s for 4h team %s", p.Classes[1+i%39].Name, team)})
		if len(rs) == 0 || rs[0].Error || !strings.Contains(rs[0].Text, "waits") && !strings.Contains(rs[0].Text, "approv") {
			return nil, fmt.Errorf("request %d: %+v", i, rs)
		}
	}
	e.wait()
	if err := e.db.Close(); err != nil {
		return nil, err
	}
	for _, j := range []string{file + "-wal", file + "-journal"} {
		if fi, err := os.Stat(j); err == nil && fi.Size() > 0 {
			return nil, fmt.Errorf("the database left %s when closed", j)
		}
	}
	return os.ReadFile(file)
}

// limitsOf lists where blocks go past Block Kit's limits (https://docs.slack.dev/reference/block-kit):
// maxBlocks blocks; a section's text 3000 characters, its fields 10 of 2000; an actions block 25
// elements; a button's text 75 characters, its value 2000; an action or block id 255; a header's
// text 150; a context block 10 elements; a static menu 100 options, each option's text 75 and its
// value 150 characters.
func limitsOf(blocks []map[string]any, maxBlocks int) []string {
	var bad []string
	n := func(v any) int { s, _ := v.(string); return utf8.RuneCountInString(s) }
	textOf := func(v any) any { m, _ := v.(map[string]any); return m["text"] }
	if len(blocks) > maxBlocks {
		bad = append(bad, fmt.Sprintf("%d blocks, more than %d", len(blocks), maxBlocks))
	}
	element := func(where string, e map[string]any) {
		if l := n(e["action_id"]); l > 255 {
			bad = append(bad, fmt.Sprintf("%s: action_id of %d characters", where, l))
		}
		switch e["type"] {
		case "button":
			if l := n(textOf(e["text"])); l > 75 {
				bad = append(bad, fmt.Sprintf("%s: button text of %d characters", where, l))
			}
			if l := n(e["value"]); l > 2000 {
				bad = append(bad, fmt.Sprintf("%s: button value of %d characters", where, l))
			}
		case "static_select":
			opts, _ := e["options"].([]any)
			if len(opts) > 100 {
				bad = append(bad, fmt.Sprintf("%s: %d options", where, len(opts)))
			}
			if init, ok := e["initial_option"].(map[string]any); ok {
				opts = append(opts, init)
			}
			for _, o := range opts {
				om, _ := o.(map[string]any)
				if l := n(textOf(om["text"])); l > 75 {
					bad = append(bad, fmt.Sprintf("%s: option text of %d characters", where, l))
				}
				if l := n(om["value"]); l > 150 {
					bad = append(bad, fmt.Sprintf("%s: option value of %d characters", where, l))
				}
			}
		}
	}
	for i, b := range blocks {
		where := fmt.Sprintf("block %d (%v)", i, b["type"])
		if l := n(b["block_id"]); l > 255 {
			bad = append(bad, fmt.Sprintf("%s: block_id of %d characters", where, l))
		}
		switch b["type"] {
		case "section":
			if l := n(textOf(b["text"])); l > 3000 {
				bad = append(bad, fmt.Sprintf("%s: text of %d characters", where, l))
			}
			fields, _ := b["fields"].([]any)
			if len(fields) > 10 {
				bad = append(bad, fmt.Sprintf("%s: %d fields", where, len(fields)))
			}
			for _, f := range fields {
				if l := n(textOf(f)); l > 2000 {
					bad = append(bad, fmt.Sprintf("%s: a field of %d characters", where, l))
				}
			}
			if acc, ok := b["accessory"].(map[string]any); ok {
				element(where, acc)
			}
		case "header":
			if l := n(textOf(b["text"])); l > 150 {
				bad = append(bad, fmt.Sprintf("%s: header of %d characters", where, l))
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) > 25 {
				bad = append(bad, fmt.Sprintf("%s: %d elements", where, len(els)))
			}
			for _, e := range els {
				em, _ := e.(map[string]any)
				element(where, em)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) > 10 {
				bad = append(bad, fmt.Sprintf("%s: %d elements", where, len(els)))
			}
			for _, e := range els {
				if l := n(textOf(e)); l > 3000 {
					bad = append(bad, fmt.Sprintf("%s: context text of %d characters", where, l))
				}
			}
		case "input":
			if el, ok := b["element"].(map[string]any); ok {
				element(where, el)
			}
		}
	}
	return bad
}

// checkMessage fails t when a message Slack was sent goes past a limit: its blocks, and its
// text (40,000 characters; https://docs.slack.dev/reference/methods/chat.postMessage).
func checkMessage(t *testing.T, what string, m message) {
	t.Helper()
	for _, b := range limitsOf(m.Blocks, 50) {
		t.Errorf("%s: %s", what, b)
	}
	if l := utf8.RuneCountInString(m.Text); l > 40000 || l == 0 {
		t.Errorf("%s: a text of %d characters", what, l)
	}
}

// TestBigPolicyFitsSlack: on the big policy, every answer the product sends Slack stays within
// Block Kit's limits, and says what it left out instead of dropping it silently.
func TestBigPolicyFitsSlack(t *testing.T) {
	e := newBigEnv(t)
	p := e.svc.Policy
	cases := []struct {
		user, cmd string
		want      []string // in the answer's text or blocks
	}{
		{"UU", "catalog", []string{p.Classes[39].Name}},
		{"UU", "list", []string{"L-1*", "L-260*"}},
		{"UU", "templates", []string{"notebook-30"}},
		{"UU", "quota", []string{"the first of your 12 teams", p.Teams[11].Name}},
		{"UU", "policy", []string{"large-request"}},
		{"UBOSS", "approvals", []string{"L-201*", "L-260*", "70 more buttons left out; type their commands instead"}},
		{"UU", "help", nil},
		{"UU", "quota " + p.Teams[59].Name, nil},
	}
	for _, c := range cases {
		trigger := e.command(c.user, c.cmd)
		e.wait()
		m := e.responseTo(trigger)
		what := "/gpu " + c.cmd
		checkMessage(t, what, m)
		all := m.Text + textIn(m.Blocks)
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: the answer does not say %q: %.600s", what, w, textIn(m.Blocks))
			}
		}
	}
}

// The App Home tab of someone with 200 leases in 12 teams stays within a view's 100 blocks.
func TestBigPolicyHomeTabFitsSlack(t *testing.T) {
	e := newBigEnv(t)
	opened := `{"type":"event_callback","event_id":"EvBig","event_time":1,"event":{"type":"app_home_opened","user":"UU","channel":"DUU","tab":"home","event_ts":"1.0"}}`
	if code := e.signed("/slack/events", opened, nil); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	_, _, _, views := e.slack.snapshot()
	var home map[string]any
	for _, v := range views {
		if v.Method == "publish" && v.User == "UU" {
			home = v.View
		}
	}
	if home == nil {
		t.Fatal("no Home tab published")
	}
	for _, b := range limitsOf(blocksFrom(home), 100) {
		t.Errorf("Home tab: %s", b)
	}
	for _, want := range []string{"*L-1*", "*L-260*", "the first of your 12 teams"} {
		if !strings.Contains(textIn(blocksFrom(home)), want) {
			t.Errorf("the Home tab does not say %q", want)
		}
	}
}

// The request modal on the big policy: 40 classes, 60 teams, 30 templates.
func TestBigPolicyRequestModalFitsSlack(t *testing.T) {
	e := newBigEnv(t)
	e.command("UU", "")
	e.wait()
	_, _, _, views := e.slack.snapshot()
	if len(views) == 0 {
		t.Fatal("no modal opened")
	}
	for _, v := range views {
		if title, _ := v.View["title"].(map[string]any); utf8.RuneCountInString(fmt.Sprint(title["text"])) > 24 {
			t.Errorf("views.%s: a title of more than 24 characters: %v", v.Method, title["text"])
		}
		for _, b := range limitsOf(blocksFrom(v.View), 100) {
			t.Errorf("views.%s: %s", v.Method, b)
		}
	}
}

// The weekly showback post and each budget owner's DM on the big policy.
func TestBigPolicyShowbackFitsSlack(t *testing.T) {
	e := newBigEnv(t)
	p := e.svc.Policy
	w, _ := showback.ParseWeek("2026-W49", showback.Week{})
	ls, err := e.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range ls {
		l.Team = p.Teams[i%len(p.Teams)].Name
		l.Class = p.Classes[i%len(p.Classes)].Name
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: w.Start(p.Location).Add(8 * 24 * time.Hour), Leases: ls})
	var teams []string
	for _, tm := range p.Teams {
		teams = append(teams, tm.Name)
	}
	// As the publisher sends them: each in as many parts as it needs.
	var replies []bot.Reply
	replies = append(replies, showback.Parts(r.Post("#gpu-showback", nil), "continued.")...)
	replies = append(replies, showback.Parts(r.OwnerDM("#gpu-showback", teams), "continued.")...)
	earlier, _, _, _ := e.slack.snapshot() // the requests' notices
	for _, reply := range replies {
		if err := e.current().Deliver(context.Background(), reply); err != nil {
			t.Fatal(err)
		}
	}
	posts, _, _, _ := e.slack.snapshot()
	posts = posts[len(earlier):]
	if len(posts) != len(replies) {
		t.Fatalf("%d posts of %d parts", len(posts), len(replies))
	}
	var all strings.Builder
	for i, m := range posts {
		checkMessage(t, fmt.Sprintf("showback post %d", i), m)
		if s := textIn(m.Blocks); strings.Contains(s, "not shown here") || strings.Contains(s, "too long for one Slack message") {
			t.Errorf("showback post %d was cut: %.300s", i, s)
		}
		all.WriteString(textIn(m.Blocks))
	}
	for _, tm := range p.Teams {
		if !strings.Contains(all.String(), "Team "+tm.Name) {
			t.Errorf("the budget owner's DM lacks team %s", tm.Name)
		}
	}
}

func blocksFrom(v map[string]any) []map[string]any {
	bs, _ := v["blocks"].([]any)
	var out []map[string]any
	for _, b := range bs {
		m, _ := b.(map[string]any)
		out = append(out, m)
	}
	return out
}
