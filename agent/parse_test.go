package agent_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
)

// A process's cgroup names its Slurm job (cgroup v1 and v2 layouts) or its pod (the kubelet's
// cgroupfs and systemd drivers); anything else belongs to neither.
func TestCgroupOwnerFromFixtureTree(t *testing.T) {
	c := agent.Cgroups{ProcRoot: "testdata/proc"}
	for _, tc := range []struct {
		pid      uint32
		job, pod string
	}{
		{4242, "123", ""}, // v2: /system.slice/slurmstepd.scope/job_123/step_0/…
		{4243, "77", ""},  // v1: /slurm/uid_1000/job_77/step_batch
		{4244, "", "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}, // cgroupfs: /kubepods/burstable/pod<uid>/…
		{4245, "", "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"}, // systemd: …-pod<uid with _>.slice/…
		{4246, "", ""}, // a login session
		{9999, "", ""}, // gone
	} {
		job, pod := c.Owner(tc.pid)
		if job != tc.job || pod != tc.pod {
			t.Errorf("pid %d: job %q pod %q, want job %q pod %q", tc.pid, job, pod, tc.job, tc.pod)
		}
	}
	// A directory merely named like a job deeper in a path does not fool it: job_ must be a whole
	// path element of digits.
	if job, _ := agent.ParseCgroup([]byte("0::/home/job_notes/x\n0::/jobs/job_12a/x\n")); job != "" {
		t.Errorf("non-job paths gave job %q", job)
	}
}

// The fake GPU script: numbers, ranges and "*" (the GPUs no line names); a bad line is refused
// with a sentence naming it and an example that works.
func TestParseScript(t *testing.T) {
	s, err := agent.ParseScript("# demo\n0 85 mem=20480 pids=4242,4243 xid=79\n1-3 10%; * 2 power=90")
	if err != nil {
		t.Fatal(err)
	}
	if g := s.For(0); g.Util != 85 || g.MemMiB != 20480 || !slices.Equal(g.PIDs, []uint32{4242, 4243}) || g.XID != 79 {
		t.Errorf("GPU 0 = %+v", g)
	}
	if g := s.For(3); g.Util != 10 {
		t.Errorf("GPU 3 = %+v, want 10%%", g)
	}
	if g := s.For(7); g.Util != 2 || g.PowerW != 90 {
		t.Errorf("GPU 7 = %+v, want the * line", g)
	}
	for _, bad := range []string{"0", "0 101", "x 5", "0 5 mem", "0 5 color=red", "3-1 5", "0 5 pids=0", "99 5"} {
		_, err := agent.ParseScript(bad)
		if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "`0 85 mem=20480 pids=4242`") {
			t.Errorf("ParseScript(%q) = %v; want a sentence naming line 1 and an example", bad, err)
		}
	}
}

// mig= puts a fake GPU in MIG mode with one MIG instance per profile; a profile that is not
// Ng.Mgb, or instances that need more than a GPU's 7 slices, are refused with an example.
func TestParseScriptMIG(t *testing.T) {
	s, err := agent.ParseScript("1 0 mig=3g.20gb,2g.10gb,1g.5gb pids=4242; * 5")
	if err != nil {
		t.Fatal(err)
	}
	if g := s.For(1); !slices.Equal(g.MIG, []string{"3g.20gb", "2g.10gb", "1g.5gb"}) || !slices.Equal(g.PIDs, []uint32{4242}) {
		t.Errorf("GPU 1 = %+v; want 3 MIG instances and process 4242", g)
	}
	if g := s.For(0); g.MIG != nil {
		t.Errorf("GPU 0 = %+v; want no MIG", g)
	}
	for _, bad := range []string{"1 0 mig=", "1 0 mig=3g", "1 0 mig=8g.80gb", "1 0 mig=0g.5gb", "1 0 mig=4g.20gb,4g.20gb", "1 0 mig=3g.20gb,,1g.5gb"} {
		_, err := agent.ParseScript(bad)
		if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "mig=3g.20gb,2g.10gb,1g.5gb") {
			t.Errorf("ParseScript(%q) = %v; want a sentence naming line 1 and a mig= example", bad, err)
		}
	}
}

