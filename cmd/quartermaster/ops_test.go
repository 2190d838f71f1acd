package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/testkit"
	"github.com/acme/quartermaster/migrations"
)

// orbitPolicy is a policy with its own organisation, classes, teams and people: nothing of the
// embedded example. %s is the class "bulk"'s Slurm partition line.
const orbitPolicy = `organization: Orbit Labs
timezone: Europe/Berlin
classes:
  - name: notebook
    sku: A10
    price_per_gpu_hour: 0.5
    max_gpus: 1
    max_duration: 6h
    idle_timeout: 0
    slurm: {partition: nb-short, gres: "gpu:a10"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {orbit.example/pool: nb}}
  - name: bulk
    sku: A100
    price_per_gpu_hour: 2
    max_gpus: 4
    max_duration: 48h
    idle_timeout: 1h
    slurm: {partition: bulk-a100, gres: "gpu:a100"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {orbit.example/pool: bulk}}
default_quota: {gpus: {notebook: 1, bulk: 0}, gpu_hours_per_week: 10}
teams:
  - name: comets
    idp_groups: [comets]
    budget_owners: [vera@orbit.example]
    quota: {gpus: {notebook: 2, bulk: 8}, gpu_hours_per_week: 200}
    data_classes: [open]
    storage: {path: /lab/comets}
exceptions:
  - name: big-spend
    when: request.gpu_hours > 100
directory:
  - {user: yuki@orbit.example, groups: [comets]}
  - {user: vera@orbit.example, groups: [comets]}
sim:
  nodes: [{name: nb, count: 1, class: notebook, gpus: 4}, {name: bk, count: 1, class: bulk, gpus: 8}]
`

func writeOrbit(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "orbit.yaml")
	if err := os.WriteFile(p, []byte(orbitPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// shellSettings are the settings a developer's shell may carry into the tests; TestMain unsets
// them for the whole test binary, so the parallel tests, which cannot set the environment, see
// none of them.
var shellSettings = []string{"QM_POLICY", "QM_DATABASE_URL", "QM_DATABASE_URL_FILE", "QM_DATA_DIR", "QM_BACKEND", "QM_HTTP_ADDR",
	"QM_LOG_FORMAT", "QM_LOG_LEVEL", "SLACK_BOT_TOKEN", "SLACK_BOT_TOKEN_FILE", "SLACK_SIGNING_SECRET",
	"SLACK_SIGNING_SECRET_FILE", "SLACK_APP_TOKEN", "SLACK_APP_TOKEN_FILE", "QM_SLURM_ACCOUNTING", "QM_SLURM_CONTAINER", "QM_DEFAULT_TEMPLATE"}

// clearEnv unsets the settings a developer's shell may carry into the test, and any an earlier
// serial test set.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, k := range shellSettings {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// TestServeRefusesWithoutPolicy (finding 1): serve with no policy refuses in one sentence that
// names QM_POLICY, --policy and --demo, and makes nothing (no database file); --demo starts the
// embedded example; a policy and --demo together are refused; the console keeps its default.
func TestServeRefusesWithoutPolicy(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Setenv("QM_DATA_DIR", dir)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--http", "127.0.0.1:0"}, nil, io.Discard, &stderr)
	msg := strings.TrimSpace(stderr.String())
	if code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "QM_POLICY") || !strings.Contains(msg, "--policy FILE") ||
		!strings.Contains(msg, "quartermaster serve --demo") {
		t.Fatalf("serve without a policy: exit %d, %q", code, msg)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused start left %d files in the data directory", len(entries))
	}

	stderr.Reset()
	code = run(context.Background(), []string{"serve", "--demo", "--policy", writeOrbit(t)}, nil, io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "drop one of them") {
		t.Errorf("--demo with a policy: exit %d, %q", code, stderr.String())
	}

	// --demo starts, on the example organisation; so does a policy file, on its own.
	for _, c := range []struct {
		args []string
		org  string
	}{
		{[]string{"--demo"}, `organization="Acme AI"`},
		{[]string{"--policy", writeOrbit(t)}, `organization="Orbit Labs"`},
	} {
		args := append([]string{"serve", "--http", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}, c.args...)
		if code, log := serveUntilServing(t, args); code != 0 || !strings.Contains(log, c.org) {
			t.Errorf("%v: exit %d\n%s", args, code, log)
		}
	}

	// The console still runs the embedded example with no policy at all.
	var out bytes.Buffer
	code = run(context.Background(), []string{"console", "--db", "sqlite:" + filepath.Join(dir, "console.db")},
		strings.NewReader("alice@acme.example: /gpu catalog\n"), &out, &stderr)
	if code != 0 || !strings.Contains(out.String(), "interactive") {
		t.Errorf("console on the embedded default: exit %d, %q", code, out.String())
	}
}

// TestHelpForEveryCommand (finding 3): `quartermaster VERB --help` (and -h, and a sub-verb's
// --help) exits 0 and names every flag of the verb and every environment variable the
// configuration table says applies to it.
func TestHelpForEveryCommand(t *testing.T) {
	t.Parallel()
	rows := confRows(docs.Configuration)
	if len(subcommands) < 7 {
		t.Fatalf("only %d subcommands registered", len(subcommands))
	}
	for name, sc := range subcommands {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}} {
			var out, errb bytes.Buffer
			code := run(context.Background(), args, nil, &out, &errb)
			help := out.String()
			if code != 0 || errb.Len() != 0 {
				t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
				continue
			}
			if !strings.Contains(help, "quartermaster "+name) {
				t.Errorf("%v does not name the command:\n%s", args, help)
			}
			if n := strings.Count(help, "usage:"); n != 1 {
				t.Errorf("%v says usage: %d times:\n%s", args, n, help)
			}
			if sc.flags != nil {
				sc.flags().VisitAll(func(f *flag.Flag) {
					if !strings.Contains(help, "-"+f.Name) {
						t.Errorf("%v does not name its flag --%s", args, f.Name)
					}
				})
			}
			for _, r := range rows {
				if !r.appliesTo(name) {
					continue
				}
				for _, e := range r.env {
					if !strings.Contains(help, e) {
						t.Errorf("%v does not name %s, which docs/configuration.md says applies to it", args, e)
					}
				}
				for _, f := range r.flags {
					if sc.flags != nil && sc.flags().Lookup(f) == nil {
						t.Errorf("docs/configuration.md says --%s applies to %s, which has no such flag", f, name)
					}
				}
			}
		}
	}
	for _, args := range [][]string{{"migrate", "up", "--help"}, {"templates", "render", "pytorch-ddp", "--help"},
		{"policy", "check", "--help"}, {"predict", "eval", "--help"}, {"serve", "help"}} {
		var out bytes.Buffer
		if code := run(context.Background(), args, nil, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "usage:") {
			t.Errorf("%v: exit %d\n%s", args, code, out.String())
		}
	}
	var out bytes.Buffer
	run(context.Background(), []string{"serve", "--help"}, nil, &out, io.Discard)
	for _, want := range []string{"--demo", "--http", "--policy", "--db", "QM_POLICY", "SLACK_BOT_TOKEN_FILE", "QM_LOG_FORMAT", "QM_HTTP_ADDR"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
}

