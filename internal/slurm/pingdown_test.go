package slurm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/slurm"
)

// fakeScontrol puts an scontrol on PATH that prints stdout and stderr and exits with code.
func fakeScontrol(t *testing.T, stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"stdout.txt": stdout, "stderr.txt": stderr} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\ncat '" + filepath.Join(dir, "stdout.txt") + "'\ncat '" + filepath.Join(dir, "stderr.txt") + "' >&2\nexit " + map[bool]string{true: "1", false: "0"}[code != 0] + "\n"
	if err := os.WriteFile(filepath.Join(dir, "scontrol"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// When scontrol ping fails, Ping's error (which /readyz and the start-up warning show) keeps
// what scontrol said on either stream: "Slurmctld(primary) at head is DOWN" is printed on its
// standard output, an error such as a missing slurm.conf on its standard error.
func TestPingFailureSaysWhatScontrolPrinted(t *testing.T) {
	for _, c := range []struct{ name, stdout, stderr, want string }{
		{"down on stdout", "Slurmctld(primary) at head is DOWN\n*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n*****************************************\n", "", "Slurmctld(primary) at head is DOWN"},
		{"error on stderr", "", "scontrol: error: s_p_parse_file: unable to status file /etc/slurm/slurm.conf: No such file or directory\n", "unable to status file /etc/slurm/slurm.conf"},
		{"both", "Slurmctld(primary) at ctl-01 is DOWN\n", "scontrol: error: slurm_ping: Unable to contact slurm controller (connect failure)\n", "Slurmctld(primary) at ctl-01 is DOWN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeScontrol(t, c.stdout, c.stderr, 1)
			b, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: testCatalog(t)})
			if err != nil {
				t.Fatal(err)
			}
			err = b.Ping(context.Background())
			if err == nil || !strings.Contains(err.Error(), "slurmctld does not answer scontrol ping") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Ping: %v; want it to say %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "*****") {
				t.Errorf("Ping: %v; want the meaningful line, not the banner", err)
			}
		})
	}
}
