package slack_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestCommandGrantsLease: a signed /gpu request is acknowledged, grants a lease, and the answer
// goes back through the response_url as a lease card with its buttons. On PostgreSQL.
func TestCommandGrantsLease(t *testing.T) {
	e := newEnv(t, storetest.Postgres(t))
	trigger := e.command("UALICE", "request 1 interactive for 2h")
	e.wait()

	ls := e.leases()
	if len(ls) != 1 || ls[0].User != "alice@acme.example" || ls[0].State != qm.Active {
		t.Fatalf("leases = %+v", ls)
	}
	id := ls[0].ID.String()
	r := e.responseTo(trigger)
	if r.ResponseType != "ephemeral" || r.Replace {
		t.Errorf("answer is %q, replace %v; want an ephemeral new message", r.ResponseType, r.Replace)
	}
	if !strings.Contains(r.Text, id+" is active") {
		t.Errorf("answer text = %q", r.Text)
	}
	all := textIn(r.Blocks)
	for _, want := range []string{"*State*", "active", "*Node*", "*Time left*", "*Cost so far*"} {
		if !strings.Contains(all, want) {
			t.Errorf("lease card lacks %q: %s", want, all)
		}
	}
	findButton(t, r.Blocks, "/gpu extend "+id+" 1h")
	if b := findButton(t, r.Blocks, "/gpu release "+id); b.Style != "danger" {
		t.Errorf("release button style %q, want danger", b.Style)
	}
}

// overQuota fills team vision's interactive quota (4) as alice and asks for a fifth GPU, which the
// over-quota rule sends to dana. It returns the pending lease's id.
func overQuota(e *env) string {
	e.t.Helper()
	for range 4 {
		e.command("UALICE", "request 1 interactive for 2h")
	}
	e.wait()
	trigger := e.command("UALICE", "request 1 interactive for 2h")
	e.wait()
	var pending *qm.Lease
	for _, l := range e.leases() {
		if l.State == qm.PendingApproval {
			pending = l
		}
	}
	if pending == nil {
		e.t.Fatalf("no pending lease: %+v", e.leases())
	}
	if r := e.responseTo(trigger); !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "over-quota") {
		e.t.Fatalf("fifth request answered %q", r.Text)
	}
	return pending.ID.String()
}

// approvalCopies are the approval messages posted to dana's DM and to #vision-gpu.
func approvalCopies(e *env, id string) (toDana, toChannel message) {
	e.t.Helper()
	find := func(ch string) message {
		for _, m := range e.postsTo(ch) {
			if strings.Contains(m.Text, "Approval needed") && strings.Contains(m.Text, id) {
				return m
			}
		}
		e.t.Fatalf("no approval message for %s in %s", id, ch)
		return message{}
	}
	return find(dm("UDANA")), find("CVISIONGPU")
}

// TestApproval: an over-quota request posts Approve/Deny to the budget owner (DM and team
// channel); her click updates both copies in place and the requester is DMed.
func TestApproval(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	id := overQuota(e)
	toDana, toChannel := approvalCopies(e, id)
	for _, m := range []message{toDana, toChannel} {
		if b := findButton(t, m.Blocks, "/gpu approve "+id); b.Style != "primary" {
			t.Errorf("approve button style %q", b.Style)
		}
		findButton(t, m.Blocks, "/gpu deny "+id)
	}

	e.click("UDANA", toChannel, findButton(t, toChannel.Blocks, "/gpu approve "+id))
	e.wait()

	if l := e.lease(id); l.State == qm.PendingApproval || l.DecidedBy != "dana@acme.example" {
		t.Fatalf("after approval: %s decided by %q", l.State, l.DecidedBy)
	}
	_, updates, responses, _ := e.slack.snapshot()
	updated := map[string]bool{}
	for _, u := range updates {
		if !strings.Contains(u.Text, id) || !strings.Contains(u.Text, "approved by dana@acme.example") {
			t.Errorf("update text = %q", u.Text)
		}
		if len(buttonsIn(u.Blocks)) != 0 {
			t.Errorf("the decided message still has buttons: %v", buttonsIn(u.Blocks))
		}
		updated[u.Channel+"/"+u.TS] = true
	}
	if len(updates) != 2 || !updated[toDana.Channel+"/"+toDana.TS] || !updated[toChannel.Channel+"/"+toChannel.TS] {
		t.Fatalf("updates = %+v; want both copies (%s/%s, %s/%s)", updates, toDana.Channel, toDana.TS, toChannel.Channel, toChannel.TS)
	}
	told := false
	for _, m := range e.postsTo(dm("UALICE")) {
		if strings.Contains(m.Text, id) && strings.Contains(m.Text, "approved by dana@acme.example") {
			told = true
		}
	}
	if !told {
		t.Errorf("alice was not told; her DMs: %+v", e.postsTo(dm("UALICE")))
	}
	last := responses[len(responses)-1]
	if last.ResponseType != "ephemeral" || !strings.Contains(last.Text, "Approved "+id) {
		t.Errorf("dana's answer = %+v", last)
	}
}

