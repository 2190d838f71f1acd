package policy

import "testing"

// TestAChannelWithoutQuotesIsRefused: YAML reads what follows " #" as a comment, so channel:
// #vision-gpu, unquoted, is no channel at all: the team's approvals and the weekly showback would
// go nowhere without a word. Policy check refuses it at its line with the quotes it needs.
func TestAChannelWithoutQuotesIsRefused(t *testing.T) {
	pairs := []string{`channel: "#vision-gpu"`, "channel: #vision-gpu"}
	pe := refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, exampleWith(t, pairs...), "channel: #vision-gpu"), `team vision: channel #vision-gpu must be in quotes, as YAML reads what follows " #" as a comment; e.g. channel: "#vision-gpu"`)

	// One written without its # gets one that works, in the quotes it needs.
	pairs = []string{`channel: "#vision-gpu"`, "channel: vision-gpu"}
	pe = refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, exampleWith(t, pairs...), "channel: vision-gpu"), `team vision: channel "vision-gpu" must start with #; e.g. channel: "#vision-gpu"`)

	pairs = []string{`showback: {schedule: "MON 09:00", channel: "#gpu-showback", dm_budget_owners: true}`,
		"showback:\n    schedule: \"MON 09:00\"\n    channel: #gpu-showback\n    platform_channel:  #gpu-platform   # where telemetry problems go"}
	src := exampleWith(t, pairs...)
	pe = refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, src, "channel: #gpu-showback"), `reports.showback.channel #gpu-showback must be in quotes, as YAML reads what follows " #" as a comment; e.g. channel: "#gpu-showback"`)
	wantProblem(t, pe, lineOf(t, src, "platform_channel:"), `reports.showback.platform_channel #gpu-platform must be in quotes, as YAML reads what follows " #" as a comment; e.g. platform_channel: "#gpu-platform"`)

	// A key left empty with a comment after it is no channel written without quotes.
	if _, err := Load([]byte(exampleWith(t, `channel: "#vision-gpu"`, "channel:   # none yet")), "p.yaml"); err != nil {
		t.Error(err)
	}
}
