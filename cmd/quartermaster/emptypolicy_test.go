package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleAndServeRefuseAPolicyWithEmptyEntries: console and serve started on a policy with an
// empty class and an empty sim node group say what is wrong and exit; neither panics.
func TestConsoleAndServeRefuseAPolicyWithEmptyEntries(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"issue.yaml": "organization: X\nclasses:\n  -\nsim:\n nodes:\n - {}\n",
		"node.yaml":  "organization: X\nclasses: [{name: gpu, max_gpus: 1, max_duration: 1h}]\nsim:\n  nodes:\n  -\n  - {name: n, count: 1, class: gpu, gpus: 1}\n",
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"console", "serve"} {
			t.Run(name+"/"+cmd, func(t *testing.T) {
				t.Setenv("QM_DATA_DIR", t.TempDir())
				t.Setenv("QM_DATABASE_URL", "")
				var out, errb bytes.Buffer
				args := []string{cmd, "--policy", file}
				if cmd == "serve" {
					args = append(args, "--http", "127.0.0.1:0")
				}
				var code int
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%s panicked: %v", cmd, r)
						}
					}()
					code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
				}()
				if code == 0 || !strings.Contains(errb.String(), "is empty; fill it in or remove its line") {
					t.Fatalf("%s exited %d; stderr:\n%s", cmd, code, errb.String())
				}
			})
		}
	}
}
