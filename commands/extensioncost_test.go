package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ferroPolicy is a policy of its own in currency cur, with class mill at price; an extension past
// mill's max_duration of 4h waits for the team's budget owner.
func ferroPolicy(t *testing.T, cur, price string) string {
	t.Helper()
	src := "organization: Ferro Foundry\ncurrency: " + cur + "\ntimezone: Asia/Tokyo\nclasses:\n" +
		"  - {name: mill, sku: A100, price_per_gpu_hour: " + price + ", max_gpus: 4, max_duration: 4h}\n" +
		"default_quota: {gpus: {mill: 1}, gpu_hours_per_week: 10}\nteams:\n" +
		"  - {name: anvil, idp_groups: [g-anvil], budget_owners: [bruno@ferro.example], quota: {gpus: {mill: 4}, gpu_hours_per_week: 200}}\n" +
		"exceptions:\n  - {name: long, when: request.duration > class.max_duration, why: Longer than the mill hands out}\n" +
		"approvals: {timeout: 24h, fallback_approvers: [forge-ops@ferro.example]}\nbackend: sim\ndirectory:\n" +
		"  - {user: greta@ferro.example, groups: [g-anvil]}\n  - {user: bruno@ferro.example, groups: [g-anvil]}\n" +
		"  - {user: forge-ops@ferro.example, groups: [ops]}\n" +
		"sim:\n  nodes:\n    - {name: m, count: 1, class: mill, gpus: 4}\n"
	file := filepath.Join(t.TempDir(), "ferro.yaml")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// An extension granted at once says what it costs, as a request's reply does: its GPUs for the
// time added at the price the lease was granted at (a later change of the catalog's price does not
// re-price it), in the currency's decimals, with the lease's new end. An extension that waits for a
// budget owner tells its requester the same once it is approved.
func TestAnExtensionSaysWhatItCosts(t *testing.T) {
	for _, tc := range []struct {
		cur, price, gpus, by, cost, per string
	}{
		{"JPY", "75.5", "2", "2h", "302 JPY", "75.5 JPY"},
		{"KWD", "0.137", "1", "2h", "0.274 KWD", "0.137 KWD"},
		{"EUR", "3.17", "1", "1h30m", "4.76 EUR", "3.17 EUR"}, // 4.755, rounded half up
	} {
		t.Run(tc.cur, func(t *testing.T) {
			h := newHarnessOn(t, ferroPolicy(t, tc.cur, tc.price))
			id := leaseIn(t, mustOK(t, h.say("greta@ferro.example", "/gpu request "+tc.gpus+" mill for 1h")).Text)
			// The catalog's price changes after the grant: the lease keeps its own.
			cls, _ := h.svc.Policy.Class("mill")
			cls.PricePerGPUHour *= 3
			r := mustOK(t, h.say("greta@ferro.example", "/gpu extend "+id.String()+" "+tc.by))
			end := h.lease(id).ExpiresAt
			want := "Estimated cost of the " + tc.by + " added: " + tc.cost + " (" + tc.per + " per GPU-hour)."
			if !strings.Contains(r.Text, want) || !strings.Contains(r.Text, h.bot.when(end)) {
				t.Errorf("/gpu extend %s %s: %q; want it to say %q and the new end %s", id, tc.by, r.Text, want, h.bot.when(end))
			}

			// Past max_duration: it waits for bruno, whose card gives its cost; once he approves,
			// greta is told the cost as the reply above tells it.
			w := mustOK(t, h.say("greta@ferro.example", "/gpu extend "+id.String()+" 4h"))
			ext := leaseIn(t, w.Text[strings.Index(w.Text, " as ")+len(" as "):])
			h.notices("greta@ferro.example")
			mustOK(t, h.say("bruno@ferro.example", "/gpu approve "+ext.String()))
			var told string
			for _, n := range h.notices("greta@ferro.example") {
				if strings.Contains(n.Text, "was approved by") {
					told = n.Text
				}
			}
			cost4h := map[string]string{"JPY": "604 JPY", "KWD": "0.548 KWD", "EUR": "12.68 EUR"}[tc.cur]
			want = "Estimated cost of the 4h added: " + cost4h + " (" + tc.per + " per GPU-hour)."
			if end := h.lease(id).ExpiresAt; !strings.Contains(told, want) || !strings.Contains(told, h.bot.when(end)) {
				t.Errorf("the requester of an approved extension was told %q; want it to say %q and the new end %s", told, want, h.bot.when(end))
			}
		})
	}
}
