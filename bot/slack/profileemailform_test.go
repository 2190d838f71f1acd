package slack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// An email on a Slack profile is the person the policy names however the profile writes it: a
// letter with its accent as two characters (a and U+0304), as some directories send it, is the
// one composed letter the policy's editor typed (ā), and the domain in capitals is the domain,
// as at a single sign-on.
func TestAProfileEmailWrittenDecomposedIsThePersonThePolicyNames(t *testing.T) {
	text, err := os.ReadFile(harborPolicy)
	if err != nil {
		t.Fatal(err)
	}
	person := "r\u0101wiri@harbor.example" // rāwiri, the ā one character
	varied := strings.Replace(string(text), "  - {user: tane@harbor.example, groups: [hr-kelp]}",
		"  - {user: tane@harbor.example, groups: [hr-kelp]}\n  - {user: "+person+", groups: [hr-kelp]}", 1)
	file := filepath.Join(t.TempDir(), "harbor.yaml")
	if err := os.WriteFile(file, []byte(varied), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := policy.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, storetest.SQLite(t), p, []string{"kelp", "seismic"})
	e.slack.setUsers(map[string]string{"URAWIRI": "Ra\u0304wiri@Harbor.EXAMPLE"})
	trigger := e.command("URAWIRI", "quota")
	e.wait()
	if got := e.responseTo(trigger).Text; !strings.Contains(got, "kelp") {
		t.Errorf("/gpu quota of %s, whose profile writes the email decomposed, answered %q; want team kelp's quota", person, got)
	}
}
