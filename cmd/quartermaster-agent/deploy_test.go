package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The DaemonSet is a valid apps/v1 DaemonSet (every field known) that runs the agent unprivileged:
// not root, no capabilities, no privilege escalation, no service account token; only the host PID
// namespace (NVML reports host PIDs) and the node's token.
func TestDaemonSetIsUnprivileged(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/quartermaster-agent-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict(b, &ds); err != nil {
		t.Fatalf("not a DaemonSet: %v", err)
	}
	spec := ds.Spec.Template.Spec
	if !spec.HostPID || spec.HostNetwork || spec.HostIPC || len(spec.Containers) != 1 {
		t.Errorf("host namespaces: pid %v network %v ipc %v", spec.HostPID, spec.HostNetwork, spec.HostIPC)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the agent gets a service account token it does not need")
	}
	ps := spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 {
		t.Error("the pod may run as root")
	}
	c := spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("container security context %+v", sc)
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("volume %s mounts the host's %s", v.Name, v.HostPath.Path)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["QM_AGENT_TOKEN_FILE"] != "/var/run/quartermaster/tokens/$(QM_NODE)" || env["NVIDIA_VISIBLE_DEVICES"] != "all" || c.Args[0] != "run" {
		t.Errorf("env %v args %v", env, c.Args)
	}
}

// The systemd unit passes `systemd-analyze verify` and runs with no capabilities as a dynamic user,
// with only the NVIDIA devices.
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("../../deploy/systemd/quartermaster-agent.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{"DynamicUser=yes", "NoNewPrivileges=yes", "CapabilityBoundingSet=\n", "DevicePolicy=closed", "DeviceAllow=char-nvidia rw", "ProtectSystem=strict"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "quartermaster-agent")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "quartermaster-agent.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/quartermaster-agent", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, "verify", path).CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The DaemonSet runs an image the repository builds: the Dockerfile's one image, which holds both
// binaries and whose entrypoint is the service's, and which the Helm chart runs too. So the
// container names that image and starts the agent's binary in it; its arguments alone would be
// given to `quartermaster`, which has no command `run`.
func TestDaemonSetRunsTheAgentOfTheImageTheRepositoryBuilds(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/quartermaster-agent-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict(b, &ds); err != nil {
		t.Fatalf("not a DaemonSet: %v", err)
	}
	values, err := os.ReadFile("../../deploy/helm/quartermaster/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Image struct {
			Repository string `json:"repository"`
		} `json:"image"`
	}
	if err := yaml.Unmarshal(values, &chart); err != nil || chart.Image.Repository == "" {
		t.Fatalf("the chart's image: %v", err)
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), "./cmd/...") || !strings.Contains(string(dockerfile), "COPY --from=build /out/ /usr/local/bin/") {
		t.Fatal("the Dockerfile no longer puts every command in /usr/local/bin; update this test")
	}
	c := ds.Spec.Template.Spec.Containers[0]
	repo, _, _ := strings.Cut(c.Image, ":")
	if repo != chart.Image.Repository {
		t.Errorf("the DaemonSet's image %s is not the one the Dockerfile builds and the chart runs (%s)", c.Image, chart.Image.Repository)
	}
	if len(c.Command) != 1 || c.Command[0] != "/usr/local/bin/quartermaster-agent" || len(c.Args) == 0 || c.Args[0] != "run" {
		t.Errorf("the container runs %q %q; want /usr/local/bin/quartermaster-agent run …", c.Command, c.Args)
	}
}
