package policy

import (
	"strconv"
	"testing"
)

// TestAPersonOrAChannelWrittenTwiceIsRefused: names compare upper and lower case aside, so a
// second directory entry for a person (Bob@acme.example after bob@acme.example) would never be
// read, its groups and accounts lost, and a channel given two Discord ids would post to either;
// policy check refuses the second at its line, naming the first.
func TestAPersonOrAChannelWrittenTwiceIsRefused(t *testing.T) {
	pairs := []string{"  - {user: maya@acme.example, groups: [ai-language]}\n",
		"  - {user: maya@acme.example, groups: [ai-language]}\n  - {user: Bob@acme.example, groups: [ai-language]}\n"}
	src := exampleWith(t, pairs...)
	pe := refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, src, "Bob@acme.example"), "directory entry Bob@acme.example is bob@acme.example again (first at line "+
		strconv.Itoa(lineOf(t, src, "{user: bob@acme.example"))+"), whose second entry would never be read; put their groups and accounts in one entry, e.g. {user: bob@acme.example, groups: [ai-vision, ai-language]}")

	pairs = []string{`    "#gpu-showback": "200000000000000003"` + "\n", `    "#gpu-showback": "200000000000000003"` + "\n" + `    "#Vision-GPU": "200000000000000009"` + "\n"}
	src = exampleWith(t, pairs...)
	pe = refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, src, `"#Vision-GPU"`), `discord.channels names #vision-gpu twice (#vision-gpu and #Vision-GPU), so its posts could go to either; keep one, e.g. "#vision-gpu": "200000000000000001"`)
}
