package commands

import (
	"strings"
	"testing"
)

// A count or a length written with digits other than 0-9 (٢, ٣h) is refused in one sentence, and
// the example is the command as typed with only that put right: the words after it (the length,
// the template's parameters, the team, the data class) stay. Typed back, the example is taken.
func TestAnExampleOfOtherDigitsKeepsTheRestTyped(t *testing.T) {
	for _, tc := range []struct{ ask, want string }{
		{"/gpu estimate ٢ fer 3h", "/gpu estimate 2 fer 3h"},
		{"/gpu estimate 2 fer ٣h٣٠m", "/gpu estimate 2 fer 3h30m"},
		{"/gpu request ٢ cuivre for 3h data interne", "/gpu request 2 cuivre for 3h data interne"},
		{"/gpu request 1 cuivre for ٣h data interne", "/gpu request 1 cuivre for 3h data interne"},
		{"/gpu quota request +٢ fer for ٣h because un gros lot", "/gpu quota request +2 fer for 3h because un gros lot"},
		{"/gpu submit pytorch-ddp for=٣h script=vision.py data interne", "/gpu submit pytorch-ddp for=3h script=vision.py data interne"},
		{"/gpu submit pytorch-ddp class=fer for=٣h script=vision.py", "/gpu submit pytorch-ddp for=3h class=fer script=vision.py"},
		{"/gpu submit batch-inference for=٣h model=resnet", "/gpu submit batch-inference for=3h model=resnet input=datasets/val output=predictions/val"},
	} {
		t.Run(tc.ask, func(t *testing.T) {
			h := templatesOn(t, baobabPolicy)
			r := h.say("awa@baobab.example", tc.ask)
			if !strings.Contains(r.Text, "digits other than 0-9") {
				t.Fatalf("%s: %q; want it refused for its digits", tc.ask, r.Text)
			}
			if got := exampleIn(t, r); got != tc.want {
				t.Fatalf("%s:\n got example %q\nwant %q", tc.ask, got, tc.want)
			}
			if again := h.say("awa@baobab.example", tc.want); again.Error {
				t.Errorf("the example %s is refused: %s", tc.want, again.Text)
			}
		})
	}
}
