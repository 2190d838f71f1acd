package main

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/policy"
)

// TestSlackFormOffersEveryClassLength: the request form's duration menu reaches each class's
// max_duration, however long: a policy whose classes allow 30 days without approval offers 7d,
// 14d and 30d beside the usual lengths, and one whose class allows 45m offers 45m, all shortest
// first.
func TestSlackFormOffersEveryClassLength(t *testing.T) {
	t.Parallel()
	load := func(classes string) *App {
		t.Helper()
		p, err := policy.Load([]byte("organization: X\nclasses:\n"+classes+"sim:\n  nodes:\n    - {name: n, count: 1, class: a, gpus: 8}\n"), "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return &App{Policy: p}
	}
	ch := slackChoices(load("  - {name: a, max_gpus: 8, max_duration: 30d}\n  - {name: b, max_gpus: 1, max_duration: 36h}\n"))
	for _, want := range []string{"30m", "2h", "1d", "1d12h", "3d", "7d", "14d", "30d"} {
		if !slices.Contains(ch.Durations, want) {
			t.Errorf("a 30d class: the form offers %v, without %s", ch.Durations, want)
		}
	}
	if got := strings.Join(ch.Durations, " "); got != "30m 1h 2h 4h 8h 12h 1d 1d12h 2d 3d 7d 14d 30d" {
		t.Errorf("durations in the menu: %s", got)
	}
	ch = slackChoices(load("  - {name: a, max_gpus: 1, max_duration: 45m}\n"))
	if got := strings.Join(ch.Durations, " "); !strings.HasPrefix(got, "30m 45m 1h ") || strings.Contains(got, "7d") || ch.DefaultDuration != "45m" {
		t.Errorf("a 45m class: durations %s, starting at %s", got, ch.DefaultDuration)
	}
	// A form that starts on a class starts at that class's length (the first's, or the class a
	// request naming none would get).
	ch = slackChoices(load("  - {name: a, max_gpus: 1, max_duration: 8h}\n  - {name: b, max_gpus: 1, max_duration: 45m}\n"))
	if ch.DefaultDuration != "2h" || ch.Classes[0].Duration != "2h" || ch.Classes[1].Duration != "45m" {
		t.Errorf("classes of 8h and 45m: the form starts at %s, on a at %s, on b at %s", ch.DefaultDuration, ch.Classes[0].Duration, ch.Classes[1].Duration)
	}
}

// TestSlackFormClassLabelsKeepThePrice: a class of the longest name with a long SKU is offered in
// the form's menu within Slack's 75 characters of an option, its name and price whole and the SKU
// shortened, rather than the price cut off the end.
func TestSlackFormClassLabelsKeepThePrice(t *testing.T) {
	t.Parallel()
	p, err := policy.LoadFile("../../commands/testdata/big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ch := slackChoices(&App{Policy: p})
	if len(ch.Classes) != 40 {
		t.Fatalf("%d classes in the form", len(ch.Classes))
	}
	for _, c := range ch.Classes {
		if n := utf8.RuneCountInString(c.Label); n > 75 || !strings.HasPrefix(c.Label, c.Value+" — H100") || !strings.HasSuffix(c.Label, ", 3.25 EUR/GPU-h") {
			t.Errorf("class %s is offered as %q (%d characters)", c.Value, c.Label, n)
		}
	}
	// A label that fits is left whole.
	small := slackChoices(load(t, "  - {name: a, sku: L40S, price_per_gpu_hour: 0.9, max_gpus: 1, max_duration: 8h}\n"))
	if got := small.Classes[0].Label; got != "a — L40S, $0.90/GPU-h" {
		t.Errorf("a short class is offered as %q", got)
	}
}

func load(t *testing.T, classes string) *App {
	t.Helper()
	p, err := policy.Load([]byte("organization: X\nclasses:\n"+classes+"sim:\n  nodes:\n    - {name: n, count: 1, class: a, gpus: 8}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return &App{Policy: p}
}
