package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// An interval or a wait set too short to be meant (QM_RECONCILE_INTERVAL=1ns would ask the
// scheduler about every lease without pause) is refused at start in one sentence naming the
// setting and a value that works; and every setting of the environment that serve and the
// console read is checked before the database is opened: nothing is created in QM_DATA_DIR.
func TestSettingsAreCheckedBeforeTheDatabaseWithAFloor(t *testing.T) {
	for _, c := range []struct {
		env, value string
		want       []string
	}{
		{"QM_RECONCILE_INTERVAL", "1ns", []string{`QM_RECONCILE_INTERVAL="1ns" is shorter than`, "QM_RECONCILE_INTERVAL=5s"}},
		{"QM_TICK_INTERVAL", "10ms", []string{`QM_TICK_INTERVAL="10ms" is shorter than`, "QM_TICK_INTERVAL=30s"}},
		{"QM_DATABASE_WAIT", "1us", []string{`QM_DATABASE_WAIT="1us" is shorter than`, "QM_DATABASE_WAIT=2s"}},
		{"QM_SUBMIT_GRACE", "5ms", []string{`QM_SUBMIT_GRACE="5ms" is shorter than`, "QM_SUBMIT_GRACE=2m"}},
		{"QM_SLURM_ACCOUNTING", "maybe", []string{`QM_SLURM_ACCOUNTING="maybe"`, "QM_SLURM_ACCOUNTING=true"}},
		{"QM_SLURM_CONTAINER", "docker", []string{`QM_SLURM_CONTAINER="docker"`, "QM_SLURM_CONTAINER=apptainer"}},
	} {
		for _, cmd := range [][]string{{"serve", "--demo", "--http", "127.0.0.1:0"}, {"console"}} {
			if c.env == "QM_TICK_INTERVAL" && cmd[0] == "console" {
				continue // the console's clock is moved by hand
			}
			t.Run(c.env+" "+cmd[0], func(t *testing.T) {
				clearEnv(t)
				dir := t.TempDir()
				t.Setenv("QM_DATA_DIR", dir)
				t.Setenv(c.env, c.value)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				var stderr bytes.Buffer
				code := run(ctx, cmd, strings.NewReader(""), io.Discard, &stderr)
				msg := strings.TrimSpace(stderr.String())
				if code != 2 || strings.Count(msg, "\n") != 0 {
					t.Fatalf("exit %d, want a refusal in one line (exit 2); got %q", code, msg)
				}
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("the refusal %q does not say %q", msg, w)
					}
				}
				if left, _ := os.ReadDir(dir); len(left) > 0 {
					t.Errorf("the refusal left %s in QM_DATA_DIR: the database was touched first", left[0].Name())
				}
			})
		}
	}
}
