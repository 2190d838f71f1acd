package commands

import (
	"strings"
	"testing"
)

// The extra GPUs of a quota request are read as the number they are: written without their +,
// with digits other than 0-9, or more than any request holds, they are refused in one sentence
// that says which, and the example is the quota request typed with only that put right (the
// class, the length and the reason kept), which, typed back, is asked.
func TestAQuotaRequestsExtraGPUsAreReadAsTheNumberTyped(t *testing.T) {
	for _, tc := range []struct{ ask, says, want string }{
		{"/gpu quota request +5000 fer for 3h because un gros lot", "+5000 GPUs is more than any quota request can hold (at most +4096).",
			"/gpu quota request +4096 fer for 3h because un gros lot"},
		{"/gpu quota request +99999999999999999999 fer because un gros lot", "+99999999999999999999 GPUs is more than any quota request can hold (at most +4096).",
			"/gpu quota request +4096 fer because un gros lot"},
		{"/gpu quota request ٢ fer for 3h because un gros lot", "write the number with the digits 0-9: +2.",
			"/gpu quota request +2 fer for 3h because un gros lot"},
		{"/gpu quota request +٢ fer for ٣h because un gros lot", "write the duration with the digits 0-9: 3h.",
			"/gpu quota request +2 fer for 3h because un gros lot"},
		{"/gpu quota request 2 fer for 3h because un gros lot", "\"2\" should be the extra GPUs written like +2.",
			"/gpu quota request +2 fer for 3h because un gros lot"},
		{"/gpu quota request +0 fer because un gros lot", "\"+0\" is not a number of extra GPUs like +4.",
			"/gpu quota request +1 fer because un gros lot"},
	} {
		t.Run(tc.ask, func(t *testing.T) {
			h := newHarnessOn(t, baobabPolicy)
			r := h.say("awa@baobab.example", tc.ask)
			if !strings.Contains(r.Text, tc.says) || strings.Count(strings.TrimSuffix(r.Text, " Example: "+exampleIn(t, r)), ". ") > 0 {
				t.Errorf("%s:\n got %q\nwant one sentence saying %q", tc.ask, r.Text, tc.says)
			}
			if got := exampleIn(t, r); got != tc.want {
				t.Fatalf("%s:\n got example %q\nwant %q", tc.ask, got, tc.want)
			}
			mustOK(t, h.say("awa@baobab.example", tc.want))
		})
	}
}