// TestApprovalWithdrawn: when the requester cancels a request that waits for approval, both
// copies of the approval message are edited in place to say it was withdrawn, without buttons.
func TestApprovalWithdrawn(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	id := overQuota(e)
	toDana, toChannel := approvalCopies(e, id)
	e.command("UALICE", "release "+id)
	e.wait()

	if l := e.lease(id); l.State != qm.Cancelled {
		t.Fatalf("after the requester cancelled: %s", l.State)
	}
	_, updates, _, _ := e.slack.snapshot()
	updated := map[string]bool{}
	for _, u := range updates {
		if !strings.Contains(u.Text, id+" was withdrawn (cancelled by alice@acme.example)") {
			t.Errorf("update text = %q", u.Text)
		}
		if len(buttonsIn(u.Blocks)) != 0 {
			t.Errorf("the withdrawn request still has buttons: %v", buttonsIn(u.Blocks))
		}
		updated[u.Channel+"/"+u.TS] = true
	}
	if len(updates) != 2 || !updated[toDana.Channel+"/"+toDana.TS] || !updated[toChannel.Channel+"/"+toChannel.TS] {
		t.Fatalf("updates = %+v; want both copies edited", updates)
	}
}

// TestApprovalRefused: a click on Approve by someone who may not decide gets an ephemeral
// refusal and changes nothing.
func TestApprovalRefused(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	id := overQuota(e)
	_, toChannel := approvalCopies(e, id)
	posts0, _, _, _ := e.slack.snapshot()

	for _, user := range []string{"UBOB", "UALICE"} { // a teammate, and the requester herself
		e.click(user, toChannel, findButton(t, toChannel.Blocks, "/gpu approve "+id))
		e.wait()
	}
	if l := e.lease(id); l.State != qm.PendingApproval || l.DecidedBy != "" {
		t.Fatalf("after refused clicks: %s decided by %q", l.State, l.DecidedBy)
	}
	posts, updates, responses, _ := e.slack.snapshot()
	if len(updates) != 0 || len(posts) != len(posts0) {
		t.Errorf("refused clicks changed messages: %d updates, %d new posts", len(updates), len(posts)-len(posts0))
	}
	refusals := responses[len(responses)-2:]
	if !strings.Contains(refusals[0].Text, "Only dana@acme.example or platform-leads@acme.example can decide") {
		t.Errorf("bob's refusal = %q", refusals[0].Text)
	}
	if !strings.Contains(refusals[1].Text, "decide") {
		t.Errorf("alice's refusal = %q", refusals[1].Text)
	}
	for _, r := range refusals {
		if r.ResponseType != "ephemeral" || r.Replace || !strings.Contains(textIn(r.Blocks), ":warning:") {
			t.Errorf("refusal %q is %q (replace %v), want an ephemeral warning", r.Text, r.ResponseType, r.Replace)
		}
	}
}

