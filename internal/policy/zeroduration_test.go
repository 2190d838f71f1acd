package policy

import "testing"

// TestAZeroOrShortDurationIsNotReadAsTheDefault: approvals.timeout: 0 is not "24h", nor is
// oidc.recheck: 0; each is refused at its line, with the value as written and one that works,
// rather than read as the default without a word. A recheck under a minute is said as written
// (30s), not rounded to the 1m it is refused for being under.
func TestAZeroOrShortDurationIsNotReadAsTheDefault(t *testing.T) {
	src := exampleWith(t)
	pe := refused(t, "  timeout: 24h", "  timeout: 0")
	wantProblem(t, pe, lineOf(t, src, "  timeout: 24h"), "approvals.timeout must be longer than 0: an exception nobody decides is denied after it; e.g. timeout: 24h")
	for _, c := range []struct{ old, new string }{{"recheck: 24h", "recheck: 0"}, {"recheck: 24h", "recheck: 30s"}, {"recheck: 24h", "recheck: 0m"}} {
		pe := refused(t, c.old, c.new)
		wantProblem(t, pe, lineOf(t, src, c.old), "oidc.recheck must be between 1m and 24h (groups are read again at least daily), not "+c.new[len("recheck: "):]+"; e.g. recheck: 24h")
	}
}
