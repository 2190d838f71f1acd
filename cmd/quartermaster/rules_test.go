package main

import (
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// rulesFile holds the alerting rules docs/operations.md points operators to.
const rulesFile = "../../deploy/prometheus/quartermaster.rules.yml"

var (
	ruleMetric  = regexp.MustCompile(`\b(quartermaster_[a-z0-9_]+)(\{[^}]*\})?`)
	ruleMatcher = regexp.MustCompile(`(\w+)\s*(=~|=)\s*"([^"]*)"`)
)

// TestShippedAlertRulesReadExportedMetrics: the alerting rules in deploy/prometheus pass
// promtool check rules, and every metric (and every label value) their expressions read is one a
// service that has answered a single chat command exports, so no rule watches a series that
// never exists.
func TestShippedAlertRulesReadExportedMetrics(t *testing.T) {
	src, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatalf("the alerting rules docs/operations.md names: %v", err)
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(src, &file); err != nil {
		t.Fatal(err)
	}

	api := newSlackAPI(t)
	s := startServe(t, serveOptions{slack: slackSettings{BotToken: "xoxb-rules", SigningSecret: "rules-secret", APIURL: api.URL}})
	if code := signedCommand(t, s.url, "rules-secret", "request 1 interactive for 2h", "T1", api.URL+"/response/1"); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	<-api.answers
	code, body := getBody(t, s.url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", code)
	}

	rules := 0
	for _, g := range file.Groups {
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
						t.Errorf("rule %s reads %s, which /metrics does not export", r.Alert, name)
						continue
					}
				}
				for _, m := range ruleMatcher.FindAllStringSubmatch(ref[2], -1) {
					values := []string{m[3]}
					if m[2] == "=~" {
						values = strings.Split(m[3], "|")
					}
					for _, v := range values {
						if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{[^}]*\b` + regexp.QuoteMeta(m[1]+`="`+v+`"`)).MatchString(body) {
							t.Errorf("rule %s reads %s{%s=%q}, which /metrics does not export", r.Alert, name, m[1], v)
						}
					}
				}
			}
		}
	}
	if rules == 0 {
		t.Fatalf("%s holds no rules", rulesFile)
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
}
