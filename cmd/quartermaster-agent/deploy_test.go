package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// The unit's install steps give the node its own token: `agent-token create` runs on the
// service's host (where the database is), so it names the node rather than asking `hostname`
// there (which would name the service's host, and every report would be refused as wrong_node);
// the file it writes is the one installed on the node as the unit's credential.
func TestSystemdUnitInstallStepsCreateTheNodesToken(t *testing.T) {
	b, err := os.ReadFile("../../deploy/systemd/quartermaster-agent.service")
	if err != nil {
		t.Fatal(err)
	}
	var create, installed string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		step := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		switch {
		case strings.Contains(step, "quartermaster agent-token create"):
			if strings.Contains(step, "hostname") {
				t.Errorf("the token is created on the service's host for `hostname` there, not for the node: %s", step)
			}
			if _, out, ok := strings.Cut(step, ">"); ok {
				create = strings.Fields(out)[0]
			}
		case strings.Contains(step, "/etc/quartermaster/agent.token") && strings.HasPrefix(step, "install "):
			f := strings.Fields(step)
			installed = f[len(f)-2]
		}
	}
	if create == "" || create != installed {
		t.Errorf("the token agent-token create writes (%q) is not the file installed as /etc/quartermaster/agent.token (%q)", create, installed)
	}
}

// The DaemonSet's steps for the tokens work as typed: run with stand-ins for kubectl and
// quartermaster, they make one Secret holding each GPU node's token under the node's name.
func TestDaemonSetTokenStepsWorkAsTyped(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/quartermaster-agent-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, line := range strings.Split(string(b), "\n") {
		if step, ok := strings.CutPrefix(line, "#   "); ok && !strings.Contains(step, "kubectl apply") {
			steps = append(steps, step)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	stub := func(name, script string) {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// kubectl lists two GPU nodes, runs `exec … -- CMD` as CMD, and records the Secret's files.
	stub("kubectl", `case "$*" in
*"get nodes"*) printf 'node/gpu-01\nnode/gpu-02\n' ;;
*" exec "*|exec*) while [ "$1" != "--" ]; do shift; done; shift; exec "$@" ;;
*"create secret"*) for f in "$@"; do case "$f" in --from-file=*) d=${f#--from-file=}; for k in "$d"/*; do echo "$(basename "$k")=$(cat "$k")"; done >> secret.txt ;; esac; done ;;
*) echo "kubectl: unexpected $*" >&2; exit 1 ;;
esac
`)
	stub("quartermaster", `[ "$1 $2" = "agent-token create" ] || exit 2; echo "qma_token_for_$3"; echo "This is node $3's token" >&2`)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(steps, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the DaemonSet's token steps fail as typed: %v\n%s\n%s", err, strings.Join(steps, "\n"), out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "secret.txt"))
	if err != nil || string(got) != "gpu-01=qma_token_for_gpu-01\ngpu-02=qma_token_for_gpu-02\n" {
		t.Errorf("the Secret holds %q (%v); want each node's token under its name", got, err)
	}
}

// The DaemonSet's token Secret goes in the DaemonSet's namespace, and the tokens come from the
// service the Helm chart runs: every kubectl and helm command of the DaemonSet's install steps and
// of docs/operations.md's Kubernetes install that acts on a namespaced object names that
// namespace, so none lands in (or execs into) whatever namespace is current.
func TestInstallCommandsNameTheDaemonSetsNamespace(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/quartermaster-agent-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.Unmarshal(b, &ds); err != nil || ds.Namespace == "" {
		t.Fatalf("the DaemonSet names no namespace (%v)", err)
	}
	ops, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(ops)
	start := strings.Index(doc, "### In a container or on Kubernetes")
	if start < 0 {
		t.Fatal("docs/operations.md has no section \"In a container or on Kubernetes\"")
	}
	section := doc[start+1:]
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end]
	}
	named := regexp.MustCompile(`(^|\s)(-n|--namespace)[ =]` + regexp.QuoteMeta(ds.Namespace) + `(\s|$)`)
	command := regexp.MustCompile(`\b(kubectl|helm) [^` + "`" + `\n]*`)
	// Cluster-wide, or naming its namespace in the file it applies; helm lint and template touch
	// no cluster.
	exempt := regexp.MustCompile(`^kubectl (get nodes|apply -f deploy/kubernetes/|create namespace)`)
	release := regexp.MustCompile(`^helm (install|upgrade) `)
	seen := 0
	for _, src := range []struct{ name, text string }{{"the DaemonSet's install steps", string(b)}, {"docs/operations.md", section}} {
		text := strings.ReplaceAll(src.text, "\n#  ", "\n") // the DaemonSet's commented commands
		text = strings.ReplaceAll(text, "\\\n", " ")        // continuation lines
		for _, c := range command.FindAllString(text, -1) {
			// A name in prose ("a `helm upgrade` that changes it") is no command.
			if exempt.MatchString(c) || strings.HasPrefix(c, "helm ") && !release.MatchString(c) || len(strings.Fields(c)) < 3 {
				continue
			}
			seen++
			if !named.MatchString(c) {
				t.Errorf("%s: %q does not name the namespace %s", src.name, c, ds.Namespace)
			}
		}
	}
	if seen < 4 {
		t.Errorf("found %d namespaced install commands; the test no longer finds them", seen)
	}
}
