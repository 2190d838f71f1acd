package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every refusal of the agent's command line has quartermaster's form: one line, one sentence that
// ends "e.g. quartermaster-agent …", the command as typed put right, and no usage after it (that
// is for --help); the example, typed back, works.
func TestAgentRefusalsEndWithTheCommandPutRight(t *testing.T) {
	needFake(t)
	t.Setenv("QM_AGENT_TOKEN", "qma_x")
	dir := t.TempDir()
	script := filepath.Join(dir, "util.txt")
	if err := os.WriteFile(script, []byte("0 85\n9 50\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badLine := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(badLine, []byte("0 150\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mig := filepath.Join(dir, "mig.txt")
	if err := os.WriteFile(mig, []byte("1 0 mig=1g.5gb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--fake", "dgxa100", "--listen", "", "--interval", "1s", "--service", "qm.example.com"},
		{"run", "--fake", "dgxa100", "--listen", "", "--service", "https://qm.example.com/?x=1"},
		{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--interval", "10ms"},
		{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--interval", "10"},
		{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--window", "0"},
		{"run", "--fake", "dgxa100", "--listen", "9400"},
		{"run", "--fake", "dgxa100", "--listen", ":99999"},
		{"run", "--fake", "dgxa100", "--service", "", "--listen", ""},
		{"metrics", "--fake", "dgx1"},
		{"metrics", "--fake", "dgxa100", "--labels", "camel"},
		{"metrics", "--fake-util", "0 50"},
		{"metrics", "--fake", "dgxa100", "--fake-util", "0 150"},
		{"metrics", "--fake", "dgxa100", "--fake-util", "9 50"},
		{"metrics", "--fake", "dgxa100", "--fake-util", "1 0 mig=1g.20gb; * 0"},
		{"metrics", "--fake", "dgxa100", "--fake-util", "* 0", "--fake-script", script},
		{"metrics", "--fake", "dgxa100", "--fake-script", script},
		{"metrics", "--fake", "dgxa100", "--fake-script", badLine},
		{"metrics", "--fake", "dgxh100", "--fake-script", mig},
		{"metrics", "--fake", "dgxa100", "--node", "gpu 01"},
		{"metrics", "--fake", "dgxh100", "--node"},
		{"metrics", "--fake", "dgxa100", "--service", "https://qm.example.com"},
		{"topology", "--fake", "dgxa100", "--frobnicate"},
		{"gres-conf", "--fake", "dgxa100", "--with-nodename=maybe"},
		{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--window", "ten"},
		{"version", "--fake", "dgxa100"},
		{"version", "now"},
		{"metrcs", "--fake", "dgxa100"},
	} {
		code, stderr := runWithin(args, 2*time.Second)
		msg := strings.TrimSuffix(stderr, "\n")
		if code != 2 || strings.Contains(msg, "\n") || strings.Contains(msg, "example:") {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line", args, code, stderr)
			continue
		}
		i := strings.LastIndex(msg, "e.g. ")
		if i < 0 || !strings.HasPrefix(msg, "quartermaster-agent: ") || !strings.Contains(msg[i:], "quartermaster-agent ") {
			t.Errorf("%q: %q does not end with e.g. quartermaster-agent …", args, msg)
			continue
		}
		words := splitShell(msg[i+len("e.g. "):])
		var env []string
		for len(words) > 0 && strings.HasPrefix(words[0], "QM_") && strings.Contains(words[0], "=") {
			env, words = append(env, words[0]), words[1:]
		}
		if len(words) == 0 || words[0] != "quartermaster-agent" {
			t.Errorf("%q: %q does not end with e.g. quartermaster-agent …", args, msg)
			continue
		}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		if code, stderr := runWithin(words[1:], time.Second); code != 0 {
			t.Errorf("%q: the example of %q does not work: exit %d, %q", args, msg, code, stderr)
		}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			os.Unsetenv(k)
		}
	}
}
