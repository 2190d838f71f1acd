package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// agent-token's refusals of a node (a name no scheduler has, a node whose token is valid
// already, a node with none to revoke) are one sentence whose example keeps the database typed:
// without it, the example would act on another database (the default one), or on none.
func TestAgentTokenRefusalsOfANodeKeepTheDatabaseTyped(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_DATA_DIR", t.TempDir())
	db := "sqlite:" + filepath.Join(t.TempDir(), "tokens.db")
	if code, _, stderr := runQM("agent-token", "create", "reef-07", "--db", db); code != 0 {
		t.Fatalf("create: exit %d, %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		code int // 2 for a mistake of the command line, 1 for what the database holds
		says string
		eg   string
	}{
		{[]string{"agent-token", "create", "reef 08", "--db", db}, 2, `"reef 08" is not a node name`, "quartermaster agent-token create reef-08 --db " + db},
		{[]string{"agent-token", "create", "reef-07", "--db", db}, 1, "node reef-07 has a valid token already; revoke it first", "quartermaster agent-token revoke reef-07 --db " + db},
		{[]string{"agent-token", "revoke", "--db", db, "reef-99"}, 1, "node reef-99 has no valid token", "quartermaster agent-token list --db " + db},
	} {
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != c.code || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "quartermaster agent-token: "+c.says) || !strings.HasSuffix(msg, "e.g. "+c.eg) {
			t.Errorf("%v: exit %d, %q; want exit %d and one sentence saying %q, ending e.g. %s", c.args, code, msg, c.code, c.says, c.eg)
			continue
		}
		if code, _, stderr := runQM(strings.Fields(c.eg)[1:]...); code != 0 {
			t.Errorf("%v: the example %s: exit %d, %s", c.args, c.eg, code, stderr)
		}
	}
}
