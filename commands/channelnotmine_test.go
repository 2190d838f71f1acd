package commands

import (
	"strings"
	"testing"
)

// A request that types the channel of a team the asker is not in, without the word team, is
// refused in a sentence that agrees with its example: the example leaves that team out (a
// request naming it would be refused), so the sentence does not offer "like team X" but says the
// asker is not in it and which team a request without one is charged to, the one the example
// charges. For a team the asker is in, sentence and example both name it, as before.
func TestAChannelOfAnotherTeamInARequestAgreesWithItsExample(t *testing.T) {
	for _, tc := range []struct{ policy, user, own, class, channel, other, ownChannel string }{
		{"testdata/fjord.yaml", "kari@fjord.example", "ml-infra2", "scratchpad", "#clr-gpu", "computational-linguistics-research", "#infra-gpu"},
		{"testdata/harbor.yaml", "wiremu@harbor.example", "seismic", "bench", "#kelp-forest", "kelp", "#quake-lab"},
		{"testdata/tokyo.yaml", "haru@sakura.example", "proteomics", "jupyter", "#vision-lab", "vision-lab", "#proteomics"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, line := range []string{
				"/gpu request 1 " + tc.class + " for 2h " + tc.channel,
				"/gpu request 1 " + tc.class + " for 2h data open " + tc.channel,
			} {
				r := h.say(tc.user, line)
				msg, ex, _ := strings.Cut(r.Text, " Example: ")
				if strings.Contains(msg, "like team") || strings.Contains(ex, tc.other) {
					t.Errorf("%s: %q; want no team offered that the example leaves out", line, r.Text)
				}
				if !strings.Contains(msg, "channel of team "+tc.other+", which you are not in") || !strings.Contains(msg, "your team "+tc.own) {
					t.Errorf("%s: %q; want it to say whose channel it is, that the asker is not in that team, and the team charged instead", line, msg)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "which you are not in")
			}
			// The asker's own team's channel: sentence and example both name the team.
			line := "/gpu request 1 " + tc.class + " for 2h " + tc.ownChannel
			r := h.say(tc.user, line)
			if !strings.Contains(r.Text, "like team "+tc.own+". Example: ") || !strings.Contains(exampleIn(t, r), " team "+tc.own) {
				t.Errorf("%s: %q; want the team named in the sentence and the example", line, r.Text)
			}
		})
	}
}
