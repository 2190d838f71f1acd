package commands

import "testing"

// A quota request for a class the policy does not have asks, in its example, for the class
// nearest to what was typed (as "did you mean" does), not the policy's first.
func TestAQuotaRequestForAMisspelledClassAsksForTheNearest(t *testing.T) {
	h := kelpOn(t)
	refusedAs(t, h, "olin@kelp.example", "quota request +2 abyse for 2w because a survey", `There is no class "abyse"`, "quota request +2 abyss for 14d because a survey")
	refusedAs(t, h, "olin@kelp.example", "quota request +1 abys because a survey", `There is no class "abys"`, "quota request +1 abyss because a survey")
	// A request, an estimate and a job the same way.
	refusedAs(t, h, "olin@kelp.example", "request 2 abyse for 3h", `There is no class "abyse"`, "request 2 abyss for 3h")
	refusedAs(t, h, "olin@kelp.example", "estimate 2 abysss 3h", `There is no class "abysss"`, "estimate 2 abyss 3h")
	refusedAs(t, h, "olin@kelp.example", "submit depth-probe class=abyse size=128", `There is no class "abyse"`, "submit depth-probe class=abyss size=128")
	// Nothing near: the class the team has GPUs of first, as before.
	refusedAs(t, h, "olin@kelp.example", "quota request +1 zzzzzz because a survey", `There is no class "zzzzzz"`, "quota request +1 tidal because a survey")
}