// TestDenial: Deny asks for a reason in a modal; submitting it denies, updates the copies and
// tells the requester why.
func TestDenial(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	id := overQuota(e)
	toDana, _ := approvalCopies(e, id)
	e.click("UDANA", toDana, findButton(t, toDana.Blocks, "/gpu deny "+id))
	e.wait()
	if l := e.lease(id); l.State != qm.PendingApproval {
		t.Fatalf("the Deny button decided at once: %s", l.State)
	}
	_, _, _, views := e.slack.snapshot()
	if len(views) != 1 || views[0].Method != "open" || views[0].View["callback_id"] != "qm.deny" {
		t.Fatalf("views = %+v", views)
	}

	// Submitting without a reason is refused in the modal itself.
	sub := func(reason string) (int, string) {
		return e.interaction(map[string]any{
			"type": "view_submission", "trigger_id": e.newTrigger(), "user": map[string]any{"id": "UDANA"},
			"view": map[string]any{"id": "VDENY", "callback_id": "qm.deny", "private_metadata": views[0].View["private_metadata"],
				"state": map[string]any{"values": map[string]any{"qm.deny.reason": map[string]any{"qm.deny.reason": map[string]any{"type": "plain_text_input", "value": reason}}}}},
		})
	}
	if code, body := sub("  "); code != http.StatusOK || !strings.Contains(body, `"response_action":"errors"`) {
		t.Fatalf("empty reason: HTTP %d %s", code, body)
	}
	if code, _ := sub("use the\ntrain class"); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	l := e.lease(id)
	if l.State != qm.Denied || !strings.Contains(l.Reason, "use the train class") {
		t.Fatalf("after denial: %s (%s)", l.State, l.Reason)
	}
	_, updates, _, _ := e.slack.snapshot()
	if len(updates) != 2 || !strings.Contains(updates[0].Text, "denied by dana@acme.example") {
		t.Fatalf("updates = %+v", updates)
	}
	told := false
	for _, m := range e.postsTo(dm("UALICE")) {
		told = told || strings.Contains(m.Text, "use the train class")
	}
	if !told {
		t.Error("alice was not told the reason")
	}
}

// TestDenyRefusedBeforeTheForm: a click on Deny by someone who may not decide (a teammate, the
// requester herself) is refused at once, privately, naming who decides, and opens no form to
// type a reason into; nothing changes.
func TestDenyRefusedBeforeTheForm(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	id := overQuota(e)
	_, toChannel := approvalCopies(e, id)
	_, _, responses0, _ := e.slack.snapshot()
	for _, user := range []string{"UBOB", "UALICE"} {
		e.click(user, toChannel, findButton(t, toChannel.Blocks, "/gpu deny "+id))
		e.wait()
	}
	posts, updates, responses, views := e.slack.snapshot()
	if len(views) != 0 {
		t.Errorf("a reason form was opened for someone who may not decide: %+v", views)
	}
	if l := e.lease(id); l.State != qm.PendingApproval || l.DecidedBy != "" {
		t.Fatalf("after refused clicks: %s decided by %q", l.State, l.DecidedBy)
	}
	if len(updates) != 0 {
		t.Errorf("refused clicks changed %d messages; posts %d", len(updates), len(posts))
	}
	refusals := responses[len(responses0):]
	if len(refusals) != 2 {
		t.Fatalf("%d answers to two refused clicks: %+v", len(refusals), refusals)
	}
	if !strings.Contains(refusals[0].Text, "Only dana@acme.example or platform-leads@acme.example can decide") {
		t.Errorf("bob's refusal = %q", refusals[0].Text)
	}
	if !strings.Contains(refusals[1].Text, "Only dana@acme.example or platform-leads@acme.example can decide") {
		t.Errorf("alice's refusal = %q", refusals[1].Text)
	}
	for _, r := range refusals {
		if r.ResponseType != "ephemeral" || r.Replace {
			t.Errorf("refusal %q is %q (replace %v), want ephemeral", r.Text, r.ResponseType, r.Replace)
		}
	}
}

