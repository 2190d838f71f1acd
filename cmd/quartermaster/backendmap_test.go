package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A backend chosen over the policy's (--backend, QM_BACKEND) is refused at start, in one sentence
// naming the setting, when a class of the policy has no mapping for it, with the mapping to add
// and the setting that runs the policy as written.
func TestABackendChosenOverAPolicyWithoutItsMappingIsRefusedAtStart(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "marlin.yaml")
	src := `organization: Marlin Labs
currency: JPY
timezone: Asia/Tokyo
classes:
  - {name: notebook, description: Shared A10G, sku: A10G, gpu_memory_gib: 24, price_per_gpu_hour: 150, isolation: shared, max_gpus: 1, max_duration: 6h}
teams:
  - {name: tuna, idp_groups: [tuna], budget_owners: [hiro@marlin.example], quota: {gpus: {notebook: 2}}}
approvals: {timeout: 12h, fallback_approvers: [ops@marlin.example]}
directory:
  - {user: hiro@marlin.example, groups: [tuna]}
`
	if err := os.WriteFile(pol, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, c := range slurmCommands {
		if err := os.WriteFile(filepath.Join(bin, c), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, env string
		args      []string
		want      []string
	}{
		{name: "QM_BACKEND=slurm", env: "slurm", args: []string{"serve", "--policy", pol, "--http", "127.0.0.1:0"},
			want: []string{"QM_BACKEND=slurm needs each class's slurm.partition", "class notebook", `slurm: {partition: notebook, gres: "gpu"}`, "e.g. QM_BACKEND=sim"}},
		{name: "--backend kubernetes", args: []string{"serve", "--policy", pol, "--http", "127.0.0.1:0", "--backend", "kubernetes"},
			want: []string{"--backend kubernetes needs each class's kubernetes.resource or node_selector", "class notebook", "kubernetes: {resource: nvidia.com/gpu}", "e.g. quartermaster serve --policy " + pol + " --http 127.0.0.1:0 --backend sim"}},
		{name: "console --backend slurm", args: []string{"console", "--policy", pol, "--backend", "slurm"},
			want: []string{"--backend slurm needs each class's slurm.partition", "e.g. quartermaster console --policy " + pol + " --backend sim"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("PATH", bin)
			t.Setenv("QM_DATA_DIR", t.TempDir())
			if c.env != "" {
				t.Setenv("QM_BACKEND", c.env)
			}
			code, _, stderr := runQMWithin(5*time.Second, c.args...)
			// The policy's warnings are logged before it; the refusal is the last line.
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			msg := lines[len(lines)-1]
			if code != 2 || !strings.HasPrefix(msg, "quartermaster "+c.args[0]+": ") {
				t.Fatalf("exit %d, want a refusal in one line (exit 2): %q", code, stderr)
			}
			if strings.Contains(stderr, "migrated") {
				t.Errorf("the database was migrated before the refusal: %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			if entries, _ := os.ReadDir(os.Getenv("QM_DATA_DIR")); len(entries) != 0 {
				t.Errorf("the refusal left %d files in the data directory", len(entries))
			}
		})
	}
}
