package commands

import "testing"

// A quota request naming a data class (data silt), as a request does, is told that a quota
// request takes none, with the quota request as typed without it as the example; before, "data
// silt" was called no duration and the example left out the length typed.
func TestAQuotaRequestTakesNoDataClass(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"quota request +2 tidal data silt because poster session", `"data silt" is not part of a quota request, which takes no data class; leave it out.`, "quota request +2 tidal because poster session"},
		{"quota request +2 tidal for 2d data silt because poster session", `"data silt" is not part of a quota request`, "quota request +2 tidal for 2d because poster session"},
		{"quota request +1 abyss data brine for 3d because a deadline", `"data brine" is not part of a quota request`, "quota request +1 abyss for 3d because a deadline"},
		{"quota request +2 tidal team reef data @silt because poster session", `"data @silt" is not part of a quota request`, "quota request +2 tidal team reef because poster session"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
