package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quartermaster report --team takes a team's channel for the team, as /gpu report does: the
// report of "#beam-room" is team photon's; a channel of no team is refused with an example that
// works when typed back.
func TestReportOfATeamsChannelIsThatTeams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "lumen.yaml")
	src := "organization: Lumen Optics\ncurrency: EUR\ntimezone: Europe/Lisbon\nclasses:\n" +
		"  - {name: lathe, sku: L4, price_per_gpu_hour: 0.8, max_gpus: 4, max_duration: 6h}\n" +
		"default_quota: {gpus: {lathe: 1}, gpu_hours_per_week: 10}\nteams:\n" +
		"  - {name: photon, idp_groups: [g-photon], budget_owners: [odile@lumen.example], channel: \"#beam-room\", quota: {gpus: {lathe: 4}, gpu_hours_per_week: 100}}\n" +
		"  - {name: prism, idp_groups: [g-prism], budget_owners: [piet@lumen.example], channel: \"#glass-works\"}\n" +
		"approvals: {timeout: 24h, fallback_approvers: [ops@lumen.example]}\nbackend: sim\ndirectory:\n" +
		"  - {user: uma@lumen.example, groups: [g-photon]}\n  - {user: odile@lumen.example, groups: [g-photon]}\n" +
		"  - {user: piet@lumen.example, groups: [g-prism]}\n  - {user: ops@lumen.example, groups: [ops]}\n" +
		"sim:\n  nodes:\n    - {name: l4, count: 1, class: lathe, gpus: 4}\n"
	if err := os.WriteFile(pol, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	runConsoleAt(t, dir, "2026-11-30T15:00:00Z", "uma@lumen.example: /gpu request 1 lathe 2h\npiet@lumen.example: /gpu request 1 lathe 3h\n:advance 4h\n", "--policy", pol)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	report := func(team string) (string, string, int) {
		return runCLI("report", "--policy", pol, "--db", db, "--now", "2026-12-08T12:00:00Z", "--week", "2026-W49", "--format", "csv", "--team", team)
	}
	want, stderr, code := report("photon")
	if code != 0 || !strings.Contains(want, "photon") || strings.Contains(want, "prism") {
		t.Fatalf("report --team photon: exit %d, %q %s", code, want, stderr)
	}
	for _, team := range []string{"#beam-room", "#Beam-Room"} {
		if got, stderr, code := report(team); code != 0 || got != want {
			t.Errorf("report --team %s: exit %d, %q %s; want team photon's report %q", team, code, got, stderr, want)
		}
	}
	_, stderr, code = report("#lobby")
	msg, ex, ok := strings.Cut(strings.TrimSpace(stderr), " e.g. quartermaster report ")
	if code != 2 || !ok || !strings.Contains(msg, `"#lobby" is the channel of no team`) || !strings.Contains(msg, "the teams are photon and prism") {
		t.Fatalf("report --team #lobby: exit %d, %q; want a refusal naming the teams and an example", code, stderr)
	}
	if help, _, _ := runCLI("report", "--help"); !strings.Contains(help, "by its channel") {
		t.Errorf("report --help does not say --team takes a team's channel:\n%s", help)
	}
	args := append([]string{"report"}, strings.Fields(ex)...)
	if _, stderr, code := runCLI(append(args, "--policy", pol, "--db", db, "--now", "2026-12-08T12:00:00Z")...); code != 0 {
		t.Errorf("the example %q is refused: %s", ex, stderr)
	}
}