// `quartermaster help COMMAND` is `quartermaster COMMAND --help`, as the node agent's `help
// COMMAND` is, not the list of commands; a word that is no command is refused in one sentence
// naming the nearest, with an example that works.
func TestHelpCommandShowsThatCommandsHelp(t *testing.T) {
	t.Parallel()
	for name := range subcommands {
		var want, got, errb bytes.Buffer
		run(context.Background(), []string{name, "--help"}, nil, &want, io.Discard)
		if code := run(context.Background(), []string{"help", name}, nil, &got, &errb); code != 0 || got.String() != want.String() || errb.Len() != 0 {
			t.Errorf("help %s: exit %d, stderr %q; its output is not %s --help's:\n%s", name, code, errb.String(), name, got.String())
		}
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"help", "serv"}, nil, &out, &errb)
	msg := strings.TrimSpace(errb.String())
	if code != 2 || out.Len() != 0 || strings.Count(msg, "\n") != 0 ||
		!strings.Contains(msg, `"serv" is not a quartermaster command`) || !strings.Contains(msg, "quartermaster help serve") {
		t.Errorf("help serv: exit %d, stdout %q, stderr %q", code, out.String(), msg)
	}
}

// TestHelpListsOnlyFlagsTheCommandReads: every flag `quartermaster VERB --help` lists is one
// docs/configuration.md says applies to VERB, so no command offers a flag it never reads:
// agent-token reads only --db (no policy, no backend), discord register only --policy of the
// common flags, report no --backend.
func TestHelpListsOnlyFlagsTheCommandReads(t *testing.T) {
	t.Parallel()
	rows := confRows(docs.Configuration)
	for name, sc := range subcommands {
		if sc.flags == nil {
			continue
		}
		sc.flags().VisitAll(func(f *flag.Flag) {
			for _, r := range rows {
				if slices.Contains(r.flags, f.Name) && r.appliesTo(name) {
					return
				}
			}
			t.Errorf("quartermaster %s --help lists --%s, which docs/configuration.md does not say %s reads", name, f.Name, name)
		})
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"agent-token", "--help"}, nil, &out, io.Discard); code != 0 ||
		strings.Contains(out.String(), "-backend") || strings.Contains(out.String(), "-policy") || !strings.Contains(out.String(), "-db") {
		t.Errorf("agent-token --help: exit %d\n%s\nwant --db and neither --backend nor --policy", code, out.String())
	}
}

