package policy

import "testing"

// TestADiscordChannelKeyWithoutQuotesIsRefused: under discord.channels, a channel written as a key
// without quotes (#optics-gpu: "118…") starts a line YAML reads as a comment, so the policy had no
// Discord channel for it and said nothing. Policy check refuses it at its line with the quotes it
// needs, as it does a team's channel: #x; a comment that is one (# the channels…) is left alone.
func TestADiscordChannelKeyWithoutQuotesIsRefused(t *testing.T) {
	const showback = `    "#gpu-showback": "200000000000000003"` + "\n"
	pairs := []string{showback, showback + `    #optics-gpu: "118000000000000001"` + "\n    #Lab_GPU: 118000000000000002   # the lab\n    # old: 1\n"}
	src := exampleWith(t, pairs...)
	pe := refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, src, "#optics-gpu:"), `discord.channels: #optics-gpu must be in quotes, as YAML reads a line that starts with # as a comment; e.g. "#optics-gpu": "118000000000000001"`)
	wantProblem(t, pe, lineOf(t, src, "#Lab_GPU:"), `discord.channels: #Lab_GPU must be in quotes, as YAML reads a line that starts with # as a comment; e.g. "#Lab_GPU": "118000000000000002"`)
	if len(pe.Problems) != 2 {
		t.Errorf("want two problems, got:\n%v", pe)
	}

	// Every channel written so: the map is empty, and each is still refused.
	pairs = []string{`    "#vision-gpu": "200000000000000001"` + "\n" + showback, `    #vision-gpu: "200000000000000001"` + "\n"}
	src = exampleWith(t, pairs...)
	wantProblem(t, refused(t, pairs...), lineOf(t, src, "#vision-gpu:"), `discord.channels: #vision-gpu must be in quotes, as YAML reads a line that starts with # as a comment; e.g. "#vision-gpu": "200000000000000001"`)

	// A comment after the map, at the indentation of the keys above it, is no channel.
	if _, err := Load([]byte(exampleWith(t, showback, showback+"\n# Single sign-on: 1\n")), "p.yaml"); err != nil {
		t.Error(err)
	}
}
