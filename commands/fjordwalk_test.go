package commands

import (
	"strings"
	"testing"
	"time"
)

// walkPolicies are policies with names the example does not use, each with someone in a team,
// that team's channel, a class the team has GPUs in and a team the person does not own.
var walkPolicies = []struct{ policy, user, channel, team, class, other string }{
	{"testdata/fjord.yaml", "kari@fjord.example", "#infra-gpu", "ml-infra2", "bigiron", "computational-linguistics-research"},
	{"testdata/harbor.yaml", "wiremu@harbor.example", "#quake-lab", "seismic", "rack", "kelp"},
}

// A refusal that leaves out a part of the command keeps what was typed in its example: the
// GPUs, class and length of a quota request without its reason, the GPUs and class of an
// estimate without its length, the GPUs of a request typed after its class; and the example is
// accepted when typed back.
func TestARefusalOfAnIncompleteCommandKeepsWhatWasTyped(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for line, want := range map[string]string{
				"/gpu quota request +3 " + tc.class + " for 3d":         "/gpu quota request +3 " + tc.class + " for 3d because ",
				"/gpu quota request +3 " + tc.class + " for 3d because": "/gpu quota request +3 " + tc.class + " for 3d because ",
				"/gpu estimate 3 " + tc.class:                           "/gpu estimate 3 " + tc.class + " ",
				"/gpu estimate 3 " + tc.class + " for":                  "/gpu estimate 3 " + tc.class + " ",
				"/gpu estimate " + tc.class:                             "/gpu estimate 1 " + tc.class + " ",
				"/gpu request " + tc.class + " 3 for 2h":                "/gpu request 3 " + tc.class + " for 2h",
			} {
				ex := exampleIn(t, h.say(tc.user, line))
				if !strings.HasPrefix(ex, want) {
					t.Errorf("%s: example %q; want it to begin %q", line, ex, want)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "")
			}
		})
	}
}

// A team's channel typed in a request without the word team is refused saying how a request
// names a team, not that the class is already given, and the example names that team.
func TestAChannelInARequestWithoutTeamIsRefusedNamingTheTeam(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, line := range []string{
				"/gpu request 1 " + tc.class + " for 2h " + tc.channel,
				"/gpu request 1 " + tc.channel + " for 2h",
			} {
				r := h.say(tc.user, line)
				if strings.Contains(r.Text, "class") {
					t.Errorf("%s: %q; want no word of a class", line, r.Text)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "team "+tc.team)
				if ex := exampleIn(t, r); !strings.Contains(ex, " team "+tc.team) {
					t.Errorf("%s: example %q; want it to name team %s", line, ex, tc.team)
				}
			}
		})
	}
}

// /gpu extend with a lease id of one's own and no length is refused with the example that
// extends that lease, not the asker's latest one; a lease id that is not theirs gets one of
// theirs.
func TestAnExtensionWithoutItsLengthKeepsTheLeaseTyped(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for range 2 {
				if r := h.say(tc.user, "/gpu request 1 "+tc.class+" for 1h"); r.Error {
					t.Fatal(r.Text)
				}
			}
			for line, want := range map[string]string{
				"/gpu extend L-1":     "/gpu extend L-1 2h",
				"/gpu extend l-1":     "/gpu extend L-1 2h",
				"/gpu extend L-1 for": "/gpu extend L-1 2h",
				"/gpu extend L-99":    "/gpu extend L-2 2h",
			} {
				if ex := exampleIn(t, h.say(tc.user, line)); ex != want {
					t.Errorf("%s: example %q; want %q", line, ex, want)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "how much longer")
			}
		})
	}
}

// /gpu quota with a team and more words is refused with the example that shows that team's
// quota, the team named by its channel too, not the asker's own.
func TestAQuotaOfATeamWithMoreWordsKeepsTheTeam(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for line, want := range map[string]string{
				"/gpu quota " + tc.other + " " + tc.class: "/gpu quota " + tc.other,
				"/gpu quota " + tc.channel + " this week": "/gpu quota " + tc.team,
				"/gpu quota " + tc.class + " " + tc.other: "/gpu quota " + tc.other,
			} {
				if ex := exampleIn(t, h.say(tc.user, line)); ex != want {
					t.Errorf("%s: example %q; want %q", line, ex, want)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "at most a team")
			}
		})
	}
}

// An expiry warning whose extension meets several published rules names them in one clause,
// as a request's reply does, not one "meets the published … rule" for each.
func TestAnExpiryWarningNamesTheRulesItsExtensionMeetsOnce(t *testing.T) {
	h := newHarnessOn(t, "testdata/fjord.yaml")
	const kari, ingrid = "kari@fjord.example", "ingrid@fjord.example"
	// Whole nodes (rule whole-node), which take the team past its GPUs (rule past-quota).
	mustOK(t, h.say(kari, "/gpu request 2 scratchpad for 1h exclusive"))
	mustOK(t, h.say(ingrid, "/gpu approve L-1"))
	h.notices(kari)
	h.advance(50 * time.Minute)
	var warning string
	for _, r := range h.notices(kari) {
		if strings.Contains(r.Text, "ends at") {
			warning = r.Text
		}
	}
	if !strings.Contains(warning, "meets the published whole-node (Whole nodes held alone) and past-quota (Beyond the team quota) rules") {
		t.Errorf("the expiry warning: %q; want both rules named in one clause", warning)
	}
}