// TestRedelivery: the same command delivered twice (a retry, a replay, and once more after a
// restart that forgot the deliveries it saw) makes one lease.
func TestRedelivery(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	trigger := e.newTrigger()
	body := e.commandBody("UALICE", "request 1 interactive for 2h", trigger)
	for _, h := range []map[string]string{nil, {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}, nil} {
		if code := e.signed("/slack/commands", body, h); code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
	}
	e.wait()
	if n := len(e.leases()); n != 1 {
		t.Fatalf("%d leases after a redelivery, want 1", n)
	}
	_, _, responses, _ := e.slack.snapshot()
	if len(responses) != 1 {
		t.Fatalf("%d answers, want 1 (repeats are dropped)", len(responses))
	}

	// A restarted adapter has forgotten the trigger; the lease service still knows its key.
	e.restart()
	if code := e.signed("/slack/commands", body, map[string]string{"X-Slack-Retry-Num": "2"}); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	if n := len(e.leases()); n != 1 {
		t.Fatalf("%d leases after a redelivery to a restarted adapter, want 1", n)
	}
	// The redelivery is dropped while the first delivery's record is still kept, or answered
	// "(already done)" once it is not: never a second lease, never a second answer of another kind.
	_, _, responses, _ = e.slack.snapshot()
	switch {
	case len(responses) > 2:
		t.Errorf("%d answers after a redelivery to a restarted adapter, want at most 2", len(responses))
	case len(responses) == 2 && !strings.Contains(responses[1].Text, "(already done)"):
		t.Errorf("answer to the redelivery = %q", responses[1].Text)
	}
}

// TestRedeliveryOfExtendAfterRestart: an extension or a quota request delivered again after a
// restart (the adapter has forgotten the trigger) is done once.
func TestRedeliveryOfExtendAfterRestart(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.command("UALICE", "request 1 interactive for 2h")
	e.wait()
	id := e.leases()[0].ID.String()
	for _, text := range []string{"extend " + id + " 1h", "quota request +1 interactive for 1d because a demo"} {
		body := e.commandBody("UALICE", text, e.newTrigger())
		for i := 0; i < 2; i++ {
			if code := e.signed("/slack/commands", body, map[string]string{"X-Slack-Retry-Num": strconv.Itoa(i)}); code != http.StatusOK {
				t.Fatalf("HTTP %d", code)
			}
			e.restart()
		}
	}
	if l := e.lease(id); l.Duration != 3*time.Hour {
		t.Errorf("%s lasts %s after one extension by 1h delivered twice; want 3h", id, l.Duration)
	}
	if n := len(e.leases()); n != 1 {
		t.Errorf("%d workspace leases", n)
	}
	all, _ := e.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.KindQuota})
	if len(all) != 1 {
		t.Errorf("one quota request delivered twice made %d", len(all))
	}
}

