package main

import (
	"strings"
	"testing"
)

// A flag given an empty value (--node= or --node "") is refused in one sentence naming it, with the
// command as typed and the flag given a value as its example, before any GPU is opened: the agent
// would otherwise go on as if it had not been given (a node named after the host, the default
// interval). --listen and --service, which take empty for none, are the exceptions.
func TestAnEmptyFlagValueIsRefusedInOneSentence(t *testing.T) {
	for _, c := range []struct {
		args []string
		eg   string
	}{
		{[]string{"metrics", "--node="}, "e.g. quartermaster-agent metrics --node gpu-01"},
		{[]string{"run", "--node", "", "--listen", ":0"}, "e.g. quartermaster-agent run --node gpu-01 --listen :0"},
		{[]string{"run", "--interval="}, "e.g. quartermaster-agent run --interval 10s"},
		{[]string{"gres-conf", "--fake", "dgxa100", "--type="}, "e.g. quartermaster-agent gres-conf --fake dgxa100 --type a100"},
		{[]string{"topology", "--proc-root", ""}, "e.g. quartermaster-agent topology --proc-root /proc"},
	} {
		code, _, stderr := runCmd(c.args...)
		first, _, _ := strings.Cut(stderr, "\n")
		name, _, _ := strings.Cut(strings.TrimPrefix(c.args[len(c.args)-1], "--"), "=")
		if c.args[len(c.args)-1] == "" || strings.HasPrefix(c.args[len(c.args)-1], ":") {
			for i, a := range c.args {
				if i+1 < len(c.args) && c.args[i+1] == "" {
					name = strings.TrimPrefix(a, "--")
				}
			}
		}
		if code != 2 || !strings.HasPrefix(first, "quartermaster-agent: --"+name+" is empty") || !strings.HasSuffix(first, c.eg) {
			t.Errorf("%q: exit %d, %s\nwant exit 2, --%s is empty…, %s", c.args, code, first, name, c.eg)
		}
	}
}

// `quartermaster-agent COMMAND help` is that command's help, as `help COMMAND` and `COMMAND --help`
// are; an unknown command near none is answered with an example that works.
func TestCommandHelpAndAnUnknownCommandsExample(t *testing.T) {
	for _, cmd := range commands {
		_, want, _ := runCmd(cmd, "--help")
		if code, out, stderr := runCmd(cmd, "help"); code != 0 || out != want || stderr != "" {
			t.Errorf("%s help: exit %d, stderr %q, and a help unlike %s --help's", cmd, code, stderr, cmd)
		}
	}
	code, _, stderr := runCmd("frobnicate", "--node", "gpu-01")
	first, _, _ := strings.Cut(stderr, "\n")
	if code != 2 || !strings.HasSuffix(first, "e.g. quartermaster-agent run --node gpu-01") {
		t.Errorf("an unknown command: exit %d, %s", code, first)
	}
}