// A word before the class that is no class of the policy ("2 gpus of train", "two train") is
// refused as the word that does not belong, not as though it were the class, and the example
// asks for the class typed.
func TestAStrayWordBeforeTheClassIsRefusedAsThatWord(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for line, tt := range map[string]struct{ word, example string }{
				"/gpu request 2 gpus of " + tc.class + " for 2h": {`"of"`, "/gpu request 2 " + tc.class + " for 2h"},
				"/gpu request two " + tc.class + " for 2h":       {`"two"`, "/gpu request 1 " + tc.class + " for 2h"},
				"/gpu request 1 Of " + tc.class:                  {`"Of"`, "/gpu request 1 " + tc.class + " for 4h"},
			} {
				r := h.say(tc.user, line)
				if !strings.HasPrefix(r.Text, tt.word+" is not part of a request; the class is "+tc.class+".") {
					t.Errorf("%s: %q; want it to refuse %s, the class being %s", line, r.Text, tt.word, tc.class)
				}
				if ex := exampleIn(t, r); ex != tt.example {
					t.Errorf("%s: example %q; want %q", line, ex, tt.example)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "not part of a request")
			}
		})
	}
}

// An estimate of a number that is no count of GPUs is refused for it with an example that keeps
// the class and the length typed.
func TestAnEstimateOfABadCountKeepsTheClassAndLength(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for line, says := range map[string]string{
				"/gpu estimate 0 " + tc.class + " 3h":     "at least 1",
				"/gpu estimate -2 " + tc.class + " 3h":    "at least 1",
				"/gpu estimate 99999 " + tc.class + " 3h": "more than any request",
			} {
				if ex := exampleIn(t, h.say(tc.user, line)); ex != "/gpu estimate 1 "+tc.class+" 3h" {
					t.Errorf("%s: example %q; want /gpu estimate 1 %s 3h", line, ex, tc.class)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, says)
			}
		})
	}
}

// A budget owner of every team the policy lists, who is no platform admin, reads in /gpu
// approvals the week's figures of those teams, named, not of all teams: a request of a team the
// policy does not list (on the default quota), which they do not decide, is not counted.
func TestApprovalsOfAnOwnerOfEveryTeamCountOnlyTheirTeams(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, "testdata/fjord.yaml",
		"budget_owners: [ingrid@fjord.example, olav@fjord.example]", "budget_owners: [ingrid@fjord.example, olav@fjord.example, boss@fjord.example]",
		"budget_owners: [clr-leads]", "budget_owners: [clr-leads, boss@fjord.example]",
		"  - {user: ops@fjord.example, groups: [ops]}", "  - {user: ops@fjord.example, groups: [ops]}\n  - {user: boss@fjord.example, groups: [directors]}"))
	mustOK(t, h.say("stray@fjord.example", "/gpu request 1 scratchpad for 1h")) // team nothing, not listed
	r := mustOK(t, h.say("boss@fjord.example", "/gpu approvals"))
	if want := "This week in teams ml-infra2 and computational-linguistics-research: 0 human decisions on 0 requests"; !strings.Contains(r.Text, want) {
		t.Errorf("/gpu approvals of an owner of both teams: %q; want %q", r.Text, want)
	}
	if r := mustOK(t, h.say("ops@fjord.example", "/gpu approvals")); !strings.Contains(r.Text, "This week in all teams: 0 human decisions on 1 request") {
		t.Errorf("/gpu approvals of a fallback approver: %q; want every team's requests counted", r.Text)
	}
}

// A team's channel mistyped by a letter (#infra-gpux) is answered with the channel meant and its
// team, wherever a team goes, with the command for that team as the example.
func TestAMistypedChannelNamesTheChannelMeant(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			typo := tc.channel + "x"
			want := "did you mean " + tc.channel + ", the channel of team " + tc.team + "?"
			for line, example := range map[string]string{
				"/gpu quota " + typo: "/gpu quota " + tc.team,
				"/gpu request 1 " + tc.class + " for 1h team " + typo: "/gpu request 1 " + tc.class + " for 1h team " + tc.team,
			} {
				if ex := exampleIn(t, h.say(tc.user, line)); ex != example {
					t.Errorf("%s: example %q; want %q", line, ex, example)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, want)
			}
		})
	}
}

// A word a request does not take after its class (until 5pm, because urgent) is refused as a
// word no request takes, naming what a request takes, not as though it were a second class; a
// second class, or one mistyped, is still refused as the class given twice.
func TestAWordNoRequestTakesIsNotCalledASecondClass(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, line := range []string{
				"/gpu request 1 " + tc.class + " for 2h until 5pm",
				"/gpu request 1 " + tc.class + " for 2h because urgent",
			} {
				if r := h.say(tc.user, line); strings.Contains(r.Text, "the class is already") {
					t.Errorf("%s: %q; want it not called a second class", line, r.Text)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "is not part of a request, which takes a number of GPUs, a class,")
			}
			refusedWithAWorkingExample(t, h, tc.user, "/gpu request 1 "+tc.class+" for 2h "+tc.class+"x", "the class is already "+tc.class)
		})
	}
}
