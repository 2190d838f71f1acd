package commands

import (
	"strings"
	"testing"
)

// channelPolicies are policies with team channels, each with someone in one team (own, with its
// channel) and a team they are not in (other, with its channel), and a class both teams hold.
var channelPolicies = []struct{ policy, user, own, ownChannel, other, otherChannel, otherUser, class string }{
	{"testdata/fjord.yaml", "kari@fjord.example", "ml-infra2", "#infra-gpu", "computational-linguistics-research", "#clr-gpu", "sigrid@fjord.example", "scratchpad"},
	{"testdata/harbor.yaml", "wiremu@harbor.example", "seismic", "#quake-lab", "kelp", "#kelp-forest", "tane@harbor.example", "bench"},
	{"testdata/tokyo.yaml", "haru@sakura.example", "proteomics", "#proteomics", "vision-lab", "#vision-lab", "sora@sakura.example", "jupyter"},
}

// notOffered fails where a refusal's example names team (as team T or team=T) for someone not in
// it: a request naming it would be refused.
func notOffered(t *testing.T, line, ex, team string) {
	t.Helper()
	for _, w := range strings.Fields(ex) {
		if w == team || w == "team="+team {
			t.Errorf("%s: example %q names team %s, which the asker is not in", line, ex, team)
		}
	}
}

// A quota request that names a team by its channel where the team goes, without the word team,
// is refused as a request is: the channel is said to be a team's, not taken for a length; the
// example names the team after the word team for someone in it, and leaves it out (saying so)
// for someone who is not.
func TestAQuotaRequestWithATeamsChannelIsReadAsARequestReadsIt(t *testing.T) {
	for _, tc := range channelPolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, line := range []string{
				"/gpu quota request +1 " + tc.class + " " + tc.ownChannel + " because a deadline",
				"/gpu quota request +1 " + tc.class + " for 1w " + tc.ownChannel + " because a deadline",
			} {
				r := h.say(tc.user, line)
				if strings.Contains(r.Text, "not a duration") || !strings.Contains(r.Text, "team "+tc.own+". Example:") {
					t.Errorf("%s: %q; want the channel said to name team %s", line, r.Text, tc.own)
				}
				if ex := exampleIn(t, r); !strings.Contains(ex, " team "+tc.own+" ") {
					t.Errorf("%s: example %q; want it to name team %s", line, ex, tc.own)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, tc.ownChannel)
			}
			line := "/gpu quota request +1 " + tc.class + " " + tc.otherChannel + " because a deadline"
			r := h.say(tc.user, line)
			if !strings.Contains(r.Text, "channel of team "+tc.other+", which you are not in") {
				t.Errorf("%s: %q; want it to say the asker is not in team %s", line, r.Text, tc.other)
			}
			notOffered(t, line, exampleIn(t, r), tc.other)
			refusedWithAWorkingExample(t, h, tc.user, line, "which you are not in")
		})
	}
}

// A team's channel mistyped by a letter where a request's team goes, without the word team, is
// refused speaking of the channel typed and the one meant, not of a word the user never typed;
// with the word team or without it, someone not in the team meant is told so, and the example,
// which leaves that team out, agrees.
func TestAMistypedChannelInARequestSpeaksOfTheChannelTyped(t *testing.T) {
	for _, tc := range channelPolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, verb := range []string{"/gpu request 1 " + tc.class + " for 2h", "/gpu quota request +1 " + tc.class} {
				for _, team := range []string{"", "team "} {
					tail := ""
					if strings.HasPrefix(verb, "/gpu quota") {
						tail = " because a deadline"
					}
					// Someone in the team whose channel is mistyped: offered that team.
					line := verb + " " + team + tc.otherChannel + "x" + tail
					r := h.say(tc.otherUser, line)
					msg, ex, _ := strings.Cut(r.Text, " Example: ")
					if !strings.Contains(msg, `"`+tc.otherChannel+`x"`) || !strings.Contains(msg, "did you mean") || strings.Contains(msg, "not part of") {
						t.Errorf("%s: %q; want the channel typed and the one meant", line, msg)
					}
					if !strings.Contains(ex, " team "+tc.other) {
						t.Errorf("%s: example %q; want team %s", line, ex, tc.other)
					}
					refusedWithAWorkingExample(t, h, tc.otherUser, line, tc.otherChannel)
					// Someone not in it: told so, and neither sentence nor example offers it.
					r = h.say(tc.user, line)
					msg, ex, _ = strings.Cut(r.Text, " Example: ")
					if !strings.Contains(msg, `"`+tc.otherChannel+`x"`) || !strings.Contains(msg, "which you are not in") || strings.Contains(msg, "did you mean") {
						t.Errorf("%s: %q; want it to say the asker is not in team %s", line, msg, tc.other)
					}
					notOffered(t, line, ex, tc.other)
					refusedWithAWorkingExample(t, h, tc.user, line, "which you are not in")
				}
			}
		})
	}
}

