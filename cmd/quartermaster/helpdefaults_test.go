package main

import (
	"strings"
	"testing"
)

// --help shows a flag's built-in default even where the environment variable that overrides it is
// set, and says that the variable, set here, overrides it: the variable's value is not the default.
func TestHelpShowsBuiltInDefaultsNotTheEnvironments(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_HTTP_ADDR", "127.0.0.1:9999")
	t.Setenv("QM_BACKEND", "kubernetes")
	t.Setenv("QM_POLICY", "/etc/quartermaster/borealis.yaml")
	t.Setenv("QM_DATA_DIR", "/srv/qm-data")
	for _, c := range []struct {
		args []string
		want []string
		not  []string
	}{
		{args: []string{"serve", "--help"},
			want: []string{`(default ":8080")`, "QM_HTTP_ADDR is set here (127.0.0.1:9999) and overrides the default",
				"QM_BACKEND is set here (kubernetes) and overrides the default", "QM_POLICY is set here (/etc/quartermaster/borealis.yaml) and overrides the default"},
			not: []string{`(default "127.0.0.1:9999")`, `(default "kubernetes")`, `(default "/etc/quartermaster/borealis.yaml")`}},
		{args: []string{"console", "--help"},
			want: []string{`(default "data/reports")`, "QM_DATA_DIR is set here (/srv/qm-data) and overrides the default"},
			not:  []string{`(default "/srv/qm-data/reports")`, `(default "kubernetes")`}},
		{args: []string{"templates", "render", "--help"},
			want: []string{"QM_POLICY is set here (/etc/quartermaster/borealis.yaml) and overrides the default"},
			not:  []string{`(default "/etc/quartermaster/borealis.yaml")`}},
	} {
		code, out, stderr := runQM(c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d, %s", c.args, code, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v does not say %q:\n%s", c.args, w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%v says %q, the environment's value as the default:\n%s", c.args, w, out)
			}
		}
	}
}
