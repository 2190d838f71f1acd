package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quartermaster report --team santé-données, for team sante-donnees (names in a policy are a to
// z), was refused listing the teams with an example of the first of them, equipe-vision; so was
// --team "#sante" for the team's channel #santé. Each is refused naming the team meant, and the
// example is that team's report, which works.
func TestReportOfATeamTypedWithItsAccentsNamesTheTeamMeant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "baobab.yaml")
	src := "organization: Baobab AI\ncurrency: XOF\ntimezone: Africa/Abidjan\nclasses:\n" +
		"  - {name: cuivre, sku: A6000, price_per_gpu_hour: 650, max_gpus: 2, max_duration: 6h}\n" +
		"default_quota: {gpus: {cuivre: 1}, gpu_hours_per_week: 10}\nteams:\n" +
		"  - {name: equipe-vision, idp_groups: [grp-vision], budget_owners: [chefs-baobab], channel: \"#équipe-vision\", quota: {gpus: {cuivre: 3}, gpu_hours_per_week: 120}}\n" +
		"  - {name: sante-donnees, idp_groups: [grp-sante], budget_owners: [koffi@baobab.example], channel: \"#santé\"}\n" +
		"approvals: {timeout: 24h, fallback_approvers: [ops@baobab.example]}\nbackend: sim\ndirectory:\n" +
		"  - {user: awa@baobab.example, groups: [grp-vision]}\n  - {user: aminata@baobab.example, groups: [grp-vision, chefs-baobab]}\n" +
		"  - {user: fatou@baobab.example, groups: [grp-sante]}\n  - {user: koffi@baobab.example, groups: [grp-sante]}\n" +
		"  - {user: ops@baobab.example, groups: [ops]}\n" +
		"sim:\n  nodes:\n    - {name: cu, count: 1, class: cuivre, gpus: 4}\n"
	if err := os.WriteFile(pol, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	runConsoleAt(t, dir, "2026-11-30T08:00:00Z", "awa@baobab.example: /gpu request 1 cuivre 2h\nfatou@baobab.example: /gpu request 1 cuivre 3h\n:advance 4h\n", "--policy", pol)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	report := func(args ...string) (string, string, int) {
		return runCLI(append([]string{"report", "--policy", pol, "--db", db, "--now", "2026-12-08T12:00:00Z", "--week", "2026-W49", "--format", "csv"}, args...)...)
	}
	want, stderr, code := report("--team", "sante-donnees")
	if code != 0 || !strings.Contains(want, "sante-donnees,cuivre,3.00,1950.00") {
		t.Fatalf("report --team sante-donnees: exit %d, %q %s", code, want, stderr)
	}
	for team, says := range map[string]string{
		"santé-données": `there is no team "santé-données"; did you mean sante-donnees?`,
		"Santé-Données": `there is no team "Santé-Données"; did you mean sante-donnees?`,
		"#sante":        `"#sante" is the channel of no team; did you mean #santé, the channel of team sante-donnees?`,
	} {
		_, stderr, code := report("--team", team)
		msg, ex, ok := strings.Cut(strings.TrimSpace(stderr), " e.g. quartermaster report ")
		if code != 2 || !ok || !strings.Contains(strings.ToLower(msg), strings.ToLower(says)) || !strings.HasSuffix(ex, "--team sante-donnees") {
			t.Errorf("report --team %s: exit %d, %q; want it to say %q, with team sante-donnees's report as the example", team, code, stderr, says)
			continue
		}
		args := append([]string{"report"}, strings.Fields(ex)...)
		if got, stderr, code := runCLI(append(args, "--policy", pol, "--db", db, "--now", "2026-12-08T12:00:00Z", "--format", "csv")...); code != 0 || got != want {
			t.Errorf("the example %q: exit %d, %q %s; want %q", ex, code, got, stderr, want)
		}
	}
}