// A job that names another team by its channel (team=#channel) and is refused for another
// mistake gives an example without that team, which is accepted; someone in it keeps it.
func TestAJobNamingAnotherTeamsChannelGivesAnExampleWithoutIt(t *testing.T) {
	for _, tc := range channelPolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			for _, tail := range []string{"for=xyz", "class=" + tc.class + "x", "class=" + tc.class + " team=" + tc.otherChannel, `"`, "team=" + tc.otherChannel + "x"} {
				line := "/gpu submit cuda-smoke team=" + tc.otherChannel + " " + tail
				r := h.say(tc.user, line)
				if !r.Error {
					t.Fatalf("%s: accepted: %q", line, r.Text)
				}
				notOffered(t, line, exampleIn(t, r), tc.other)
				if strings.Contains(exampleIn(t, r), tc.otherChannel) {
					t.Errorf("%s: example %q names the channel of team %s", line, exampleIn(t, r), tc.other)
				}
				if rr := h.say(tc.user, exampleIn(t, r)); rr.Error {
					t.Errorf("%s: its example %q is refused: %s", line, exampleIn(t, r), rr.Text)
				}
				// For someone in that team, the example keeps it.
				r = h.say(tc.otherUser, line)
				if ex := exampleIn(t, r); !strings.Contains(ex, "team="+tc.other) && !strings.Contains(ex, "team="+tc.otherChannel) {
					t.Errorf("%s: example %q; want it to keep team %s", line, ex, tc.other)
				}
			}
		})
	}
}

// A team named where a request, quota request or job takes one, otherwise than as the command
// names it (its name without the word team, as a mention, with a #, in capitals), is refused with
// a sentence that agrees with the example: for someone in the team both name it; for someone not
// in it, the sentence says so and neither offers it. The example typed back is accepted.
func TestATeamNamedOtherwiseAgreesWithItsExample(t *testing.T) {
	for _, tc := range channelPolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			for _, form := range []string{"@" + tc.other, "#" + tc.other, tc.other, "@" + strings.ToUpper(tc.other)} {
				for _, line := range []string{
					"/gpu request 1 " + tc.class + " for 2h " + form,
					"/gpu request 1 " + tc.class + " for 2h team " + form,
					"/gpu quota request +1 " + tc.class + " " + form + " because a deadline",
					"/gpu quota request +1 " + tc.class + " team " + form + " because a deadline",
					"/gpu submit cuda-smoke team=" + form,
				} {
					r := h.say(tc.user, line)
					if !r.Error {
						t.Errorf("%s: accepted for someone not in team %s: %q", line, tc.other, r.Text)
						continue
					}
					msg, ex, _ := strings.Cut(r.Text, " Example: ")
					if strings.Contains(msg, "did you mean") || strings.Contains(msg, "like team") {
						t.Errorf("%s: %q; want no team offered that the example leaves out", line, msg)
					}
					notOffered(t, line, ex, tc.other)
					if rr := h.say(tc.user, ex); rr.Error {
						t.Errorf("%s: its example %q is refused: %s", line, ex, rr.Text)
					}
					if r := h.say(tc.otherUser, line); r.Error {
						if ex := exampleIn(t, r); !strings.Contains(ex, "team "+tc.other) && !strings.Contains(ex, "team="+tc.other) {
							t.Errorf("%s: example %q; want it to name team %s for someone in it", line, ex, tc.other)
						}
						refusedWithAWorkingExample(t, h, tc.otherUser, line, "")
					}
				}
			}
		})
	}
}