// TestVersion: quartermaster version names the version, the commit and the Go version.
func TestVersion(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := run(context.Background(), []string{"version"}, nil, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !regexp.MustCompile(`(?m)^quartermaster \S+\ncommit:  \S+\ngo:      go1\.\d+`).MatchString(out.String()) {
		t.Errorf("version printed %q", out.String())
	}
	out.Reset()
	run(context.Background(), []string{"--version"}, nil, &out, io.Discard)
	if !strings.HasPrefix(out.String(), "quartermaster ") {
		t.Errorf("--version printed %q", out.String())
	}
}

// TestMigrateFlagsAfterTheVerb (finding 6): the usage's own example works with the flag after
// the verb; status prints a table with a line per migration; down says what it rolled back.
func TestMigrateFlagsAfterTheVerb(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "qm.db")
	db := "sqlite:" + file
	var out, errb bytes.Buffer
	// A file that is not there is not a database to list (TestMigrateStatusOnAMissingSQLiteFileCreatesNothing);
	// an empty one has every migration pending.
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"migrate", "status", "--db", db}, nil, &out, &errb); code != 0 {
		t.Fatalf("migrate status --db: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "VERSION  MIGRATION") || !strings.Contains(out.String(), "pending") || strings.Contains(out.String(), "{") {
		t.Errorf("status before up:\n%s", out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"migrate", "up", "--db", db}, nil, &out, &errb); code != 0 {
		t.Fatalf("migrate up --db: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "applied") {
		t.Errorf("up: %q", out.String())
	}
	out.Reset()
	run(context.Background(), []string{"migrate", "--db", db, "status"}, nil, &out, &errb)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 || strings.Contains(out.String(), "pending") || !regexp.MustCompile(`^1\s+00001_\S+\.sql\s+applied\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`).MatchString(lines[1]) {
		t.Errorf("status after up:\n%s", out.String())
	}
	if !strings.HasSuffix(lines[len(lines)-1], "migrations applied") {
		t.Errorf("status has no summary line: %q", lines[len(lines)-1])
	}
	out.Reset()
	if code := run(context.Background(), []string{"migrate", "down", "--db=" + db}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "rolled back 0") {
		t.Errorf("down: exit %d, %q %s", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"migrate", "sideways", "--db", db}, nil, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), `"sideways" is not a migrate command; migrate takes up, down or status, e.g. quartermaster migrate status --db `+db) {
		t.Errorf("a bad verb: exit %d, %q", code, errb.String())
	}
}

// TestAnOldBinaryRefusesADatabaseANewerOneMigrated: rolled back by installing the old binary
// without `migrate down`, `migrate status` lists the migration it does not know and says so, and
// `serve` and `migrate up` refuse to run on that schema, naming the migration, instead of starting.
func TestAnOldBinaryRefusesADatabaseANewerOneMigrated(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "qm.db")
	db := "sqlite:" + file
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "up", "--db", db}, nil, &out, &errb); code != 0 {
		t.Fatalf("migrate up: exit %d: %s", code, errb.String())
	}
	// What a newer binary's migration leaves behind ("sqlite" is the store's driver).
	sdb, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sdb.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (77001, 1)")
	if cerr := sdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(context.Background(), []string{"migrate", "status", "--db", db}, nil, &out, &errb); code != 0 {
		t.Fatalf("migrate status: exit %d: %s", code, errb.String())
	}
	if !regexp.MustCompile(`(?m)^77001\s+\(not in this binary\)\s+unknown\s`).MatchString(out.String()) ||
		!strings.Contains(out.String(), "newer quartermaster") {
		t.Errorf("status does not show the migration this binary does not know:\n%s", out.String())
	}
	pol := writeOrbit(t)
	for _, args := range [][]string{{"migrate", "up", "--db", db}, {"serve", "--policy", pol, "--db", db, "--http", "127.0.0.1:0"}} {
		errb.Reset()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code := run(ctx, args, nil, io.Discard, &errb)
		cancel()
		if code == 0 || !strings.Contains(errb.String(), "77001") || !strings.Contains(errb.String(), "newer quartermaster") {
			t.Errorf("%s on a database a newer binary migrated: exit %d, %q; want a refusal naming migration 77001", args[0]+" "+args[1], code, errb.String())
		}
	}
}