// A script file that changes to name a GPU the machine lacks keeps the last good script in force,
// as one that does not parse does.
func TestScriptFileKeepsGPUsInRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "util.txt")
	write := func(text string, at time.Time) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write("7 85; * 0", t0)
	f := &agent.ScriptFile{Path: path, GPUs: 8}
	if got := f.Script().For(7).Util; got != 85 {
		t.Fatalf("GPU 7 at %v%%, want 85", got)
	}
	write("8 50; 7 40", t0.Add(time.Minute))
	if got := f.Script().For(7).Util; got != 85 {
		t.Errorf("after the file named GPU 8 of 8, GPU 7 is at %v%%; want the last good script's 85", got)
	}
	write("7 40", t0.Add(2*time.Minute))
	if got := f.Script().For(7).Util; got != 40 {
		t.Errorf("after a good change GPU 7 is at %v%%, want 40", got)
	}
}

func TestCPUListsAndCores(t *testing.T) {
	cpus, err := agent.ParseCPUs("48-63,176-191")
	if err != nil || len(cpus) != 32 || agent.FormatCPUs(cpus) != "48-63,176-191" {
		t.Fatalf("round trip: %v %v %q", cpus, err, agent.FormatCPUs(cpus))
	}
	for _, bad := range []string{"a", "5-3", "-1", "0-999999999"} {
		if _, err := agent.ParseCPUs(bad); err == nil {
			t.Errorf("ParseCPUs(%q) took it", bad)
		}
	}
	// A DGX A100: two sockets of 64 cores, two threads each; CPU 176 is core 48's second thread.
	m := agent.LayoutCores(2, 64, 2)
	cores, all := m.Cores(cpus)
	if agent.FormatCPUs(cores) != "48-63" || all {
		t.Errorf("cores of 48-63,176-191 = %v (all %v), want 48-63", cores, all)
	}
	// The fixture host: two sockets with core ids 0 and 4 each, two threads per core; Slurm numbers
	// the cores 0-3 socket by socket.
	sys, err := agent.SysfsCores("testdata/sys")
	if err != nil {
		t.Fatal(err)
	}
	if sys.CPUs() != 8 {
		t.Fatalf("%d CPUs, want 8", sys.CPUs())
	}
	if cores, _ := sys.Cores([]int{2, 7}); !slices.Equal(cores, []int{2, 3}) {
		t.Errorf("cores of CPUs 2 and 7 = %v, want [2 3]", cores)
	}
	if _, all := sys.Cores([]int{0, 1, 2, 3}); !all {
		t.Error("CPUs 0-3 cover every core")
	}
	if _, err := agent.SysfsCores(t.TempDir()); err == nil {
		t.Error("an empty sysfs gave a CPU layout")
	}
}

func TestGresType(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA A100-SXM4-40GB":      "a100",
		"NVIDIA H100 80GB HBM3":      "h100",
		"NVIDIA H200":                "h200",
		"NVIDIA L40S":                "l40s",
		"Tesla V100-SXM2-32GB":       "v100",
		"Mock NVIDIA A100-SXM4-40GB": "a100",
		"":                           "gpu",
		"NVIDIA ?!":                  "gpu",
	} {
		if got := agent.GresType(name); got != want {
			t.Errorf("GresType(%q) = %q, want %q", name, got, want)
		}
	}
}

