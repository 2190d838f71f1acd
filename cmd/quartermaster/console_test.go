package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/store"
)

type message struct {
	To      string   `json:"to"`
	Text    string   `json:"text"`
	Files   []string `json:"files"`
	Actions []struct {
		Label   string `json:"label"`
		Command string `json:"command"`
	} `json:"actions"`
}

// runConsoleScript runs the console on the embedded default with a script on standard input.
func runConsoleScript(t *testing.T, script string, extra ...string) []message {
	t.Helper()
	return runConsoleAt(t, t.TempDir(), "2026-11-30T15:00:00Z", script, extra...)
}

// runConsoleAt runs a console script on the database in dir, the simulated clock starting at clock.
// What QM_DATA_DIR=dir would give (the SQLite file and the reports in dir, the embedded policy) is
// passed as flags, which extra may override, rather than set in the environment, so that the tests
// that use it may run in parallel.
func runConsoleAt(t *testing.T, dir, clock, script string, extra ...string) []message {
	t.Helper()
	var out, errb bytes.Buffer
	args := append([]string{"console", "--json", "--clock", clock,
		"--db", "sqlite:" + filepath.Join(dir, "quartermaster.db"), "--reports", filepath.Join(dir, "reports")}, extra...)
	if code := run(context.Background(), args, strings.NewReader(script), &out, &errb); code != 0 {
		t.Fatalf("console exited %d: %s", code, errb.String())
	}
	return consoleMessages(t, out.String())
}

// runConsoleBinary is runConsoleScript with the console run as the built binary (runBinaryInput):
// a script of many rounds, each a few database transactions, takes many times as long under the
// race detector.
func runConsoleBinary(t *testing.T, script string, extra ...string) []message {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"console", "--json", "--clock", "2026-11-30T15:00:00Z",
		"--db", "sqlite:" + filepath.Join(dir, "quartermaster.db"), "--reports", filepath.Join(dir, "reports")}, extra...)
	code, out, stderr := runBinaryInput(t, ".", nil, script, args...)
	if code != 0 {
		t.Fatalf("console exited %d: %s", code, stderr)
	}
	return consoleMessages(t, out)
}

// consoleMessages are the console's --json output's messages, one a line.
func consoleMessages(t *testing.T, out string) []message {
	t.Helper()
	var msgs []message
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// The quick start of README.md: a request on the embedded default is granted, alice is warned
// 15 minutes before it ends, and three hours later she hears that it expired.
func TestConsoleQuickStart(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n")
	if len(msgs) != 3 {
		t.Fatalf("want a grant, a warning and an expiry, got %+v", msgs)
	}
	g := msgs[0]
	for _, want := range []string{"L-1 is active", "l40s-01", "until Mon 30 Nov 11:00 CST", "$1.80"} {
		if !strings.Contains(g.Text, want) {
			t.Errorf("grant %q lacks %q", g.Text, want)
		}
	}
	if g.To != "alice@acme.example" || len(g.Actions) == 0 || g.Actions[len(g.Actions)-1].Command != "/gpu release L-1" {
		t.Errorf("grant addressed or buttoned wrongly: %+v", g)
	}
	if w := msgs[1]; w.To != "alice@acme.example" || w.Text != "L-1 ends at Mon 30 Nov 11:00 CST (in 15m); extend it with /gpu extend L-1 1h." ||
		len(w.Actions) != 2 || w.Actions[0].Command != "/gpu extend L-1 1h" {
		t.Errorf("warning before the end: %+v", w)
	}
	if e := msgs[2]; e.To != "alice@acme.example" || !strings.Contains(e.Text, "L-1 expired") {
		t.Errorf("expiry message: %+v", e)
	}
}

func TestConsoleRefusesStrangersAndBadLines(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, "mallory@evil.example: /gpu request 1 interactive\nthis is not a command\n:advance soon\n:util L-9 50\n")
	if len(msgs) != 4 {
		t.Fatalf("got %+v", msgs)
	}
	if !strings.Contains(msgs[0].Text, "not in the directory") || msgs[0].To != "mallory@evil.example" {
		t.Errorf("stranger: %+v", msgs[0])
	}
	for _, m := range msgs[1:] {
		if !strings.Contains(m.Text, "Example:") {
			t.Errorf("no example in %q", m.Text)
		}
	}
}

func TestConsoleStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	run1 := runConsoleScript(t, "alice@acme.example: /gpu request 1 interactive 8h\n", "--db", db)
	if !strings.Contains(run1[0].Text, "L-1 is active") {
		t.Fatal(run1[0].Text)
	}
	run2 := runConsoleScript(t, "alice@acme.example: /gpu list\n", "--db", db)
	if !strings.Contains(run2[0].Text, "L-1") || !strings.Contains(run2[0].Text, "State: active") {
		t.Fatalf("after a restart: %q", run2[0].Text)
	}
}

func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"policy", "check", "../../docs/quartermaster.example.yaml"}, nil, &out, &errb); code != 0 {
		t.Fatalf("example policy rejected: %s", errb.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src := "organization: X\nclasses:\n  - {name: gpu, max_gpus: 1, max_duration: 1h}\nexceptions:\n  - name: broken\n    when: request.gpus > 'x'\nsim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"policy", "check", bad}, nil, &out, &errb); code != 1 {
		t.Fatalf("bad policy exit %d", code)
	}
	if !strings.Contains(errb.String(), "bad.yaml:6: exception rule \"broken\", at column 14") {
		t.Fatalf("error does not name rule, line and column: %s", errb.String())
	}
	// --policy FILE, as every other command takes the policy, works too.
	for _, args := range [][]string{{"--policy", bad}, {"--policy=" + bad}} {
		errb.Reset()
		if code := run(context.Background(), append([]string{"policy", "check"}, args...), nil, io.Discard, &errb); code != 1 || !strings.Contains(errb.String(), "bad.yaml:6:") {
			t.Errorf("policy check %v: exit %d, %s", args, code, errb.String())
		}
	}
}

// TestConsoleQueuedWaitPrediction: with the cluster full, the queued reply, the quote and the
// catalog carry the wait predictor's figures: the next expiry, and the queue ahead served first.
// Before the cluster fills, no wait is expected and the bound is the shortest given, a minute.
func TestConsoleQueuedWaitPrediction(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, `maya@acme.example: /gpu estimate 1 train 1h
alice@acme.example: /gpu request 8 train 2h
bob@acme.example: /gpu request 8 train 4h
maya@acme.example: /gpu request 8 train 1h
maya@acme.example: /gpu estimate 1 train 1h
`)
	if len(msgs) != 5 {
		t.Fatalf("got %+v", msgs)
	}
	if !strings.Contains(msgs[0].Text, "Predicted wait: none expected (90%: within a minute)") {
		t.Errorf("estimate on a free cluster: %q", msgs[0].Text)
	}
	msgs = msgs[1:]
	if !strings.Contains(msgs[2].Text, "L-3 is queued") || !strings.Contains(msgs[2].Text, "Predicted wait: about 2h") {
		t.Errorf("queued reply: %q", msgs[2].Text)
	}
	// One more GPU waits for maya's queued lease to start at 2h and end at 3h.
	if !strings.Contains(msgs[3].Text, "Predicted wait: about 3h") {
		t.Errorf("estimate: %q", msgs[3].Text)
	}
}

// TestConsoleWaitsAfterRestart: what the wait predictor learned survives a restart. Alice
// released four 4-hour leases after an hour each; after a restart ten minutes into her fifth,
// a request for the whole class is expected to wait for the rest of her usual hour, not of her 4h.
// The waits of her five requests are in the database for the predictor to read back.
func TestConsoleWaitsAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var script strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&script, "alice@acme.example: /gpu request 8 train 4h\n:advance 1h\nalice@acme.example: /gpu release L-%d\n", i)
	}
	script.WriteString("alice@acme.example: /gpu request 8 train 4h\n")
	runConsoleAt(t, dir, "2026-11-30T15:00:00Z", script.String())
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "quartermaster.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	err = db.WaitRecords(context.Background(), time.Time{}, func(class string, rec []byte) error {
		kept = append(kept, class+" "+string(rec))
		return nil
	})
	db.Close()
	if err != nil || len(kept) != 5 || !strings.Contains(kept[0], `"user":"alice@acme.example"`) {
		t.Fatalf("wait records after the first run (%v): %q", err, kept)
	}
	msgs := runConsoleAt(t, dir, "2026-11-30T19:10:00Z", "bob@acme.example: /gpu estimate 16 train 1h\n")
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Predicted wait: about 50m") {
		t.Fatalf("estimate after a restart: %+v", msgs)
	}
}