// TestTemplatesRenderFollowsThePolicy (finding 5): render takes --policy (and QM_POLICY), any
// class of that policy with its partition and GRES, that policy's team and storage, and passes no
// --account unless QM_SLURM_ACCOUNTING says so (docs/slurm.md).
func TestTemplatesRenderFollowsThePolicy(t *testing.T) {
	clearEnv(t)
	orbit := writeOrbit(t)
	render := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"templates", "render"}, args...), nil, &out, &errb)
		return out.String(), errb.String(), code
	}
	script, errs, code := render("cuda-smoke", "--policy", orbit, "--class", "bulk", "--backend", "slurm")
	if code != 0 {
		t.Fatalf("render --policy: exit %d: %s", code, errs)
	}
	for _, want := range []string{"--partition=bulk-a100", "gpu:a100", "comets", "/lab/comets"} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %q:\n%s", want, script)
		}
	}
	for _, unwanted := range []string{"--account", "vision", "interactive", "train", "l40s", "h100"} {
		if strings.Contains(script, unwanted) {
			t.Errorf("the script names %q, which is not in the Orbit policy:\n%s", unwanted, script)
		}
	}
	t.Setenv("QM_POLICY", orbit)
	manifest, errs, code := render("--backend", "kubernetes", "cuda-smoke", "--class", "notebook")
	if code != 0 || !strings.Contains(manifest, `"orbit.example/pool": "nb"`) {
		t.Errorf("QM_POLICY and --class notebook: exit %d %s\n%s", code, errs, manifest)
	}
	for _, on := range []string{"true", "yes", "On"} {
		t.Setenv("QM_SLURM_ACCOUNTING", on)
		script, _, _ = render("cuda-smoke", "--backend", "slurm")
		if !strings.Contains(script, "--account=comets") {
			t.Errorf("with QM_SLURM_ACCOUNTING=%s, no --account=comets:\n%s", on, script)
		}
	}
	// A value that is neither is refused, not read as off.
	t.Setenv("QM_SLURM_ACCOUNTING", "maybe")
	if _, errs, code := render("cuda-smoke", "--backend", "slurm"); code != 2 || !strings.Contains(errs, `QM_SLURM_ACCOUNTING="maybe" is neither true nor false; e.g. QM_SLURM_ACCOUNTING=true`) {
		t.Errorf("QM_SLURM_ACCOUNTING=maybe: exit %d, %q", code, errs)
	}
	t.Setenv("QM_SLURM_ACCOUNTING", "true")
	_, errs, code = render("cuda-smoke", "--class", "train")
	if code != 2 || !strings.Contains(errs, `"train" is not a class of`) || !strings.Contains(errs, "notebook, bulk") {
		t.Errorf("a class of another policy: exit %d, %q", code, errs)
	}
}

// TestIdleTimeoutZeroNeverReclaims (finding 8): a class with idle_timeout: 0 loads, and a lease of
// it sitting idle for hours is never warned nor reclaimed.
func TestIdleTimeoutZeroNeverReclaims(t *testing.T) {
	t.Parallel()
	script := "yuki@orbit.example: /gpu request 1 notebook for 5h\n:util L-1 0\n:advance 4h\nyuki@orbit.example: /gpu status L-1\n"
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"console", "--policy", writeOrbit(t), "--db", "sqlite:" + filepath.Join(t.TempDir(), "qm.db"),
		"--json", "--clock", "2026-11-30T09:00:00Z"}, strings.NewReader(script), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	if strings.Contains(strings.ToLower(text), "idle") && strings.Contains(text, "Keep") || strings.Contains(text, "reclaimed") {
		t.Errorf("an idle_timeout: 0 lease was warned or reclaimed:\n%s", text)
	}
	var last struct{ Text string }
	lines := strings.Split(strings.TrimSpace(text), "\n")
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if !strings.Contains(last.Text, "active") {
		t.Errorf("after 4 idle hours L-1 is not active: %q", last.Text)
	}
}

