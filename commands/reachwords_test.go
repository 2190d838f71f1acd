package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ploverPolicy = "testdata/plover.yaml"

// withoutApprovalOf is the catalog's "Without approval" field of class, as user sees it.
func withoutApprovalOf(t *testing.T, h *harness, user, class string) string {
	t.Helper()
	r := mustOK(t, h.say(user, "/gpu catalog"))
	v := withoutApproval(r, class)
	if v == "" {
		t.Fatalf("the catalog has no Without approval for %s: %+v", class, r.Sections)
	}
	return v
}

// The catalog and /gpu policy say what the rules let through without approval, not the class's
// max_gpus and max_duration where a rule sends less to a budget owner for everyone, naming the
// rule; where a rule does so for one team only, each team's members read their own figure, with
// their team named. What they say holds: the figure is granted, one more waits for approval.
func TestTheCatalogSaysWhatTheRulesLetThrough(t *testing.T) {
	h := newHarnessOn(t, ploverPolicy)
	const joao, rita = "joao@plover.example", "rita@plover.example" // tides, dunes

	want := "up to 8 GPUs (rule big-request above that) for up to 1d (rule long-run beyond that)"
	if got := withoutApprovalOf(t, h, joao, "osprey"); got != want {
		t.Errorf("osprey in the catalog: %q; want %q", got, want)
	}
	if got := withoutApprovalOf(t, h, joao, "wren"); got != "up to 4 GPUs for up to 12h for team tides" {
		t.Errorf("wren for tides: %q", got)
	}
	if got := withoutApprovalOf(t, h, rita, "wren"); got != "up to 1 GPU (rule dunes-wren above that) for up to 12h for team dunes" {
		t.Errorf("wren for dunes: %q", got)
	}
	p := mustOK(t, h.say(joao, "/gpu policy"))
	var classes string
	for _, s := range p.Sections {
		if s.Title == "Classes" {
			classes = s.Text
		}
	}
	if want := "up to 8 GPUs (rule big-request above that) for up to 1d (rule long-run beyond that) without approval"; !strings.Contains(classes, want) {
		t.Errorf("/gpu policy's classes %q do not say %q", classes, want)
	}
	if strings.Contains(classes, "16 GPUs") || strings.Contains(classes, "3d") {
		t.Errorf("/gpu policy's classes %q still promise the class limits", classes)
	}

	// The figures hold.
	if r := mustOK(t, h.say(joao, "/gpu request 8 osprey for 1d")); strings.Contains(r.Text, "waits for approval") {
		t.Errorf("8 osprey for 1d: %q; want it granted or queued", r.Text)
	}
	if r := mustOK(t, h.say(joao, "/gpu request 9 osprey for 1h")); !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "big-request") {
		t.Errorf("9 osprey: %q; want it to wait for approval by big-request", r.Text)
	}
}

// Rules see a request for more GPUs than a node holds as the whole nodes it takes, so the
// catalog's figure is one whose request, counted so, no rule sends to approval: with nodes of 8
// and a rule for more than 10, asking for 9 takes 16 and waits, so the catalog says 8.
func TestTheCatalogCountsWholeNodesAsTheRulesSeeThem(t *testing.T) {
	src, err := os.ReadFile(ploverPolicy)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "request.gpus > 8", "request.gpus > 10", 1)
	file := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	const joao = "joao@plover.example"
	if got := withoutApprovalOf(t, h, joao, "osprey"); !strings.HasPrefix(got, "up to 8 GPUs (rule big-request above that)") {
		t.Errorf("osprey in the catalog: %q; want up to 8 GPUs (rule big-request above that)", got)
	}
	if r := mustOK(t, h.say(joao, "/gpu request 9 osprey for 1h")); !strings.Contains(r.Text, "waits for approval") {
		t.Errorf("9 osprey: %q; want it to wait for approval", r.Text)
	}
}
