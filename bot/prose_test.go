package bot

import (
	"strings"
	"testing"
)

// MapProse changes the prose of a reply and leaves the commands' code as it is: code spans and
// code blocks (a Slurm script's #SBATCH lines stay #SBATCH); a backtick that opens no code is prose.
func TestMapProseLeavesCodeAlone(t *testing.T) {
	up := func(s string, _ bool) string { return strings.ToUpper(s) }
	for in, want := range map[string]string{
		"ask *now*":                           "ASK *NOW*",
		"type `/gpu list` to see":             "TYPE `/gpu list` TO SEE",
		"script:\n```\n#SBATCH -n 1\n```\nok": "SCRIPT:\n```\n#SBATCH -n 1\n```\nOK",
		"a ` lone tick":                       "A ` LONE TICK",
		"a `span\nacross` lines":              "A `SPAN\nACROSS` LINES",
	} {
		if got := MapProse(in, up); got != want {
			t.Errorf("MapProse(%q) = %q, want %q", in, got, want)
		}
	}
}

// MapProse leaves a link as it is, up to the punctuation that ends the sentence around it.
func TestMapProseLeavesLinksAlone(t *testing.T) {
	up := func(s string, _ bool) string { return strings.ToUpper(s) }
	for in, want := range map[string]string{
		"sign in at https://sso.example/a_b?t=_x-_ then": "SIGN IN AT https://sso.example/a_b?t=_x-_ THEN",
		"see (http://x.example/~y).":                     "SEE (http://x.example/~y).",
		"`code` and https://z.example/q, done":           "`code` AND https://z.example/q, DONE",
		"no link: httpx://a_b":                           "NO LINK: HTTPX://A_B",
	} {
		if got := MapProse(in, up); got != want {
			t.Errorf("MapProse(%q) = %q, want %q", in, got, want)
		}
	}
}
