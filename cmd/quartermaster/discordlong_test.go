package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestDiscordLongPolicyIsNotCut: /gpu policy of a policy with 60 classes, longer than one Discord
// message, is answered in parts, the answer and follow-ups, each within Discord's limits, with
// every class in it, in order, and nothing said to be cut.
func TestDiscordLongPolicyIsNotCut(t *testing.T) {
	t.Parallel()
	var extra strings.Builder
	for i := range 60 {
		fmt.Fprintf(&extra, "  - {name: extra-class-%02d, description: Shared L4 for small notebooks number %02d, sku: L4, gpu_memory_gib: 24, price_per_gpu_hour: 0.5, max_gpus: 1, max_duration: 8h, slurm: {partition: p%02d, gres: \"gpu:l4\"}, kubernetes: {resource: nvidia.com/gpu}}\n", i, i, i)
	}
	pol := strings.Replace(string(docs.ExamplePolicy), "classes:\n", "classes:\n"+extra.String(), 1)
	path := filepath.Join(t.TempDir(), "quartermaster.yaml")
	if err := os.WriteFile(path, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newDiscordEnvWith(t, commonFlags{db: storetest.SQLite(t), policy: path})
	body := discordtest.Command(discordtest.Who{User: dAlice, Channel: dChannel, Guild: dGuild}, "gpu", "policy")
	first := e.do(body)
	all := append([]discordtest.Message{first}, e.fake.FollowUps(discordtest.ID(body))...)
	var text strings.Builder
	for i, m := range all {
		chars := 0
		for _, em := range m.Embeds {
			chars += utf8.RuneCountInString(em.Title) + utf8.RuneCountInString(em.Description)
			for _, f := range em.Fields {
				chars += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
			}
			if utf8.RuneCountInString(em.Description) > 4096 {
				t.Errorf("part %d: an embed's text of %d characters", i+1, utf8.RuneCountInString(em.Description))
			}
		}
		if chars > 6000 || len(m.Embeds) > 10 {
			t.Errorf("part %d: %d characters in %d embeds", i+1, chars, len(m.Embeds))
		}
		if !m.Ephemeral {
			t.Errorf("part %d is not private", i+1)
		}
		text.WriteString(m.Text() + "\n")
	}
	if len(all) < 2 {
		t.Fatalf("the policy came in one message: %q", text.String())
	}
	s := text.String()
	if strings.Contains(s, "did not fit") || strings.Contains(s, "…") {
		t.Errorf("the policy says it was cut: %q", s)
	}
	at := 0
	for i := range 60 {
		name := fmt.Sprintf("extra-class-%02d", i)
		j := strings.Index(s[at:], name)
		if j < 0 {
			t.Fatalf("%s is missing from /gpu policy, or out of order", name)
		}
		at += j
	}
	if !strings.Contains(s[at:], "train") {
		t.Errorf("what follows the classes is missing: %q", s[at:])
	}
}