// An estimate takes no team: a team named after its length (by its channel, mistyped or not, its
// mention or its name) is refused as no part of an estimate, not as a length, and the example
// keeps the length typed.
func TestAnEstimateNamingATeamIsToldItTakesNone(t *testing.T) {
	for _, tc := range channelPolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, form := range []string{tc.otherChannel, tc.otherChannel + "x", "@" + tc.other, tc.other, tc.ownChannel} {
				line := "/gpu estimate 1 " + tc.class + " 3h " + form
				r := h.say(tc.user, line)
				if !strings.Contains(r.Text, `"`+form+`" is not part of an estimate`) || !strings.HasSuffix(r.Text, " 3h") {
					t.Errorf("%s: %q; want the team's word said to be no part of an estimate, the length kept", line, r.Text)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "not part of an estimate")
			}
		})
	}
}

// /gpu report with a team named otherwise (its mention, its channel mistyped, its name mistyped)
// offers that team, in its sentence and its example alike, only to someone who sees its
// showback (one of its budget owners); anyone else is told the report is of their own use, and
// the example, which leaves the team out, is accepted.
func TestAReportOfATeamNamedOtherwiseOffersItOnlyToWhoSeesIt(t *testing.T) {
	for _, tc := range []struct{ policy, user, owner, team, channel string }{
		{"testdata/fjord.yaml", "kari@fjord.example", "tor@fjord.example", "computational-linguistics-research", "#clr-gpu"},
		{"testdata/harbor.yaml", "wiremu@harbor.example", "tane@harbor.example", "kelp", "#kelp-forest"},
		{"testdata/tokyo.yaml", "haru@sakura.example", "yuki@sakura.example", "vision-lab", "#vision-lab"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h, _ := reportsOn(t, tc.policy)
			mustOK(t, h.say(tc.user, "/gpu list")) // a report's history begins with the first lease
			for _, form := range []string{"@" + tc.team, tc.channel + "x", tc.team + "x"} {
				line := "/gpu report " + form
				r := h.say(tc.user, line)
				msg, ex, _ := strings.Cut(r.Text, " Example: ")
				if strings.Contains(msg, "did you mean") || !strings.Contains(msg, "your own use") {
					t.Errorf("%s: %q; want no team offered whose showback the asker does not see", line, msg)
				}
				if strings.HasSuffix(ex, " "+tc.team) {
					t.Errorf("%s: example %q names team %s", line, ex, tc.team)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "your own use")
				r = h.say(tc.owner, line)
				if msg, ex, _ := strings.Cut(r.Text, " Example: "); !strings.Contains(msg, "did you mean") || !strings.HasSuffix(ex, " "+tc.team) {
					t.Errorf("%s: %q; want the team offered to its budget owner, in the sentence and the example", line, r.Text)
				}
			}
		})
	}
}

// A command that takes no words (/gpu approvals, /gpu list) given a team, in whatever form,
// quotes the words as typed (a quoted one once, a mention with its @), never a word put right
// that the user did not type.
func TestACommandWithoutWordsQuotesATeamAsTyped(t *testing.T) {
	for _, tc := range channelPolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, verb := range []string{"approvals", "list"} {
				for form, quoted := range map[string]string{
					`"` + tc.otherChannel + `"`: `"` + tc.otherChannel + `"`,
					"@" + tc.other:              `"@` + tc.other + `"`,
					tc.otherChannel + "x":       `"` + tc.otherChannel + `x"`,
					"#" + tc.other:              `"#` + tc.other + `"`,
				} {
					line := "/gpu " + verb + " " + form
					r := h.say(tc.user, line)
					if !strings.Contains(r.Text, "takes no arguments, but got "+quoted+".") {
						t.Errorf("%s: %q; want the word quoted as typed, %s", line, r.Text, quoted)
					}
					refusedWithAWorkingExample(t, h, tc.user, line, "takes no arguments")
				}
			}
		})
	}
}

