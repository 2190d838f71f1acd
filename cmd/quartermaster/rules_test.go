package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
)

// rulesFile holds the alerting rules docs/operations.md points operators to; rulesTestFile their
// promtool unit tests (promtool test rules).
const (
	rulesFile     = "../../deploy/prometheus/quartermaster.rules.yml"
	rulesTestFile = "../../deploy/prometheus/quartermaster.rules.test.yml"
)

// agentRules is the group of rulesFile whose rules read the node agents' /metrics; every other
// group reads serve's.
const agentRules = "quartermaster-agent"

var (
	ruleMetric  = regexp.MustCompile(`\b(quartermaster_[a-z0-9_]+)(\{[^}]*\})?`)
	ruleMatcher = regexp.MustCompile(`(\w+)\s*(=~|=)\s*"([^"]*)"`)
)

// oneGPU is a node of one GPU that reads, enough for an agent to export its own metrics.
type oneGPU struct{}

func (oneGPU) Driver() string { return "550.54.15" }
func (oneGPU) GPUs() []agent.GPUInfo {
	return []agent.GPUInfo{{Index: 0, UUID: "GPU-0", Name: "NVIDIA A100-SXM4-40GB", BusID: "0000:07:00.0"}}
}
func (oneGPU) Sample(context.Context) ([]report.GPU, error) {
	util := 50.0
	return []report.GPU{{Index: 0, UUID: "GPU-0", Util: &util}}, nil
}
func (oneGPU) Topology(context.Context) (report.Topology, error) {
	return report.Topology{GPUs: []report.TopologyGPU{{Index: 0, UUID: "GPU-0"}}}, nil
}
func (oneGPU) Close() error { return nil }

// agentScrape is the /metrics of an agent that reports to a service, has read its GPUs once and
// sent the service a report, which the service answered with the node's clock skew.
func agentScrape(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		skew := 0.004
		_ = json.NewEncoder(w).Encode(report.Response{Accepted: true, ClockSkew: &skew})
	}))
	t.Cleanup(srv.Close)
	a, err := agent.New(agent.Config{Node: "gpu-01", Devices: oneGPU{}, Service: srv.URL, Token: "qma_rules"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Outbox().Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := a.Metrics().Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestShippedAlertRulesReadExportedMetrics: the alerting rules in deploy/prometheus pass
// promtool check rules and their unit tests (promtool test rules), and every metric (and every
// label value) their expressions read is one the process they watch exports, so no rule watches a
// series that never exists: a rule of the quartermaster-agent group reads an agent's /metrics
// (one that reports to a service), every other rule serve's, after a single chat command. The
// agents' rules are there: an agent that cannot reach the service, one that dropped reports, one
// whose reports the service refused as bad, a GPU it cannot read, and readings that fail.
func TestShippedAlertRulesReadExportedMetrics(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatalf("the alerting rules docs/operations.md names: %v", err)
	}
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(src, &file); err != nil {
		t.Fatal(err)
	}

	// A node agent's token: the gauges by node have a series for it.
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	if code, _, stderr := runQM("agent-token", "create", "gpu-01", "--db", db); code != 0 {
		t.Fatalf("agent-token create: %d %s", code, stderr)
	}
	api := newSlackAPI(t)
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-rules", SigningSecret: "rules-secret", APIURL: api.URL}}
	o.app.flags.db = db
	s := startServe(t, o)
	if code := signedCommand(t, s.url, "rules-secret", "request 1 interactive for 2h", "T1", api.URL+"/response/1"); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	<-api.answers
	code, body := getBody(t, s.url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", code)
	}

	scrapes := map[bool]string{false: body, true: agentScrape(t)}
	exporter := map[bool]string{false: "serve's /metrics", true: "the agent's /metrics"}
	rules := 0
	agentReads := map[string]bool{}
	for _, g := range file.Groups {
		isAgent := g.Name == agentRules
		body, exports := scrapes[isAgent], exporter[isAgent]
		for _, r := range g.Rules {
			rules++
			refs := ruleMetric.FindAllStringSubmatch(r.Expr, -1)
			if len(refs) == 0 {
				t.Errorf("rule %s reads no quartermaster metric: %s", r.Alert, r.Expr)
			}
			for _, ref := range refs {
				name := ref[1]
				family := name
				if !strings.Contains(body, "# TYPE "+name+" ") {
					family = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
					if family == name || !strings.Contains(body, "# TYPE "+family+" histogram") {
						t.Errorf("rule %s reads %s, which %s does not export", r.Alert, name, exports)
						continue
					}
				}
				if isAgent {
					agentReads[name] = true
				}
				for _, m := range ruleMatcher.FindAllStringSubmatch(ref[2], -1) {
					values := []string{m[3]}
					if m[2] == "=~" {
						values = strings.Split(m[3], "|")
					}
					for _, v := range values {
						if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{[^}]*\b` + regexp.QuoteMeta(m[1]+`="`+v+`"`)).MatchString(body) {
							t.Errorf("rule %s reads %s{%s=%q}, which %s does not export", r.Alert, name, m[1], v, exports)
						}
					}
				}
			}
		}
	}
	if rules == 0 {
		t.Fatalf("%s holds no rules", rulesFile)
	}
	for _, m := range []string{"quartermaster_agent_reports_queued", "quartermaster_agent_reports_dropped_total",
		"quartermaster_agent_gpus_unread", "quartermaster_agent_collect_errors_total", "quartermaster_agent_reports_refused_total",
		"quartermaster_agent_clock_skew_seconds"} {
		if !agentReads[m] {
			t.Errorf("no rule of group %s reads %s", agentRules, m)
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (Debian package prometheus); scripts/test.sh installs it")
		}
		t.Skip("promtool is not installed; apt-get install prometheus")
	}
	if out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if out, err := exec.Command(promtool, "test", "rules", rulesTestFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
