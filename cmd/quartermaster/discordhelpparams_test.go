package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/gputable"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// glenPolicy is a small policy of its own for Discord: one class, one team, one person on
// Discord (dAlice's account); none of the example's names.
const glenPolicy = `organization: Glen Instruments
currency: NOK
timezone: America/Sao_Paulo
classes:
  - name: loft
    description: Shared L40S
    sku: L40S
    gpu_memory_gib: 48
    price_per_gpu_hour: 1.10
    isolation: shared
    max_gpus: 4
    max_duration: 12h
    idle_timeout: 30m
    idle_grace: 10m
    slurm: {partition: loft, gres: "gpu:l40s"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: loft}}
default_quota: {gpus: {loft: 1}, gpu_hours_per_week: 10}
teams:
  - name: herons
    idp_groups: [grp-herons]
    budget_owners: [hal@glen.example]
    quota: {gpus: {loft: 4}, gpu_hours_per_week: 500}
    data_classes: [field, lab-notes]
approvals:
  timeout: 12h
  self_approval: false
  fallback_approvers: [ops@glen.example]
backend: sim
directory:
  - {user: ina@glen.example, groups: [grp-herons], accounts: ["discord:100000000000000001"]}
  - {user: hal@glen.example, groups: [grp-herons]}
  - {user: ops@glen.example, groups: [ops]}
sim:
  nodes:
    - {name: l40s, count: 2, class: loft, gpus: 4}
`

// paramLineRE is a parameter as /gpu help COMMAND lists it: `WHAT`, required: … or `WHAT`, optional: ….
var paramLineRE = regexp.MustCompile("(?m)^`([^`]+)`, (required|optional): ")

// TestDiscordHelpNamesParametersAsDiscordTakesThem: /gpu help COMMAND on Discord lists each
// parameter as the option Discord takes (`duration:DURATION`, `data:DATA`), the same way its
// usage line writes it, not the text form (`for DURATION`, `data CLASS`) that Discord refuses;
// each is an option the subcommand is registered with, and typed so, the request is granted.
func TestDiscordHelpNamesParametersAsDiscordTakesThem(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "glen.yaml")
	if err := os.WriteFile(path, []byte(glenPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newDiscordEnvWith(t, commonFlags{db: storetest.SQLite(t), policy: path})
	for _, c := range gputable.Commands(e.app.Bot) {
		if len(c.Options) == 0 {
			continue
		}
		m := e.command(dAlice, "help", opt("command", c.Name))
		text := m.Text()
		u := usageRE.FindStringSubmatch(text)
		if u == nil || u[1] != c.Name {
			t.Errorf("/gpu help %s shows no usage of it: %q", c.Name, text)
			continue
		}
		inUsage := map[string]bool{}
		for _, w := range strings.Fields(u[2]) {
			inUsage[strings.Trim(w, "[]")] = true
		}
		lines := paramLineRE.FindAllStringSubmatch(text, -1)
		if len(lines) != len(c.Options) {
			t.Errorf("/gpu help %s lists %d parameters, want its %d options: %q", c.Name, len(lines), len(c.Options), text)
		}
		for i, l := range lines {
			name, _, ok := strings.Cut(l[1], ":")
			switch {
			case !ok || !inUsage[l[1]]:
				t.Errorf("/gpu help %s lists the parameter %q, which its usage %q does not write", c.Name, l[1], u[0])
			case i < len(c.Options) && c.Options[i].Name != name:
				t.Errorf("/gpu help %s lists %q where its option %s is", c.Name, l[1], c.Options[i].Name)
			}
		}
	}
	help := e.command(dAlice, "help", opt("command", "request")).Text()
	for _, want := range []string{"`duration:DURATION`, optional: how long", "`data:DATA`, optional: the data class the work touches, one of the data classes of team herons: field (the default) or lab-notes", "`exclusive:True`, optional:"} {
		if !strings.Contains(help, want) {
			t.Errorf("/gpu help request on Discord does not say %q: %q", want, help)
		}
	}
	for _, text := range []string{"`for DURATION`", "`data CLASS`", "`N`", "`team T`"} {
		if strings.Contains(help, text) {
			t.Errorf("/gpu help request on Discord shows the text form %s: %q", text, help)
		}
	}
	// Typed as help names them, the options are taken.
	m := e.command(dAlice, "request", opt("gpus", 2), opt("class", "loft"), opt("duration", "3h"), opt("data", "lab-notes"))
	if !strings.Contains(m.Text(), "L-1") || strings.Contains(m.Text(), "Example:") {
		t.Errorf("a request typed with the options help names was answered %q", m.Text())
	}
}