// TestConsoleWaitsLearnImmediateStarts: the predictor learns from every request, not only from
// those that queued. After 35 rounds in which two requests start at once and a third waits an
// hour, a queued request is expected to wait about an hour and one on a free cluster not at all.
// The 35 rounds run as the built binary (runConsoleBinary).
func TestConsoleWaitsLearnImmediateStarts(t *testing.T) {
	t.Parallel()
	var script strings.Builder
	for range 35 {
		script.WriteString("alice@acme.example: /gpu request 8 train 1h\nbob@acme.example: /gpu request 8 train 1h\n" +
			"maya@acme.example: /gpu request 8 train 1h\n:advance 2h\n")
	}
	script.WriteString("maya@acme.example: /gpu estimate 8 train 1h\n")
	msgs := runConsoleBinary(t, script.String())
	var queued []string
	for _, m := range msgs {
		if strings.Contains(m.Text, "is queued") {
			queued = append(queued, m.Text)
		}
	}
	if len(queued) != 35 || !strings.Contains(queued[34], "Predicted wait: about 1h") {
		t.Fatalf("queued replies: %d, the last %q", len(queued), queued[len(queued)-1])
	}
	if last := msgs[len(msgs)-1].Text; !strings.Contains(last, "Predicted wait: none expected") {
		t.Fatalf("estimate on a free cluster: %q", last)
	}
}

// TestConsoleIdleReclaim: `:util` makes a workspace idle; after idle_timeout the owner is warned
// with Keep/Release, and after idle_grace the lease is reclaimed.
func TestConsoleIdleReclaim(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, "alice@acme.example: /gpu request 1 interactive 4h\n:util L-1 0\n:advance 45m\n")
	if len(msgs) != 3 {
		t.Fatalf("got %+v", msgs)
	}
	if !strings.Contains(msgs[1].Text, "L-1 has shown no GPU activity") || len(msgs[1].Actions) != 2 || msgs[1].Actions[0].Command != "/gpu keep L-1" {
		t.Errorf("idle warning: %+v", msgs[1])
	}
	if !strings.Contains(msgs[2].Text, "L-1 was reclaimed") || !strings.Contains(msgs[2].Text, "3.33 GPU-hours went back") {
		t.Errorf("reclaim: %+v", msgs[2])
	}
}

// On another policy the console's examples name its own people and classes, and the example it
// gives for a bad line works as given.
func TestConsoleExamplesComeFromThePolicy(t *testing.T) {
	t.Parallel()
	orbit := writeOrbit(t)
	msgs := runConsoleScript(t, "this is not a command\n:as\n", "--policy", orbit)
	if len(msgs) != 2 {
		t.Fatalf("got %+v", msgs)
	}
	const example = "yuki@orbit.example: /gpu request 1 notebook for 2h"
	if !strings.Contains(msgs[0].Text, "Example: "+example) {
		t.Errorf("a bad line's example: %q, want %q", msgs[0].Text, example)
	}
	if !strings.Contains(msgs[1].Text, "Example: :as yuki@orbit.example") {
		t.Errorf("`:as` alone: %q", msgs[1].Text)
	}
	got := runConsoleScript(t, example+"\n", "--policy", orbit)
	if len(got) == 0 || got[0].To != "yuki@orbit.example" || !strings.Contains(got[0].Text, "L-1 is active") {
		t.Errorf("the example as given: %+v", got)
	}
}

