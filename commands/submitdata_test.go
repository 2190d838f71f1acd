package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// A job names the data class it touches as a request does, with the same word (data CLASS): the
// same rules read it and the same budget owners decide, and its approval message names it. Bad
// input is refused as a request's is, with an example on the template typed.
func TestASubmittedJobNamesItsDataClass(t *testing.T) {
	h := tokyoHarness(t)
	// Cleared for phi: it starts, as a request for phi would.
	r := mustOK(t, h.say(haru, "/gpu submit cuda-smoke data phi"))
	if strings.Contains(r.Text, "waits for approval") {
		t.Errorf("a job on a data class its team is cleared for: %s", r.Text)
	}
	if l := h.lease(leaseIn(t, r.Text)); l.DataClass != "phi" {
		t.Errorf("the job's lease has data class %q, want phi", l.DataClass)
	}
	// Not cleared for genomic: the published rule on data classes sends it to the budget owner,
	// who is told which data class it touches.
	r = mustOK(t, h.say(haru, "/gpu submit cuda-smoke size=1024 data genomic"))
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "restricted-data") {
		t.Fatalf("a job on a data class its team is not cleared for: %s", r.Text)
	}
	id := leaseIn(t, r.Text).String()
	var asked string
	for _, n := range h.notices(kenji) {
		if strings.Contains(n.Text, id) {
			asked = texts([]bot.Reply{n})
		}
	}
	if !strings.Contains(strings.ToLower(asked), "data class genomic") || !strings.Contains(asked, "cuda-smoke") {
		t.Errorf("the approval message of %s: %q; want it to name data class genomic and template cuda-smoke", id, asked)
	}
	if l := h.lease(leaseIn(t, r.Text)); l.Params["size"] != "1024" {
		t.Errorf("the job's parameters: %v", l.Params)
	}

	for ask, want := range map[string]string{
		"/gpu submit cuda-smoke data":               `"data" must be followed by a data class. Example: /gpu submit cuda-smoke size=4096 data open`,
		`/gpu submit cuda-smoke data "p h i"`:       `"p h i" is not a data class, which is one word of the letters a to z, digits, dots, - and _. Example: /gpu submit cuda-smoke size=4096 data open`,
		"/gpu submit cuda-smoke data phi data open": `The command gives its data class twice; give it once. Example: /gpu submit cuda-smoke data phi`,
		"/gpu submit cuda-smoke data=phi":           `"data=phi" is no parameter of cuda-smoke; a job names its data class as a request does, with data phi. Example: /gpu submit cuda-smoke data phi`,
	} {
		r := h.say(haru, ask)
		if !r.Error || r.Text != want {
			t.Errorf("%s:\n got %q\nwant %q", ask, r.Text, want)
		}
	}

	// Help and the platforms' typed options follow from the table: submit takes data as request does.
	help := texts([]bot.Reply{h.say(haru, "/gpu help submit")})
	if !strings.Contains(help, "[data CLASS]") || !strings.Contains(help, "`data CLASS`, optional: the data class the work touches, one of the data classes of team proteomics: open (the default) or phi") {
		t.Errorf("/gpu help submit:\n%s", help)
	}
	s, _ := Lookup("submit")
	if got := s.Text(map[string]string{"template": "cuda-smoke", "data": "phi"}); got != "/gpu submit cuda-smoke data phi" {
		t.Errorf("a typed submit with data phi reads as %q", got)
	}
}
