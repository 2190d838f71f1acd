package slack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// harborPolicy is a policy of its own names: teams seismic (channel #quake-lab) and kelp
// (#kelp-forest), classes bench and rack.
const harborPolicy = "../../commands/testdata/harbor.yaml"

// newHarborEnv is the product on the harbor policy, with a Slack user for each person it lists.
func newHarborEnv(t *testing.T) *env {
	t.Helper()
	p, err := policy.LoadFile(harborPolicy)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, storetest.SQLite(t), p, []string{"kelp", "seismic"})
	e.slack.setUsers(map[string]string{"UWIREMU": "wiremu@harbor.example", "UINES": "ines@harbor.example",
		"UTANE": "tane@harbor.example", "UMERE": "mere@harbor.example", "UOPS": "harbor-ops@harbor.example"})
	return e
}

// sent types a command whose text Slack sends exactly as sent (a channel mention as <#C…|name>).
func (e *env) sent(user, sent string) string {
	e.t.Helper()
	trigger := e.newTrigger()
	if code := e.signed("/slack/commands", e.sentBody(user, sent, trigger), nil); code != http.StatusOK {
		e.t.Fatalf("/gpu %s: HTTP %d", sent, code)
	}
	e.wait()
	return e.responseTo(trigger).Text
}

// A team's channel, mentioned where a team goes (Slack's <#C…|quake-lab>, or #quake-lab as typed),
// names the team whose channel it is; a channel of no team is refused saying so, with an example.
func TestATeamsChannelNamesTheTeam(t *testing.T) {
	e := newHarborEnv(t)
	if got := e.sent("UWIREMU", "quota <#C024BE7LR|quake-lab>"); !strings.Contains(got, "seismic") || strings.Contains(got, "not a team name") {
		t.Errorf("/gpu quota <#…|quake-lab> answered %q; want the quota of team seismic", got)
	}
	if got := e.sent("UMERE", "quota #kelp-forest"); !strings.Contains(got, "kelp") || strings.Contains(got, "not a team name") {
		t.Errorf("/gpu quota #kelp-forest answered %q; want the quota of team kelp", got)
	}
	if got := e.sent("UMERE", "request 1 bench for 1h team <#C0KELP|kelp-forest>"); !strings.Contains(got, "is active") {
		t.Errorf("a request for team <#…|kelp-forest> answered %q", got)
	}
	if ls := e.leases(); len(ls) != 1 || ls[0].Team != "kelp" {
		t.Fatalf("leases %+v; want one of team kelp", ls)
	}
	got := e.sent("UWIREMU", "quota <#C0GENERAL|general>")
	if !strings.Contains(got, "#general\" is the channel of no team") || !strings.Contains(got, "Example: `/gpu quota`") {
		t.Errorf("/gpu quota of a channel of no team answered %q", got)
	}
}