// promtoolCheck runs promtool check metrics on an exposition; it fails the test (skips without
// promtool, except under CI=true).
func promtoolCheck(t *testing.T, exposition string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (Debian package prometheus); scripts/test.sh installs it")
		}
		t.Skip("promtool is not installed; apt-get install prometheus")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func getBody(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeMetricsAndLogs (finding 4, logs): a Slack command through the running service is
// logged in one JSON line with verb, user, outcome and duration and no secret, and counted on
// /metrics with its acknowledgement, the grant and the running GPUs; /metrics passes promtool.
func TestServeMetricsAndLogs(t *testing.T) {
	t.Parallel()
	api := newSlackAPI(t)
	var logs testkit.SyncBuffer
	log, err := newTestLogger(&logs)
	if err != nil {
		t.Fatal(err)
	}
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-very-secret-bot", SigningSecret: "shh-signing-secret", APIURL: api.URL}}
	o.app.logger = log
	s := startServe(t, o)
	if code := signedCommand(t, s.url, "shh-signing-secret", "request 1 interactive for 2h", "T9", api.URL+"/response/9"); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	if a := <-api.answers; !strings.Contains(a, "is active") {
		t.Fatalf("answer %q", a)
	}
	signedCommand(t, s.url, "shh-signing-secret", "frobnicate", "T10", api.URL+"/response/10")
	<-api.answers
	// A node agent with a token the service does not know is refused, and counted where an
	// operator can alert on it.
	req, _ := http.NewRequest(http.MethodPost, s.url+"/api/v1/agent/reports", strings.NewReader(`{"version":1}`))
	req.Header.Set("Authorization", "Bearer qmagent_not-a-token")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a report with an unknown token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	code, body := getBody(t, s.url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", code)
	}
	for _, want := range []string{
		`quartermaster_commands_total{outcome="ok",verb="request"} 1`,
		`quartermaster_commands_total{outcome="error",verb="unknown"} 1`,
		`quartermaster_chat_ack_duration_seconds_count{kind="command",platform="slack",transport="http"} 2`,
		`quartermaster_grants_total{class="interactive"} 1`,
		`quartermaster_running_gpus{class="interactive"} 1`,
		`quartermaster_queue_depth{class="train"} 0`,
		`quartermaster_approvals_pending 0`,
		`quartermaster_outbox_pending `,
		`quartermaster_outbox_oldest_seconds `,
		`quartermaster_backend_calls_total{backend="sim",op="start"} 1`,
		`quartermaster_build_info{`,
		`quartermaster_agent_reports_total{outcome="unauthorized"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	promtoolCheck(t, body)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	var commandLines int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		if rec["msg"] == "command" {
			commandLines++
			if rec["user"] != "alice@acme.example" || rec["duration"] == nil || (rec["verb"] != "request" && rec["verb"] != "unknown") {
				t.Errorf("command line %v", rec)
			}
			if rec["verb"] == "request" && rec["outcome"] != "ok" || rec["verb"] == "unknown" && rec["outcome"] != "error" {
				t.Errorf("command outcome %v", rec)
			}
		}
	}
	if commandLines != 2 {
		t.Errorf("%d command lines for 2 commands:\n%s", commandLines, logs.String())
	}
	for _, secret := range []string{"xoxb-very-secret-bot", "shh-signing-secret"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds a secret: %s", secret)
		}
	}
}

// TestReadyzFollowsTheDatabase (finding 4): /readyz is 200 with the database and backend named,
// turns 503 naming the database within 3 s of the PostgreSQL server going away (while /healthz
// stays 200), and 200 again once it is back. The server is the test's own, on its own port.
func TestReadyzFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	pg := startPrivatePostgres(t)
	o := serveOptions{}
	o.app.flags.db = pg.URL()
	s := startServe(t, o)
	code, body := getBody(t, s.url+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "database postgres: ok") || !strings.Contains(body, "backend sim: ok") {
		t.Fatalf("/readyz with everything up: %d %q", code, body)
	}
	pg.Stop()
	took, ok := waitFor(3*time.Second, func() bool { c, _ := getBody(t, s.url+"/readyz"); return c == http.StatusServiceUnavailable })
	if !ok {
		t.Fatalf("/readyz still not 503 %v after the database went away", took)
	}
	code, body = getBody(t, s.url+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "database postgres: failed") || !strings.Contains(body, "backend sim: ok") {
		t.Errorf("/readyz without the database: %d %q", code, body)
	}
	// It says so in the words docs/operations.md quotes, this server's address for the example's.
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("(?m)^database postgres: failed: .*$").Find(doc)
	if quoted == nil {
		t.Fatal("docs/operations.md quotes no /readyz line database postgres: failed: …")
	}
	if want := strings.ReplaceAll(string(quoted), "127.0.0.1:5432", fmt.Sprintf("127.0.0.1:%d", pg.Port)); !strings.Contains(body, want+"\n") {
		t.Errorf("/readyz without the database says\n%s\nnot the line docs/operations.md quotes:\n%s", body, want)
	}
	if code, _ := getBody(t, s.url+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz without the database: %d; liveness must not depend on it", code)
	}
	t.Logf("/readyz turned 503 %v after the database stopped", took.Round(10*time.Millisecond))
	pg.Start()
	if took, ok := waitFor(10*time.Second, func() bool { c, _ := getBody(t, s.url+"/readyz"); return c == http.StatusOK }); !ok {
		t.Fatalf("/readyz not 200 %v after the database came back", took)
	}
}

func newTestLogger(w io.Writer) (*slog.Logger, error) { return config.NewLogger(w, "json", "info") }

// serveUntilServing runs the command line until the service logs that it serves, then stops it,
// and returns the exit code and the log.
func serveUntilServing(t *testing.T, args []string) (int, string) {
	t.Helper()
	var log testkit.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, nil, io.Discard, &log) }()
	for {
		select {
		case code := <-done:
			return code, log.String()
		case <-time.After(20 * time.Millisecond):
			if strings.Contains(log.String(), "msg=serving") {
				cancel()
				return <-done, log.String()
			}
		}
	}
}

// A reconcile interval that is not a positive duration is refused at start, in one sentence with
// an example, rather than quietly replaced by the default; the example is the default
// docs/configuration.md gives, not another value an operator would copy.
func TestServeRefusesABadReconcileInterval(t *testing.T) {
	def := ""
	for _, r := range confRows(docs.Configuration) {
		if slices.Contains(r.env, "QM_RECONCILE_INTERVAL") {
			def = plain(r.def)
		}
	}
	if def == "" {
		t.Fatal("docs/configuration.md gives no default for QM_RECONCILE_INTERVAL")
	}
	for _, v := range []string{"-5s", "0", "garbage"} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		t.Setenv("QM_RECONCILE_INTERVAL", v)
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"serve", "--demo", "--http", "127.0.0.1:0"}, nil, io.Discard, &stderr)
		want := fmt.Sprintf("QM_RECONCILE_INTERVAL=%q is not a positive duration; set a duration with its unit, e.g. QM_RECONCILE_INTERVAL=%s (the default)", v, def)
		if code != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("QM_RECONCILE_INTERVAL=%s: exit %d, %q", v, code, stderr.String())
		}
	}
}

// TestServeRefusesAContainerRuntimeOrDefaultTemplateItCannotUse: QM_SLURM_CONTAINER other than
// apptainer or pyxis, and a QM_DEFAULT_TEMPLATE the catalog does not have, are refused at start in
// one sentence with an example, instead of a service that starts ready and then fails every lease
// it submits; the values the docs name start.
func TestServeRefusesAContainerRuntimeOrDefaultTemplateItCannotUse(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"QM_SLURM_CONTAINER", "docker", `QM_SLURM_CONTAINER="docker" is neither apptainer nor pyxis; e.g. QM_SLURM_CONTAINER=apptainer`},
		{"QM_SLURM_CONTAINER", "Singularity", `QM_SLURM_CONTAINER="Singularity" is neither apptainer nor pyxis`},
		{"QM_DEFAULT_TEMPLATE", "jupyter-notebook", `QM_DEFAULT_TEMPLATE="jupyter-notebook" is not a template of the catalog (quartermaster templates list names them); e.g. QM_DEFAULT_TEMPLATE=ssh-shell`},
	} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		t.Setenv(c.name, c.value)
		// A service that starts anyway is stopped after a while, and fails the test.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var stderr testkit.SyncBuffer
		code := run(ctx, []string{"serve", "--policy", writeOrbit(t), "--http", "127.0.0.1:0"}, nil, io.Discard, &stderr)
		cancel()
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s=%s: exit %d, %q; want exit 2 and %q", c.name, c.value, code, stderr.String(), c.want)
		}
	}
	for _, c := range [][2]string{{"QM_SLURM_CONTAINER", "pyxis"}, {"QM_SLURM_CONTAINER", "apptainer"}, {"QM_DEFAULT_TEMPLATE", "jupyter-dataset"}} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		t.Setenv(c[0], c[1])
		if code, log := serveUntilServing(t, []string{"serve", "--policy", writeOrbit(t), "--http", "127.0.0.1:0"}); code != 0 {
			t.Errorf("%s=%s: exit %d\n%s", c[0], c[1], code, log)
		}
	}
}

// TestEveryMigrationSaysWhatItsDownLoses: an operator rolling back runs `migrate down` once per
// migration of the upgrade; docs/operations.md must say, for every migration the binary carries,
// what rolling it back loses, so a migration added later fails here until its row is written.
func TestEveryMigrationSaysWhatItsDownLoses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\d+_[a-z0-9_]+\\.sql)` \\| ([^|]*) \\|$").FindAllStringSubmatch(string(doc), -1) {
		rows[m[1]] = strings.TrimSpace(m[2])
	}
	for _, dialect := range []string{"postgres", "sqlite"} {
		files, err := fs.Glob(migrations.FS, dialect+"/*.sql")
		if err != nil || len(files) == 0 {
			t.Fatalf("%s migrations: %v %v", dialect, files, err)
		}
		for _, f := range files {
			if name := path.Base(f); rows[name] == "" {
				t.Errorf("docs/operations.md does not say what rolling back %s (%s) loses", name, dialect)
			}
		}
	}
}

// The counters the operations guide says to alert on are exported at zero from the start, so that
// an alert on their rate fires at the first failure rather than missing it (a series that appears
// at 1 has no rate): the scheduler's errors for each call the backend makes, the node agents'
// refused reports, and the wait predictions that missed their bound.
func TestAlertedCountersStartAtZero(t *testing.T) {
	t.Parallel()
	s := startServe(t, serveOptions{})
	code, body := getBody(t, s.url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", code)
	}
	for _, want := range []string{
		`quartermaster_backend_errors_total{backend="sim",op="start"} 0`,
		`quartermaster_backend_errors_total{backend="sim",op="stop"} 0`,
		`quartermaster_backend_calls_total{backend="sim",op="start"} 0`,
		`quartermaster_agent_reports_total{outcome="unauthorized"} 0`,
		`quartermaster_agent_reports_total{outcome="wrong_node"} 0`,
		`quartermaster_agent_reports_total{outcome="accepted"} 0`,
		`quartermaster_wait_predictions_total{class="interactive",within="false"} 0`,
		`quartermaster_wait_predictions_total{class="train",within="true"} 0`,
		`quartermaster_leases_ended_total{class="train",state="failed"} 0`,
		`quartermaster_leases_ended_total{class="interactive",state="reclaimed"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("a fresh service's /metrics lacks %s", want)
		}
	}
	promtoolCheck(t, body)
}

// On the command line, a mistyped template name or parameter is answered with a shell command
// that works, not a chat command that a shell cannot run.
func TestTemplatesErrorsShowShellCommands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"templates", "show", "pytorch-dp"}, `did you mean pytorch-ddp? e.g. quartermaster templates show pytorch-ddp`},
		{[]string{"templates", "render", "pytorch-dp"}, `did you mean pytorch-ddp? e.g. quartermaster templates render pytorch-ddp`},
		// The flags typed are kept.
		{[]string{"templates", "show", "pytorch-dp", "--policy", "../../docs/quartermaster.example.yaml"}, `did you mean pytorch-ddp? e.g. quartermaster templates show pytorch-ddp --policy ../../docs/quartermaster.example.yaml`},
		{[]string{"templates", "render", "pytorch-ddp", "--backend", "slurm", "badkey=1"}, `; e.g. quartermaster templates render pytorch-ddp --backend slurm nnodes=2 script=train.py`},
		{[]string{"templates", "show", "zzzz"}, `(quartermaster templates list shows what each is); e.g. quartermaster templates show `},
		{[]string{"templates", "render", "pytorch-ddp", "badkey=1"}, `; e.g. quartermaster templates render pytorch-ddp nnodes=2 script=train.py`},
		// A lease the template cannot run: the refusal's example is the render that works.
		// One node's worth at most: the largest node, and a render that fits it.
		{[]string{"templates", "render", "jupyterlab", "--gpus", "16"}, `the largest node here holds 8 GPUs (class train), fewer than the 16 asked for; e.g. quartermaster templates render jupyterlab --gpus 8`},
		// More GPUs than a node of the class holds (the simulated cluster's 8), and fewer nodes.
		{[]string{"templates", "render", "pytorch-ddp", "--gpus", "16", "nnodes=1"}, `nnodes=1 is fewer than the 2 whole nodes the lease holds; e.g. quartermaster templates render pytorch-ddp --gpus 16 nnodes=2`},
	} {
		code, _, stderr := runQM(c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "/gpu") {
			t.Errorf("%v: exit %d, %q; want %q and no chat command", c.args, code, stderr, c.want)
		}
	}
	// The example it gives works.
	if code, out, stderr := runQM("templates", "render", "pytorch-ddp", "nnodes=2", "script=train.py"); code != 0 || out == "" {
		t.Errorf("the example: exit %d, %s", code, stderr)
	}
	if code, out, stderr := runQM("templates", "render", "jupyterlab", "--gpus", "8"); code != 0 || out == "" {
		t.Errorf("the example: exit %d, %s", code, stderr)
	}
}

// A SQLite URL whose directory does not exist is refused with the path, what is missing and a
// URL that works (a file in the nearest directory that exists), instead of SQLite's "unable to open database file (14)".
func TestASQLiteFileInAMissingDirectoryIsExplained(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "no", "such")
	for _, args := range [][]string{
		{"migrate", "up", "--db", "sqlite:" + filepath.Join(dir, "qm.db")},
		{"console", "--db", "sqlite:" + filepath.Join(dir, "qm.db")},
	} {
		code, _, stderr := runQM(args...)
		if code == 0 || !strings.Contains(stderr, "the directory "+dir+" does not exist") ||
			!strings.Contains(stderr, "--db sqlite:"+filepath.Join(tmp, "qm.db")) || strings.Contains(stderr, "(14)") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestTemplatesRenderPicksTheClassChatWould: with no --class, a multi-node template that no class
// grants without approval renders for the class /gpu template and /gpu submit would take (the
// class whose nodes hold its GPUs per node), not for the first class of the catalog: docs/slurm.md
// checks `templates render pytorch-ddp --backend slurm nnodes=2` with sbatch --test-only.
func TestTemplatesRenderPicksTheClassChatWould(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"templates", "render", "pytorch-ddp", "--backend", "slurm", "nnodes=2"}, nil, &out, &errb); code != 0 {
		t.Fatalf("render: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"--partition=train\n", "--gres=gpu:h100:8\n", "--nodes=2\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the script lacks %q:\n%s", strings.TrimSpace(want), out.String())
		}
	}
	// A class whose nodes hold fewer GPUs than the template's default (4 L40S): without --gpus,
	// as many as a node holds, as /gpu template shows, not a refusal of GPUs nobody asked for.
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"templates", "render", "pytorch-ddp", "--class", "interactive", "--backend", "slurm"}, nil, &out, &errb); code != 0 {
		t.Fatalf("render --class interactive: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "--gres=gpu:l40s:4\n") {
		t.Errorf("pytorch-ddp on class interactive:\n%s", out.String())
	}
	// More GPUs than a node holds: on whole nodes, as the service places them.
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"templates", "render", "pytorch-ddp", "--gpus", "16", "--backend", "slurm"}, nil, &out, &errb); code != 0 {
		t.Fatalf("render --gpus 16: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"--gres=gpu:h100:8\n", "--nodes=2\n", "QM_NNODES=2 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("pytorch-ddp --gpus 16 lacks %q:\n%s", want, out.String())
		}
	}
}

// A multi-node template asked for on two nodes renders, with no --class, for a class that has two
// nodes, as /gpu submit would run it: on a policy whose largest node (7 MIG slices) is its class's
// only node, jax nnodes=2 renders on two H200 nodes of 6.
func TestTemplatesRenderPicksAClassWithEnoughNodes(t *testing.T) {
	clearEnv(t)
	var out, errb bytes.Buffer
	args := []string{"templates", "render", "jax", "--policy", "../../commands/testdata/kolkata.yaml", "--backend", "slurm", "nnodes=2"}
	if code := run(context.Background(), args, nil, &out, &errb); code != 0 {
		t.Fatalf("render: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"--partition=h200-x6\n", "--gres=gpu:6\n", "--nodes=2\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the script lacks %q:\n%s", strings.TrimSpace(want), out.String())
		}
	}
}

// TestTemplatesRenderSizesEachClassByItsOwnNodes: with no --class on a cluster of 4- and 6-GPU
// nodes, pytorch-ddp nnodes=2 renders as /gpu submit places it: 4 GPUs on each of 2 nodes of the
// class that grants those 8 at once, not 6 per node on a class where 12 need approval.
func TestTemplatesRenderSizesEachClassByItsOwnNodes(t *testing.T) {
	clearEnv(t)
	var out, errb bytes.Buffer
	args := []string{"templates", "render", "pytorch-ddp", "--policy", "../../commands/testdata/mixednodes.yaml", "--backend", "slurm", "nnodes=2"}
	if code := run(context.Background(), args, nil, &out, &errb); code != 0 {
		t.Fatalf("render: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"--partition=amd-big\n", "--gres=gpu:mi250x:4\n", "--nodes=2\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the script lacks %q:\n%s", strings.TrimSpace(want), out.String())
		}
	}
}

// With --gpus beyond any node and no nnodes, a multi-node template renders on the whole nodes of a
// class that has enough of them (jax --gpus 12: three nodes of 4, not the one node of 6), as
// /gpu submit runs it; where no class has enough, it is refused as /gpu submit refuses it, saying
// how many nodes the GPUs take, instead of a script for nodes the cluster does not have.
func TestTemplatesRenderSpreadsManyGPUsOverAClassWithEnoughNodes(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	args := []string{"templates", "render", "jax", "--policy", "../../commands/testdata/orbit.yaml", "--backend", "slurm", "--gpus", "12"}
	if code := run(context.Background(), args, nil, &out, &errb); code != 0 {
		t.Fatalf("render: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"--partition=quad\n", "--gres=gpu:a100:4\n", "--nodes=3\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the script lacks %q:\n%s", strings.TrimSpace(want), out.String())
		}
	}
	out.Reset()
	errb.Reset()
	args[len(args)-1] = "20"
	if code := run(context.Background(), args, nil, &out, &errb); code == 0 {
		t.Fatalf("render --gpus 20 on 4 nodes of 4: printed\n%s", out.String())
	}
	for _, want := range []string{"20 GPUs takes 5 nodes of class quad", "quartermaster templates render jax --policy ../../commands/testdata/orbit.yaml --backend slurm --gpus 16 nnodes=4"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("refusal lacks %q: %s", want, errb.String())
		}
	}
}

// The list of commands (`quartermaster help`) writes each flag a command's line names as that
// command's own usage does: optional, in brackets, where the usage has it optional, so that the
// list does not make a flag with a default (report's --week, --format) look required.
func TestHelpListWritesFlagsAsEachCommandsUsage(t *testing.T) {
	t.Parallel()
	var list bytes.Buffer
	if code := run(context.Background(), []string{"help"}, nil, &list, io.Discard); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	flagWord := regexp.MustCompile(`(\[?)--([a-z-]+)`)
	for name := range subcommands {
		var line string
		for _, l := range strings.Split(list.String(), "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				line = l
			}
		}
		var help bytes.Buffer
		run(context.Background(), []string{name, "--help"}, nil, &help, io.Discard)
		usage, _, _ := strings.Cut(help.String(), "flags:")
		for _, m := range flagWord.FindAllStringSubmatch(line, -1) {
			optional := strings.Contains(usage, "[--"+m[2])
			if (m[1] == "[") != optional {
				t.Errorf("help lists %s with --%s written %q, but %s --help's usage has it optional=%v:\n%s", name, m[2], m[0], name, optional, line)
			}
		}
	}
}
