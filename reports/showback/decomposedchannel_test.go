package showback_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/reports/showback"
)

// A team's channel with an accented letter may be typed with the letter as one character (ü, as
// most keyboards type it) or as the plain letter and a combining accent (u and U+0308, as text
// copied from macOS often holds it). Both look the same and are the same channel: quartermaster
// report --team names the team by either, where it answered `"#kühlung" is the channel of no
// team`, quoting a channel that looks exactly like the team's own. (A policy written decomposed is
// read in NFC when it is loaded: internal/policy's tests.)
func TestAChannelTypedWithACombiningAccentNamesItsTeam(t *testing.T) {
	for _, c := range []struct{ inPolicy, typed string }{
		{"#k\u00fchlung", "#ku\u0308hlung"}, // typed decomposed
		{"#k\u00fchlung", "#k\u00fchlung"},  // typed composed
	} {
		p := oddPolicy(t, oddCase{zone: "Australia/Lord_Howe", currency: "BHD", price: "0.4375"})
		p.Teams[0].Channel = c.inPolicy
		svc := &showback.Service{Policy: p, Source: formerTeams{}}
		got, err := svc.ResolveTeam(context.Background(), c.typed)
		if err != nil || got != "isla" {
			t.Errorf("policy channel %+q, typed %+q: %q, %v; want team isla", c.inPolicy, c.typed, got, err)
		}
		// Without the accent it is still the channel meant, named as the policy writes it.
		_, err = svc.ResolveTeam(context.Background(), "#kuhlung")
		if err == nil || !strings.Contains(err.Error(), "did you mean "+c.inPolicy+", the channel of team isla?") {
			t.Errorf("policy channel %+q, typed #kuhlung: %v; want the channel meant named", c.inPolicy, err)
		}
	}
}
