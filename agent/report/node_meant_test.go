package report

import "testing"

// A name refused as no node name is put right, for a refusal's example, as the name it was likely
// meant as: a space or another character a node name does not take becomes a hyphen, and what it
// cannot start or end with goes; the example is then a node name.
func TestANodeNameRefusedIsPutRightForTheExample(t *testing.T) {
	for _, c := range []struct{ typed, want string }{
		{"reef 08", "reef-08"},
		{"dgxh 03", "dgxh-03"},
		{"-gpu7", "gpu7"},
		{"kelp/12!", "kelp-12"},
		{"gpu  01", "gpu-01"},
		{"???", "gpu-01"},
		{"", "gpu-01"},
	} {
		got := NodeNameMeant(c.typed)
		if got != c.want {
			t.Errorf("NodeNameMeant(%q) = %q, want %q", c.typed, got, c.want)
		}
		if p := NodeNameProblem(got); p != "" {
			t.Errorf("NodeNameMeant(%q) = %q, which is refused: %s", c.typed, got, p)
		}
	}
}
