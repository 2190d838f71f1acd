package commands

import (
	"strings"
	"testing"
)

// A team whose quota has no gpu_hours_per_week (or 0) has no weekly GPU-hour limit: its requests
// are admitted on its GPUs at once alone, /gpu quota and /gpu policy say there is no weekly limit
// rather than "0 left", and an approved quota increase (more GPUs at once) does not give it a
// weekly limit of the increase's hours, which would refuse what it could ask for before.
func TestATeamWithoutWeeklyGPUHoursHasNoWeeklyLimit(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
	}{
		{"omitted", "quota: {gpus: {dev: 2, bigiron: 4}, gpu_hours_per_week: 100}", "quota: {gpus: {dev: 2, bigiron: 4}}"},
		{"zero", "quota: {gpus: {dev: 2, bigiron: 4}, gpu_hours_per_week: 100}", "quota: {gpus: {dev: 2, bigiron: 4}, gpu_hours_per_week: 0}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessOn(t, policyVariant(t, otherPolicy, tc.old, tc.new))
			mustOK(t, h.say("vic@borealis.example", "/gpu request 4 bigiron for 24h")) // 96 GPU-hours
			q := mustOK(t, h.say("vic@borealis.example", "/gpu quota")).PlainText()
			if !strings.Contains(q, "96 used or committed this week, no weekly limit") {
				t.Errorf("/gpu quota says\n%s\nwant the 96 GPU-hours used and no weekly limit", q)
			}
			if p := mustOK(t, h.say("vic@borealis.example", "/gpu policy")).PlainText(); !strings.Contains(p, "vision: 2 dev GPUs and 4 bigiron GPUs at once, no weekly GPU-hour limit;") {
				t.Errorf("/gpu policy says\n%s\nwant vision with no weekly GPU-hour limit", p)
			}
			r := mustOK(t, h.say("vic@borealis.example", "/gpu quota request +1 dev for 2h because a deadline"))
			mustOK(t, h.say("vera@borealis.example", "/gpu approve "+leaseIn(t, r.Text).String()))
			mustOK(t, h.say("vic@borealis.example", "/gpu request 2 dev for 6h"))
			q = mustOK(t, h.say("vic@borealis.example", "/gpu quota")).PlainText()
			if !strings.Contains(q, "108 used or committed this week, no weekly limit") {
				t.Errorf("after an approved increase /gpu quota says\n%s\nwant 108 GPU-hours used and no weekly limit", q)
			}
		})
	}
}
