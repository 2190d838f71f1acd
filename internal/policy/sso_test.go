package policy

import (
	"os"
	"strings"
	"testing"
	"time"
)

// withExample is the example policy with extra YAML appended (later keys may not repeat earlier ones).
func withExample(t *testing.T, extra string) (*Policy, error) {
	t.Helper()
	b, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	// Drop the example's own oidc section, so extra may bring one.
	src := string(b)
	if i := strings.Index(src, "\noidc:\n"); i >= 0 {
		j := strings.Index(src[i+1:], "\n\n")
		src = src[:i+1] + src[i+1+j+2:]
	}
	return Load([]byte(src+"\n"+extra), "p.yaml")
}

// TestSSOSection: the oidc section is optional, its defaults are groups, openid email profile and
// a daily re-check, and a bad value is explained with its line.
func TestSSOSection(t *testing.T) {
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if p.OIDC.GroupsClaim != "groups" || strings.Join(p.OIDC.Scopes, " ") != "openid email profile" || p.OIDC.Recheck.Duration != 24*time.Hour {
		t.Fatalf("defaults: %+v", p.OIDC)
	}
	p, err = withExample(t, "oidc: {groups_claim: roles, scopes: [openid, email, groups], recheck: 6h, admins: [platform]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.OIDC.GroupsClaim != "roles" || len(p.OIDC.Scopes) != 3 || p.OIDC.Recheck.Duration != 6*time.Hour || !p.IsSSOAdmin("x@acme.example", []string{"Platform"}) || p.IsSSOAdmin("x@acme.example", []string{"ai-vision"}) {
		t.Fatalf("read: %+v", p.OIDC)
	}
	p, err = withExample(t, "oidc: {recheck: 12h}\n")
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsSSOAdmin("platform-leads@acme.example", nil) || p.IsSSOAdmin("dana@acme.example", []string{"leads"}) {
		t.Fatal("without oidc.admins the fallback approvers are the admins, and only they")
	}
	for extra, want := range map[string]string{
		"oidc: {recheck: 3d}\n":                 "between 1m and 24h",
		"oidc: {scopes: [email]}\n":             "must include openid",
		"oidc: {groups_claim: \"my groups\"}\n": "not a claim name",
		"oidc: {grups_claim: groups}\n":         "grups_claim",
	} {
		_, err := withExample(t, extra)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "p.yaml:") {
			t.Errorf("%q: %v; want a line and %q", extra, err, want)
		}
	}
}

// TestStorageOfOneTeamOnly: two teams cannot share a storage directory, nor hold one inside the
// other's, and a path must be plain (no ..).
func TestStorageOfOneTeamOnly(t *testing.T) {
	team := func(name, storage string) string {
		return "  - {name: " + name + ", idp_groups: [g-" + name + "], storage: {path: " + storage + "}}\n"
	}
	b, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(b), "teams:\n", "teams:\n__EXTRA__", 1)
	for extra, want := range map[string]string{
		team("audio", "/projects/vision"):          "both have storage /projects/vision",
		team("audio", "/projects/vision/audio"):    "the storage /projects/vision of team vision holds /projects/vision/audio of team audio",
		team("audio", "/projects"):                 "the storage /projects/vision of team vision lies inside /projects of team audio",
		team("audio", "/projects/audio/../vision"): "plain absolute directory",
		team("audio", "projects/audio"):            "plain absolute directory",
		team("audio", "/"):                         "plain absolute directory",
	} {
		_, err := Load([]byte(strings.Replace(base, "__EXTRA__", extra, 1)), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", strings.TrimSpace(extra), err, want)
		}
	}
	if _, err := Load([]byte(strings.Replace(base, "__EXTRA__", team("audio", "/projects/visionary"), 1)), "p.yaml"); err != nil {
		t.Errorf("a sibling whose name starts like another team's is its own directory: %v", err)
	}
}

// TestApproversByGroup: budget owners and fallback approvers may be named by group.
func TestApproversByGroup(t *testing.T) {
	p, err := LoadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	p.Teams[0].BudgetOwners = []string{"dana@acme.example", "vision-leads"}
	p.Approvals.FallbackApprovers = []string{"platform"}
	for _, c := range []struct {
		user   string
		groups []string
		team   string
		want   bool
	}{
		{"dana@acme.example", nil, "vision", true},
		{"erin@acme.example", []string{"Vision-Leads"}, "vision", true},
		{"erin@acme.example", []string{"vision-leads"}, "language", false},
		{"olga@acme.example", []string{"platform"}, "language", true},
		{"bob@acme.example", []string{"ai-vision"}, "vision", false},
	} {
		if got := p.MayApprove(c.user, c.groups, c.team); got != c.want {
			t.Errorf("MayApprove(%s, %v, %s) = %v, want %v", c.user, c.groups, c.team, got, c.want)
		}
	}
}