// Two different models on one cluster get two different GRES types, so a job asking for one never
// lands on the other: the RTX workstation cards (Ampere, Ada, Blackwell, Turing's Quadro) differ only
// after the product line's name. Every type is one Slurm takes in gres.conf and slurm.conf.
func TestGresTypeTellsModelsApart(t *testing.T) {
	models := []string{
		"NVIDIA RTX A6000", "NVIDIA RTX A5000", "NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 5000 Ada Generation",
		"Quadro RTX 8000", "Quadro RTX 6000", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090",
		"NVIDIA TITAN RTX", "NVIDIA TITAN V", "NVIDIA RTX PRO 6000 Blackwell Server Edition",
		"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3",
		"NVIDIA L40S", "NVIDIA L40", "NVIDIA L4", "NVIDIA A10", "Tesla T4",
	}
	seen := map[string]string{}
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	for _, m := range models {
		typ := agent.GresType(m)
		if typ == "gpu" || !valid.MatchString(typ) {
			t.Errorf("GresType(%q) = %q: not a model's type", m, typ)
		}
		if other, ok := seen[typ]; ok {
			t.Errorf("%q and %q both get GRES type %q", other, m, typ)
		}
		seen[typ] = m
	}
	if a, b := agent.GresType("NVIDIA RTX A6000"), agent.GresType("Mock NVIDIA RTX A6000"); a != b {
		t.Errorf("one model, two types: %q and %q", a, b)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add("0 85 mem=20480 pids=4242\n* 0")
	f.Add("1-3 10%; * 2 power=90 temp=70 xid=79")
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := agent.ParseScript(s)
		if err != nil {
			return
		}
		for i := range 64 {
			if g := sc.For(i); g.Util < 0 || g.Util > 100 {
				t.Fatalf("GPU %d utilization %v from %q", i, g.Util, s)
			}
		}
	})
}

func FuzzParseCgroup(f *testing.F) {
	f.Add([]byte("0::/system.slice/slurmstepd.scope/job_123/step_0\n"))
	f.Add([]byte("0::/kubepods.slice/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		job, pod := agent.ParseCgroup(b)
		if strings.Trim(job, "0123456789") != "" || (pod != "" && len(pod) != 36) {
			t.Fatalf("job %q pod %q from %q", job, pod, b)
		}
	})
}

// A node with GPUs of several models (here one H100 and two L4s, /dev/nvidia2 gone) gets one line
// per GPU with its own type, slurm.conf's Gres= with a count per type, and a heading that names
// every model with its count, not the first GPU's model for all of them.
func TestGresConfOfMixedModels(t *testing.T) {
	gpus := []agent.GPUInfo{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", Minor: 0},
		{Index: 1, Name: "NVIDIA L4", Minor: 1},
		{Index: 2, Name: "NVIDIA L4", Minor: 3},
	}
	var b strings.Builder
	if err := agent.WriteGresConf(&b, gpus, report.Topology{}, agent.GresOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `# gres.conf for this node, from NVML by quartermaster-agent: 1 x NVIDIA H100 80GB HBM3, 2 x NVIDIA L4.
# slurm.conf needs GresTypes=gpu and Gres=gpu:h100:1,gpu:l4:2 on the node's line.
Name=gpu Type=h100 File=/dev/nvidia0
Name=gpu Type=l4 File=/dev/nvidia1
Name=gpu Type=l4 File=/dev/nvidia3
`
	if b.String() != want {
		t.Errorf("gres.conf:\n%s\nwant:\n%s", b.String(), want)
	}
}

// FuzzParseCPUs: a cgroup's cpuset (the kernel's cpulist format) of any shape is read without a
// panic; what is read writes back, as FormatCPUs writes it, to a list that reads the same, and a
// refusal is one line that shows the list it refuses.
func FuzzParseCPUs(f *testing.F) {
	for _, s := range []string{"0-15,32-47", "0", "0-3,8-11\n", " 1 , 2-2 ", "", "3-1", "0-99999999", "-1", "0-65535", "0-65534,65535", "1,1,1", "0--1", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := agent.ParseCPUs(s)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("%q refused with %q: not one line", s, msg)
			}
			return
		}
		for _, c := range cpus {
			if c < 0 {
				t.Fatalf("%q read as %v: a negative CPU", s, cpus)
			}
		}
		back, err := agent.ParseCPUs(agent.FormatCPUs(cpus))
		want := slices.Compact(slices.Sorted(slices.Values(cpus)))
		if err != nil || !slices.Equal(slices.Compact(back), want) {
			t.Fatalf("%q read as %v writes as %q, which reads as %v (%v)", s, cpus, agent.FormatCPUs(cpus), back, err)
		}
	})
}