// TestSignature: a valid signature passes; a changed body, a stale timestamp, a missing header or
// a wrong secret each get 401 and change nothing.
func TestSignature(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	body := func() string { return e.commandBody("UALICE", "request 1 interactive for 2h", e.newTrigger()) }
	now := time.Now()
	cases := []struct {
		name string
		code func() int
	}{
		{"changed body", func() int {
			b := body()
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/slack/commands", strings.NewReader(strings.Replace(b, "1+interactive", "4+interactive", 1)))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Slack-Request-Timestamp", itoa(now.Unix()))
			req.Header.Set("X-Slack-Signature", sign(secret, now.Unix(), b))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}},
		{"six minutes old", func() int { return e.send("/slack/commands", body(), secret, now.Add(-6*time.Minute), nil) }},
		{"six minutes ahead", func() int { return e.send("/slack/commands", body(), secret, now.Add(6*time.Minute), nil) }},
		{"no signature", func() int {
			return e.send("/slack/commands", body(), secret, now, map[string]string{"X-Slack-Signature": ""})
		}},
		{"no timestamp", func() int {
			return e.send("/slack/commands", body(), secret, now, map[string]string{"X-Slack-Request-Timestamp": ""})
		}},
		{"wrong secret", func() int { return e.send("/slack/commands", body(), "not-the-secret", now, nil) }},
		{"interaction, wrong secret", func() int {
			return e.send("/slack/interactions", "payload=%7B%22type%22%3A%22block_actions%22%7D", "x", now, nil)
		}},
		{"event, stale", func() int {
			return e.send("/slack/events", `{"type":"event_callback","event_id":"E1","event":{"type":"app_home_opened","user":"UALICE","tab":"home"}}`, secret, now.Add(-time.Hour), nil)
		}},
	}
	for _, c := range cases {
		if code := c.code(); code != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", c.name, code)
		}
	}
	e.wait()
	posts, updates, responses, views := e.slack.snapshot()
	if n := len(e.leases()); n != 0 || len(posts)+len(updates)+len(responses)+len(views) != 0 {
		t.Fatalf("refused requests changed something: %d leases, %d posts, %d updates, %d answers, %d views", n, len(posts), len(updates), len(responses), len(views))
	}

	if code := e.signed("/slack/commands", body(), nil); code != http.StatusOK {
		t.Fatalf("valid signature: HTTP %d", code)
	}
	e.wait()
	if n := len(e.leases()); n != 1 {
		t.Fatalf("%d leases after a valid request", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestURLVerification: Slack's check of the events URL gets its challenge back, when signed.
func TestURLVerification(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	body := `{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/slack/events", strings.NewReader(body))
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Slack-Request-Timestamp", itoa(ts))
	req.Header.Set("X-Slack-Signature", sign(secret, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"`) {
		t.Fatalf("HTTP %d %s", resp.StatusCode, got)
	}
}

// blockIDs lists the block ids of a message or view.
func blockIDs(blocks []map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, b := range blocks {
		if id, _ := b["block_id"].(string); id != "" {
			out[id] = true
		}
	}
	return out
}

// TestEditsGetFreshBlockIDs: an edited message and a republished Home tab carry block ids of their
// own, never the ones the earlier copy had, so clients redraw them.
func TestEditsGetFreshBlockIDs(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	id := overQuota(e)
	toDana, _ := approvalCopies(e, id)
	before := blockIDs(toDana.Blocks)
	e.command("UDANA", "deny "+id+" not this week")
	e.wait()
	_, updates, _, _ := e.slack.snapshot()
	if len(updates) == 0 {
		t.Fatal("no edit")
	}
	for _, u := range updates {
		for bid := range blockIDs(u.Blocks) {
			if before[bid] {
				t.Errorf("the edit reuses block id %q of the message it replaces", bid)
			}
		}
	}
	// The Home tab, published twice, gets new ids each time.
	for i := 0; i < 2; i++ {
		if code := e.signed("/slack/events", `{"type":"event_callback","event_id":"Ev`+strconv.Itoa(i)+`","event":{"type":"app_home_opened","user":"UALICE","tab":"home"}}`, nil); code != 200 {
			t.Fatalf("HTTP %d", code)
		}
		e.wait()
	}
	var homes []map[string]bool
	_, _, _, views := e.slack.snapshot()
	for _, v := range views {
		if v.Method == "publish" {
			bl, _ := v.View["blocks"].([]any)
			var blocks []map[string]any
			for _, b := range bl {
				blocks = append(blocks, b.(map[string]any))
			}
			homes = append(homes, blockIDs(blocks))
		}
	}
	if len(homes) < 2 {
		t.Fatalf("%d Home tab publishes", len(homes))
	}
	for bid := range homes[len(homes)-1] {
		if homes[len(homes)-2][bid] {
			t.Errorf("the republished Home tab reuses block id %q", bid)
		}
	}
}

// TestSSLCheck: Slack's periodic check of the command URL's certificate (ssl_check=1, no user,
// no trigger) is answered 200 and does nothing: no form is opened for nobody, nothing is posted.
func TestSSLCheck(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	if code := e.signed("/slack/commands", "ssl_check=1&token=gIkuvaNzQIHg97ATvDxqgjtO", nil); code != http.StatusOK {
		t.Fatalf("ssl_check: HTTP %d, want 200", code)
	}
	e.wait()
	posts, updates, responses, views := e.slack.snapshot()
	if len(posts)+len(updates)+len(responses)+len(views) != 0 {
		t.Fatalf("ssl_check made %d posts, %d updates, %d answers, %d views", len(posts), len(updates), len(responses), len(views))
	}
}