// A job that names a team as a request does without its word (its channel, its name), not as
// team=T, is told how a job names it: for someone in the team the example names it as team=T;
// for someone not in it the sentence says so and the example leaves it out. Either is accepted.
func TestAJobNamingATeamWithoutTeamEqualsIsToldHow(t *testing.T) {
	for _, tc := range channelPolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			for _, form := range []string{tc.otherChannel, tc.other} {
				// With a mistake elsewhere, that mistake is refused, its example accepted.
				refusedWithAWorkingExample(t, h, tc.otherUser, "/gpu submit cuda-smoke "+form+" for=xyz", "for=xyz")
				refusedWithAWorkingExample(t, h, tc.user, "/gpu submit cuda-smoke "+form+" for=xyz", "for=xyz")
				line := "/gpu submit cuda-smoke " + form
				r := h.say(tc.otherUser, line)
				if ex := exampleIn(t, r); !strings.Contains(r.Text, "team="+tc.other) || !strings.HasSuffix(ex, " team="+tc.other) {
					t.Errorf("%s: %q; want the job with team=%s", line, r.Text, tc.other)
				}
				refusedWithAWorkingExample(t, h, tc.otherUser, line, "team="+tc.other)
				r = h.say(tc.user, line)
				if !strings.Contains(r.Text, "which you are not in") {
					t.Errorf("%s: %q; want it to say the asker is not in team %s", line, r.Text, tc.other)
				}
				notOffered(t, line, exampleIn(t, r), tc.other)
				refusedWithAWorkingExample(t, h, tc.user, line, "which you are not in")
			}
		})
	}
}

// A user group's mention where a team goes (@grp-vision), whose handle is near a team's, offers
// that team only to its members: someone not in it is told so, and the example, which leaves it
// out, agrees and is accepted.
func TestAGroupMentionOffersItsTeamOnlyToItsMembers(t *testing.T) {
	for _, tc := range []struct{ policy, user, member, group, team, class string }{
		{"testdata/fjord.yaml", "kari@fjord.example", "sigrid@fjord.example", "@grp-computational-linguistics-research", "computational-linguistics-research", "scratchpad"},
		{"testdata/harbor.yaml", "wiremu@harbor.example", "tane@harbor.example", "@hr-kelp", "kelp", "bench"},
		{"testdata/tokyo.yaml", "haru@sakura.example", "sora@sakura.example", "@vision-lab-all", "vision-lab", "jupyter"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			for _, line := range []string{
				"/gpu request 1 " + tc.class + " for 2h team " + tc.group,
				"/gpu quota request +1 " + tc.class + " team " + tc.group + " because a deadline",
				"/gpu submit cuda-smoke team=" + tc.group,
			} {
				r := h.say(tc.member, line)
				if !strings.Contains(r.Text, "did you mean team "+tc.team) || !strings.Contains(exampleIn(t, r), "team") {
					t.Errorf("%s: %q; want team %s offered to its member", line, r.Text, tc.team)
				}
				r = h.say(tc.user, line)
				msg, ex, _ := strings.Cut(r.Text, " Example: ")
				if strings.Contains(msg, "did you mean") || !strings.Contains(msg, `"`+tc.group+`" names a user group or a person, not a team, and you are not in team `+tc.team) {
					t.Errorf("%s: %q; want it to say the asker is not in team %s", line, msg, tc.team)
				}
				notOffered(t, line, ex, tc.team)
				refusedWithAWorkingExample(t, h, tc.user, line, "you are not in team")
			}
		})
	}
}