// The simulated clock goes on from where the database's history stops, where the last console's
// clock stood (10 minutes after the lease began): a console started again with a --clock before it
// is refused in one sentence with one that works, and nothing changes.
func TestConsoleClockCannotGoBack(t *testing.T) {
	dir := t.TempDir()
	runConsoleAt(t, dir, "2026-11-30T16:00:00Z", "alice@acme.example: /gpu request 1 interactive for 30m\n:advance 10m\n")
	t.Setenv("QM_DATA_DIR", dir)
	t.Setenv("QM_POLICY", "")
	t.Setenv("QM_DATABASE_URL", "")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"console", "--clock", "2026-11-30T12:00:00Z"}, strings.NewReader("alice@acme.example: /gpu list\n"), &out, &errb)
	want := "--clock 2026-11-30T12:00:00Z is before the last change the database records (2026-11-30T16:10:00Z), and the simulated clock cannot go back; e.g. quartermaster console --clock 2026-11-30T16:10:00Z"
	if code != 2 || !strings.Contains(errb.String(), want) || out.Len() != 0 {
		t.Errorf("a console started before its history: exit %d, %q, output %q", code, errb.String(), out.String())
	}
	// From the example on, it goes on: the 30-minute lease has expired 35 minutes after it started.
	msgs := runConsoleAt(t, dir, "2026-11-30T16:10:00Z", ":advance 25m\nalice@acme.example: /gpu status L-1\n")
	if last := msgs[len(msgs)-1].Text; !strings.Contains(last, "L-1 for alice@acme.example: expired") {
		t.Errorf("after the restart: %+v", msgs)
	}
}

// A --clock written with a UTC offset is quoted as it was typed, and the history's end and the
// example that works are written at that offset, so someone who gives their own local time reads
// theirs back (and can paste the example), not the same instants in UTC.
func TestConsoleClockRefusalKeepsTheOffsetTyped(t *testing.T) {
	dir := t.TempDir()
	runConsoleAt(t, dir, "2026-11-30T16:00:00Z", "alice@acme.example: /gpu request 1 interactive for 30m\n:advance 10m\n")
	t.Setenv("QM_DATA_DIR", dir)
	t.Setenv("QM_POLICY", "")
	t.Setenv("QM_DATABASE_URL", "")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"console", "--clock", "2026-11-30T17:00:00+05:30"}, strings.NewReader("alice@acme.example: /gpu list\n"), &out, &errb)
	want := "--clock 2026-11-30T17:00:00+05:30 is before the last change the database records (2026-11-30T21:40:00+05:30), and the simulated clock cannot go back; e.g. quartermaster console --clock 2026-11-30T21:40:00+05:30"
	if code != 2 || !strings.Contains(errb.String(), want) || out.Len() != 0 {
		t.Errorf("a console started before its history at +05:30: exit %d, %q; want %q", code, errb.String(), want)
	}
	if msgs := runConsoleAt(t, dir, "2026-11-30T21:40:00+05:30", "alice@acme.example: /gpu status L-1\n"); len(msgs) == 0 || !strings.Contains(msgs[0].Text, "L-1 for alice@acme.example") {
		t.Errorf("the example as given: %+v", msgs)
	}
}

// A policy path that names no file, or a directory, is refused in one sentence that names the
// path, says what is wrong and shows a path that works, by every command that reads a policy.
func TestAMissingPolicyFileIsExplained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "quartermaster.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "check", missing}, missing + " does not exist"},
		{[]string{"console", "--policy", missing, "--db", "sqlite:" + filepath.Join(dir, "qm.db")}, missing + " does not exist"},
		{[]string{"serve", "--policy", missing, "--db", "sqlite:" + filepath.Join(dir, "qm.db")}, missing + " does not exist"},
		{[]string{"policy", "check", dir}, dir + " is a directory"},
	} {
		code, _, stderr := runQM(c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "docs/quartermaster.example.yaml") ||
			strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q; want one line saying %q and naming a policy that works", c.args, code, stderr, c.want)
		}
	}
}

// :now tells the simulated time in the policy's time zone, the one every message uses (the
// example policy's is America/Chicago: 15:00 UTC is 09:00 there).
func TestConsoleNowIsInThePolicysTimeZone(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, ":now\n")
	if len(msgs) != 1 || msgs[0].Text != "2026-11-30T09:00:00-06:00" {
		t.Fatalf(":now at 15:00 UTC on the example policy said %+v; want 2026-11-30T09:00:00-06:00", msgs)
	}
}

