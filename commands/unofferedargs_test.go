package commands

import (
	"strings"
	"testing"
)

// A command this installation does not offer (/gpu report without reports, /gpu unlink, login
// and logout without single sign-on, the template commands without a catalog) is refused as not
// offered whatever follows it: before, "/gpu report a b c" was told how to write a report's
// week and team, with "/gpu report" as its example, which was then refused as not offered.
func TestACommandNotOfferedIsRefusedAsSoWhateverItsArguments(t *testing.T) {
	h := newHarness(t)
	for _, line := range []string{
		"/gpu report a b c",
		"/gpu report last week 1 interactive",
		"/gpu unlink <!channel>",
		"/gpu unlink",
		"/gpu login now",
		"/gpu logout everywhere",
		"/gpu template a b c",
		"/gpu submit",
		"/gpu submit cuda-smoke gpus=1 gpus=2",
	} {
		verb := strings.Fields(line)[1]
		refusedWithAWorkingExample(t, h, "alice@acme.example", line, "/gpu "+verb+" is not offered here")
	}
}
