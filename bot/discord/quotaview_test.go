package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// Someone whose DMs Discord refuses is told so where they wait for an answer by DM (a quota
// request), not where nothing comes by DM: /gpu quota only shows the team's use.
func TestAQuotaViewSaysNothingOfDMs(t *testing.T) {
	k := newKestrel(t)
	k.fake.BlockDMs(kTam)
	k.run(kin(kTam), "request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "l40s"}, discordtest.Opt{Name: "duration", Value: "1h"})
	if r := k.run(kin(kJorg), "approve", discordtest.Opt{Name: "lease", Value: "L-1"}); !strings.Contains(r.text(), "Approved L-1") {
		t.Fatalf("jörg's approval: %q", r.text())
	}
	if k.fake.Refused(discordtest.DMChannel(kTam)) == 0 {
		t.Fatal("no DM to tam was refused")
	}
	if got := k.run(kin(kTam), "quota").text(); strings.Contains(got, "DM") {
		t.Errorf("/gpu quota answered %q; it sends nothing by DM", got)
	}
	got := k.run(kin(kTam), "quota-request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "l40s"}, discordtest.Opt{Name: "reason", Value: "a deadline"})
	if !strings.Contains(got.text(), "not hear back by DM") {
		t.Errorf("/gpu quota-request answered %q; want it to say no DM will come", got.text())
	}
}