// In the console, an extension that waits for a budget owner, and its denial, print what they
// tell (the answer, the approval request, the decision) and nothing more: the edits of the
// lease's grant and expiry warning have no message in the console to change, so they are not
// printed again as if they were news.
func TestConsolePrintsNoEdits(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, "alice@acme.example: /gpu request 1 interactive 8h\n:advance 7h50m\n"+
		"alice@acme.example: /gpu extend L-1 1h\ndana@acme.example: /gpu deny L-2 not now\n")
	var toAlice []string
	for _, m := range msgs {
		if m.To == "alice@acme.example" {
			toAlice = append(toAlice, m.Text)
		}
	}
	if len(toAlice) != 4 || !strings.Contains(toAlice[0], "L-1 is active") || !strings.Contains(toAlice[1], "L-1 ends at") ||
		!strings.Contains(toAlice[2], "waits for approval as L-2") || !strings.Contains(toAlice[3], "L-2 was denied") {
		t.Errorf("alice was shown %q; want the grant, the warning, the answer to extend and the denial", toAlice)
	}
}

// On a policy with no directory (people known by single sign-on alone), the console's examples
// name nobody of the example policy: a bad line's example is one that works for anyone, as given.
func TestConsoleExamplesWithoutADirectory(t *testing.T) {
	t.Parallel()
	noDirectory := regexp.MustCompile(`(?m)^directory:\n(  - .*\n)*`).ReplaceAllString(orbitPolicy, "")
	p := filepath.Join(t.TempDir(), "nodirectory.yaml")
	if err := os.WriteFile(p, []byte(noDirectory), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs := runConsoleScript(t, "this is not a command\n:as\n", "--policy", p)
	if len(msgs) != 2 {
		t.Fatalf("got %+v", msgs)
	}
	_, example, ok := strings.Cut(msgs[0].Text, "Example: ")
	if !ok {
		t.Fatalf("a bad line's reply has no example: %q", msgs[0].Text)
	}
	for _, m := range msgs {
		if strings.Contains(m.Text, "acme.example") || strings.Contains(m.Text, "interactive") {
			t.Errorf("an example names the example policy: %q", m.Text)
		}
	}
	got := runConsoleScript(t, example+"\n", "--policy", p)
	if len(got) == 0 || got[0].To == "console" || strings.Contains(got[0].Text, "Example:") {
		t.Errorf("the example %q as given: %+v", example, got)
	}
}

// `quartermaster console --help` shows a command that names no class: it is read before any
// policy is, and works on every policy.
func TestConsoleHelpNamesNoClass(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := run(context.Background(), []string{"console", "--help"}, nil, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	cmds := regexp.MustCompile(`/gpu [^;\n]*`).FindAllString(out.String(), -1)
	if len(cmds) == 0 {
		t.Fatalf("the help shows no /gpu command: %s", out.String())
	}
	for _, cmd := range cmds {
		if c, err := commands.Parse(cmd); err != nil || c.Class != "" || c.Team != "" {
			t.Errorf("the help shows %q (%v), which names a class or a team only some policies have", cmd, err)
		}
	}
}

// The console's :as takes only people of the policy's directory: someone else is refused at once,
// with people it lists as the example, rather than every command after it.
func TestConsoleAsTakesOnlyPeopleOfTheDirectory(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, ":as nobody@x\n:as bob@acme.example\n/gpu quota\n")
	if len(msgs) != 2 || !strings.Contains(msgs[0].Text, `"nobody@x" is not in the policy's directory`) || !strings.Contains(msgs[0].Text, "Example: :as alice@acme.example") {
		t.Fatalf(":as nobody@x: %+v; want it refused with :as alice@acme.example as the example", msgs)
	}
	if msgs[1].To != "bob@acme.example" || !strings.Contains(msgs[1].Text, "Team") {
		t.Errorf(":as bob@acme.example, /gpu quota: %+v", msgs[1])
	}
}
