package slack_test

import (
	"strings"
	"testing"
)

// A team written as a mention (@harakeke, as typed or as Slack sends a user group's mention) is
// refused naming the team meant, with the command written with that team as the example, as a
// team typed with its accents is; the example works. A mention of no team is still no team.
func TestATeamWrittenAsAMentionNamesTheTeamMeant(t *testing.T) {
	e := newTuataraEnv(t)
	for _, tc := range []struct{ sent, quoted, example string }{
		{"request 1 kete for 1h team <!subteam^S0HARAKEKE|@harakeke>", "@harakeke", "/gpu request 1 kete for 1h team harakeke"},
		{"request 1 kete for 1h team @harakeke", "@harakeke", "/gpu request 1 kete for 1h team harakeke"},
		{"quota @Harakeke", "@Harakeke", "/gpu quota harakeke"},
		{"quota request +1 kete team @harakeke because a deadline", "@harakeke", "/gpu quota request +1 kete team harakeke because a deadline"},
		{"submit cuda-smoke team=@harakeke", "@harakeke", "/gpu submit cuda-smoke team=harakeke"},
	} {
		got := e.sent("UTAMA", tc.sent)
		if !strings.Contains(got, `"`+tc.quoted+`" is not a team name; did you mean harakeke?`) || !strings.HasSuffix(got, "Example: `"+tc.example+"`") {
			t.Errorf("/gpu %s answered %q; want the team meant and the example %q", tc.sent, got, tc.example)
		}
	}
	if n := len(e.leases()); n != 0 {
		t.Fatalf("%d leases made", n)
	}
	if got := e.ask("UTAMA", "request 1 kete for 1h team harakeke"); !strings.HasPrefix(got.Text, "L-1 is active") {
		t.Errorf("the example answered %q", got.Text)
	}
	// A user group is no team: the one whose handle holds a team's name names that team; a
	// handle that is a class's name (kete) is said to be a class, not a user group.
	if got := e.sent("UTAMA", "request 1 kete for 1h team <!subteam^S0KAITIAKI|@harakeke-kaitiaki>"); !strings.Contains(got, `"@harakeke-kaitiaki" names a user group or a person, not a team; did you mean team harakeke?`) || !strings.HasSuffix(got, "Example: `/gpu request 1 kete for 1h team harakeke`") {
		t.Errorf("a user group named for team harakeke answered %q", got)
	}
	if got := e.sent("UTAMA", "quota @kete"); strings.Contains(got, "user group") || !strings.Contains(got, `"@kete" is a class, not a team; /gpu quota shows your team's quota of every class, kete among them.`) || !strings.HasSuffix(got, "Example: `/gpu quota`") {
		t.Errorf("/gpu quota @kete answered %q", got)
	}
}
