package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/nvml"
)

// kubeNodeName is a Kubernetes node name (a DNS subdomain) of n characters, made of labels of
// at most 63.
func kubeNodeName(n int) string {
	name := "ip-10-0-1-2"
	for len(name) < n {
		name += ".pool-" + strings.Repeat("a", 56)
	}
	name = strings.TrimRight(name[:n], ".-")
	return name + strings.Repeat("z", n-len(name))
}

// A Kubernetes node name is a DNS subdomain of up to 253 characters: the agent takes one as
// --node and writes it in its metrics' Hostname label.
func TestTheAgentTakesALongKubernetesNodeName(t *testing.T) {
	needFake(t)
	for _, n := range []int{64, 120, 253} {
		name := kubeNodeName(n)
		code, out, stderr := runCmd("metrics", "--fake", "dgxa100", "--node", name, "--fake-util", "* 30")
		if code != 0 || !strings.Contains(out, `DCGM_FI_DEV_GPU_UTIL{Hostname="`+name+`"`) {
			t.Errorf("--node of %d characters: exit %d, stderr %q", n, code, stderr)
		}
	}
}

// A node name that cannot be one (longer than 253 characters, or with a space) is a usage error
// said in one sentence with an example, before the GPUs are opened (so not hidden behind "no
// NVIDIA driver").
func TestABadNodeNameIsAUsageError(t *testing.T) {
	for _, c := range []struct{ name, want, meant string }{
		{kubeNodeName(254), "254 characters", "gpu-01"},
		{"gpu 01", "' '", "gpu-01"},
		{"reef 08", "' '", "reef-08"}, // the name meant, not another node's
	} {
		for _, cmd := range []string{"metrics", "gres-conf", "run"} {
			args := []string{cmd, "--node", c.name}
			if cmd == "run" {
				args = append(args, "--listen", "127.0.0.1:0")
			}
			code, stderr := runWithin(args, 2*time.Second)
			first, _, _ := strings.Cut(stderr, "\n")
			fixed := slices.Clone(args[1:]) // the name put right, the rest as typed
			fixed[1] = c.meant
			if code != 2 || !strings.HasPrefix(first, "quartermaster-agent: ") || !strings.Contains(first, c.want) ||
				!strings.HasSuffix(first, "e.g. "+commandLine(cmd, fixed)) || strings.Contains(stderr, "NVIDIA") {
				t.Errorf("%s --node of %d characters: exit %d, stderr %q", cmd, len(c.name), code, stderr)
			}
		}
	}
	if _, err := nvml.NewFake("dgxa100", "x", nil); err == nil {
		if code, _, stderr := runCmd("metrics", "--fake", "dgxa100", "--node", kubeNodeName(300)); code != 2 || !strings.Contains(stderr, "at most 253") {
			t.Errorf("on a fake, --node of 300 characters: exit %d, %q", code, stderr)
		}
	}
}
