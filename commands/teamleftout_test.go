package commands

import "testing"

// A request whose word team is followed by one of the request's own words that names no team of
// the policy (team for 2h) is told the team's name is missing after team, with the request
// without it as its example; before, the word was looked up as a team ("There is no team
// "for""). A team named like such a word is still that team (TestTeamWordsAreTheTeamNamesTheGrammarMisreads).
func TestATeamWordFollowedByARequestWordHasNoTeam(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			const says = `"team" must be followed by a team name`
			refusedAs(t, h, tc.user, "request 1 "+tc.class+" team for 2h", says, "request 1 "+tc.class+" for 2h")
			refusedAs(t, h, tc.user, "request 2 "+tc.class+" for 3h team exclusive", says, "request 2 "+tc.class+" for 3h exclusive")
			refusedAs(t, h, tc.user, "quota request +1 "+tc.class+" team for 3d because a rerun", says, "quota request +1 "+tc.class+" for 3d because a rerun")
		})
	}
}
