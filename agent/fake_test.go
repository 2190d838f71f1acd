//go:build cgo

package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/agent/report"
)

// newFakeAgent is an agent on a fake DGX whose processes' cgroups come from testdata/proc.
func newFakeAgent(t *testing.T, kind, script string, labels agent.LabelStyle) (*agent.Agent, *nvml.Fake, agent.Devices) {
	t.Helper()
	s, err := agent.ParseScript(script)
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake(kind, "dgx-01", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	return a, f, d
}

// Each GPU's processes are mapped to their Slurm job or pod through their cgroups; the report
// carries 8 GPUs, the topology only the first time, and counts its reports.
func TestCollectMapsProcessesToJobsAndPods(t *testing.T) {
	a, _, _ := newFakeAgent(t, "dgxa100", "0 90 pids=4242; 1 0 pids=4243; 2 50 pids=4244,4246; * 0", agent.LabelsDCGM)
	r, err := a.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != report.Version || r.Node != "dgx-01" || r.Seq != 1 || len(r.GPUs) != 8 || r.Topology == nil || r.TopologyHash != r.Topology.Hash() {
		t.Fatalf("first report: version %d node %s seq %d, %d GPUs, topology %v", r.Version, r.Node, r.Seq, len(r.GPUs), r.Topology != nil)
	}
	owner := func(gpu, i int) [2]string { p := r.GPUs[gpu].Processes[i]; return [2]string{p.Job, p.Pod} }
	if got := owner(0, 0); got != [2]string{"123", ""} {
		t.Errorf("GPU 0's process belongs to %v, want job 123", got)
	}
	if got := owner(1, 0); got != [2]string{"77", ""} {
		t.Errorf("GPU 1's process belongs to %v, want job 77", got)
	}
	if got := owner(2, 0); got != [2]string{"", "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"} {
		t.Errorf("GPU 2's first process belongs to %v, want the pod", got)
	}
	if got := owner(2, 1); got != [2]string{"", ""} {
		t.Errorf("GPU 2's second process (a login session) belongs to %v", got)
	}
	r2, err := a.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r2.Seq != 2 || r2.Topology != nil || r2.TopologyHash != r.TopologyHash {
		t.Errorf("second report: seq %d, topology sent again %v", r2.Seq, r2.Topology != nil)
	}
	var out bytes.Buffer
	if err := a.Metrics().Write(&out); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`DCGM_FI_DEV_GPU_UTIL\{Hostname="dgx-01",UUID="GPU-[0-9a-f-]+",device="nvidia0",gpu="0",hpc_job="123",modelName="[^"]*A100[^"]*",pci_bus_id="0000:07:00.0",pod_uid=""\} 90`)
	if !want.Match(out.Bytes()) {
		t.Errorf("metrics lack GPU 0 at 90%% for job 123:\n%s", grep(out.String(), "GPU_UTIL"))
	}
	if !strings.Contains(out.String(), `DCGM_FI_DEV_FB_USED{Hostname="dgx-01"`) || !strings.Contains(out.String(), `pod_uid="5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"`) {
		t.Errorf("metrics lack memory or the pod:\n%s", out.String())
	}
}

func grep(s, word string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// promtool finds Prometheus' promtool, failing under CI=true when it is missing.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (Debian package prometheus; scripts/test.sh installs it)")
		}
		t.Skip("promtool is missing; install Debian's prometheus package or run scripts/test.sh")
	}
	return p
}

// The scrape passes `promtool check metrics`. With dcgm-exporter's label names the one finding is
// the camelCase label modelName, which dashboards expect; with --labels snake there is none.
func TestMetricsPassPromtool(t *testing.T) {
	tool := promtool(t)
	for _, style := range []agent.LabelStyle{agent.LabelsSnake, agent.LabelsDCGM} {
		a, _, _ := newFakeAgent(t, "dgxh100", "0 90 pids=4242; 3 20 pids=4244; * 1", style)
		if _, err := a.Collect(context.Background()); err != nil {
			t.Fatal(err)
		}
		var scrape bytes.Buffer
		if err := a.Metrics().Write(&scrape); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(scrape.Bytes())
		out, err := cmd.CombinedOutput()
		if style == agent.LabelsSnake {
			if err != nil {
				t.Errorf("promtool check metrics (snake labels): %v\n%s", err, out)
			}
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line != "" && !strings.HasSuffix(line, "label names should be written in 'snake_case' not 'camelCase'") {
				t.Errorf("promtool check metrics (dcgm labels): %s", line)
			}
		}
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) {
			t.Errorf("promtool check metrics (dcgm labels) failed beyond lint: %v\n%s", err, out)
		}
		if strings.Count(scrape.String(), "modelName=") != 8*7 { // 8 GPUs x 7 DCGM metrics
			t.Errorf("dcgm label style lacks modelName on every series")
		}
	}
}

// gres-conf's lines on a fake DGX A100 are what Slurm 22.05 itself reads without a complaint:
// `slurmd -G` (print the node's GRES configuration and exit) with a slurm.conf declaring the
// fake's CPUs and Gres=gpu:a100:8, and device files that are real character devices.
func TestGresConfLoadsInSlurm(t *testing.T) {
	slurmd, err := exec.LookPath("slurmd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("slurmd is missing (scripts/slurm-up.sh installs it)")
		}
		t.Skip("slurmd is missing; run make slurm-up")
	}
	dir := t.TempDir()
	dev := filepath.Join(dir, "dev")
	if err := os.Mkdir(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if err := syscall.Mknod(filepath.Join(dev, "nvidia"+string(rune('0'+i))), syscall.S_IFCHR|0o600, 195<<8|i); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("mknod (slurmd wants character devices): %v", err)
			}
			t.Skipf("cannot make device files (%v); this test runs as root", err)
		}
	}
	a, f, d := newFakeAgent(t, "dgxa100", "", agent.LabelsDCGM)
	topo, err := a.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var gres bytes.Buffer
	if err := agent.WriteGresConf(&gres, d.GPUs(), topo, agent.GresOptions{DevDir: dev, Cores: &f.Cores}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gres.String(), "Name=gpu Type=a100 File="+dev+"/nvidia0 Cores=48-63 Links=-1,12,12,12,12,12,12,12\n") ||
		!strings.Contains(gres.String(), "Gres=gpu:a100:8") {
		t.Fatalf("gres.conf:\n%s", gres.String())
	}
	conf := `ClusterName=gres-check
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=6997
SlurmdPort=6996
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=` + dir + `/state
SlurmdSpoolDir=` + dir + `/spool
SlurmdPidFile=` + dir + `/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=dgx-01 NodeAddr=127.0.0.1 Boards=1 SocketsPerBoard=2 CoresPerSocket=64 ThreadsPerCore=2 RealMemory=1000 Gres=gpu:a100:8
PartitionName=p Nodes=dgx-01 State=UP
`
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gres.conf"), gres.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(slurmd, "-G", "-f", filepath.Join(dir, "slurm.conf"), "-N", "dgx-01")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "error") || strings.Contains(string(out), "fatal") {
		t.Fatalf("slurmd -G: %v\n%s\ngres.conf:\n%s", err, out, gres.String())
	}
	// slurmd read every GPU with its cores and links.
	if n := strings.Count(string(out), "Gres Name=gpu Type=a100 Count=1"); n != 8 {
		t.Fatalf("slurmd -G lists %d GPUs, want 8:\n%s", n, out)
	}
	if !strings.Contains(string(out), "File="+dev+"/nvidia6 Cores=80-95") || !strings.Contains(string(out), "Links=12,12,12,12,12,12,12,-1") {
		t.Errorf("slurmd -G lost cores or links:\n%s", out)
	}
	// A line Slurm would refuse (a core the node lacks) does fail this check.
	bad := strings.Replace(gres.String(), "Cores=48-63", "Cores=300-310", 1)
	if err := os.WriteFile(filepath.Join(dir, "gres.conf"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(slurmd, "-G", "-f", filepath.Join(dir, "slurm.conf"), "-N", "dgx-01")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	if out, err := cmd.CombinedOutput(); err == nil && !strings.Contains(string(out), "error") {
		t.Errorf("slurmd -G took cores 300-310 on a 128-core node:\n%s", out)
	}
}

// A GPU that fell off the bus before the agent started (DeviceGetHandleByIndex says GPU_IS_LOST
// for GPU 2 of 8, as after an XID 79) does not stop the agent: the log names it, the topology keeps
// its place marked lost, and every other GPU keeps its own NVML index, UUID, device file and
// readings in the report, the metrics, gres.conf, the topology and its XID errors. Here the minor
// numbers run backwards (GPU i is /dev/nvidia(7-i)), as they may on a real node, so an index
// taken for a minor, or a position taken for an index, shows.
func TestAGPULostAtStartLeavesTheOthersTheirNumbers(t *testing.T) {
	ctx := context.Background()
	s, err := agent.ParseScript("0 10 pids=4242; 1 11; 3 13 xid=48; 4 14; 5 15; 6 16; 7 17")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxh100", "dgx-01", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range f.Server.Devices {
		d.(*server.Device).Minor = 7 - i
	}
	handle := f.Server.DeviceGetHandleByIndexFunc
	f.Server.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if i == 2 {
			return nil, gonvml.ERROR_GPU_IS_LOST
		}
		return handle(i)
	}
	var logs bytes.Buffer
	d, err := nvml.OpenFake(f, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("one lost GPU stopped the agent: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "gpu=2") || !strings.Contains(strings.ToLower(logs.String()), "lost") {
		t.Errorf("the log does not say GPU 2 is lost:\n%s", logs.String())
	}
	uuidOf := func(i int) string { return f.Server.Devices[i].(*server.Device).UUID }
	infos := d.GPUs()
	if len(infos) != 8 || infos[2].Lost == "" || infos[3].Lost != "" || infos[3].Index != 3 || infos[3].UUID != uuidOf(3) || infos[3].Minor != 4 {
		t.Fatalf("GPUs = %+v", infos)
	}
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 7 {
		t.Fatalf("report lists %d GPUs, want the 7 readable", len(r.GPUs))
	}
	for _, g := range r.GPUs {
		if g.Index == 2 || g.UUID != uuidOf(g.Index) || g.Util == nil || *g.Util != float64(10+g.Index) {
			t.Errorf("report GPU %d: UUID %s, util %v; want its own UUID and %d%%", g.Index, g.UUID, g.Util, 10+g.Index)
		}
	}
	r, _ = a.Collect(ctx) // the XID event of GPU 3 is taken with the next sample
	for _, g := range r.GPUs {
		want := uint64(0)
		if g.Index == 3 {
			want = 48
		}
		if g.XID == nil || *g.XID != want {
			t.Errorf("GPU %d's XID = %v, want %d", g.Index, g.XID, want)
		}
	}
	topo, err := a.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.GPUs) != 8 || topo.GPUs[2].Lost == "" || topo.GPUs[3].Index != 3 || topo.GPUs[3].UUID != uuidOf(3) ||
		topo.GPUs[3].NVLinks[6] != 18 || topo.GPUs[3].NVLinks[2] != 0 || topo.GPUs[6].PCIe[3] != "SYS" || topo.GPUs[3].Minor != 4 {
		t.Errorf("topology GPU 2 and 3: %+v %+v", topo.GPUs[2], topo.GPUs[3])
	}
	var scrape bytes.Buffer
	if err := a.Metrics().Write(&scrape); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`DCGM_FI_DEV_GPU_UTIL\{Hostname="dgx-01",UUID="` + uuidOf(3) + `",device="nvidia4",gpu="3",[^}]*pci_bus_id="0000:61:00.0"[^}]*\} 13\n`)
	if !want.Match(scrape.Bytes()) || strings.Contains(scrape.String(), `gpu="2"`) {
		t.Errorf("metrics lack GPU 3 (nvidia4, 13%%) or show GPU 2:\n%s", grep(scrape.String(), "GPU_UTIL"))
	}
	if !strings.Contains(scrape.String(), "quartermaster_agent_gpus 7\n") || !strings.Contains(scrape.String(), "quartermaster_agent_gpus_unread 1\n") {
		t.Errorf("metrics do not count 7 GPUs read and 1 not:\n%s", grep(scrape.String(), "quartermaster_agent_gpus"))
	}
	var gres bytes.Buffer
	if err := agent.WriteGresConf(&gres, d.GPUs(), topo, agent.GresOptions{Cores: &f.Cores}); err != nil {
		t.Fatal(err)
	}
	g := gres.String()
	for i := range 8 {
		line := "File=/dev/nvidia" + strconv.Itoa(7-i) + " "
		if got := strings.Contains(g, line); got != (i != 2) {
			t.Errorf("gres.conf has GPU %d's %q: %v, want %v:\n%s", i, line, got, i != 2, g)
		}
	}
	if !strings.Contains(g, "Gres=gpu:h100:7") || !strings.Contains(g, "# GPU 2 ") ||
		!strings.Contains(g, "File=/dev/nvidia4 Cores=0-55 Links=18,18,-1,18,18,18,18\n") {
		t.Errorf("gres.conf does not list 7 GPUs with GPU 3 third, or does not say why GPU 2 is missing:\n%s", g)
	}
	var matrix bytes.Buffer
	agent.WriteTopology(&matrix, topo)
	if !strings.Contains(matrix.String(), "\tGPU2\tGPU3\t") || !strings.Contains(matrix.String(), "GPU3\tNV18\tNV18\tN/A\t X \tNV18") ||
		!strings.Contains(matrix.String(), "GPU2 cannot be read") {
		t.Errorf("topology matrix:\n%s", matrix.String())
	}
}

// A GPU that cannot be read when the agent starts is tried again at every collection: GPU 2 gives
// no handle (GPU_IS_LOST) and GPU 5 no UUID (UNKNOWN) at start; while they fail they stay out of
// the report, and once they read they are back with their own UUIDs and readings, in a report that
// carries the new topology (GPU 2 no longer marked lost, with its NVLinks), in the metrics (8 GPUs
// read, none unread, 2 recovered), with their XID errors, and the log says so for each.
func TestAGPULostAtStartIsReadAgainWhenItComesBack(t *testing.T) {
	ctx := context.Background()
	s, err := agent.ParseScript("* 20; 2 42 pids=4242; 5 55 xid=48")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxh100", "dgx-01", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	failing := true
	handle := f.Server.DeviceGetHandleByIndexFunc
	f.Server.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if i == 2 && failing {
			return nil, gonvml.ERROR_GPU_IS_LOST
		}
		return handle(i)
	}
	five := f.Server.Devices[5].(*server.Device)
	uuid := five.GetUUIDFunc
	five.GetUUIDFunc = func() (string, gonvml.Return) {
		if failing {
			return "", gonvml.ERROR_UNKNOWN
		}
		return uuid()
	}
	registered := 0
	five.RegisterEventsFunc = func(uint64, gonvml.EventSet) gonvml.Return { registered++; return gonvml.SUCCESS }
	var logs bytes.Buffer
	d, err := nvml.OpenFake(f, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}})
	if err != nil {
		t.Fatal(err)
	}
	indexes := func(r report.Report) (out []int) {
		for _, g := range r.GPUs {
			out = append(out, g.Index)
		}
		return out
	}
	for range 2 {
		r, err := a.Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := indexes(r); len(got) != 6 || slices.Contains(got, 2) || slices.Contains(got, 5) {
			t.Fatalf("while GPUs 2 and 5 fail, the report lists GPUs %v; want the other 6", got)
		}
	}
	if strings.Contains(logs.String(), "can be read now") {
		t.Errorf("the log says a GPU came back while it still fails:\n%s", logs.String())
	}

	failing = false
	r, err := a.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := indexes(r); len(got) != 8 {
		t.Fatalf("after GPUs 2 and 5 read again, the report lists GPUs %v; want all 8", got)
	}
	uuidOf := func(i int) string { return f.Server.Devices[i].(*server.Device).UUID }
	if g := r.GPUs[2]; g.UUID != uuidOf(2) || g.Util == nil || *g.Util != 42 || len(g.Processes) != 1 || g.Processes[0].Job != "123" {
		t.Errorf("GPU 2 back in the report = %+v; want its UUID, 42%% and job 123's process", g)
	}
	if g := r.GPUs[5]; g.UUID != uuidOf(5) || g.Util == nil || *g.Util != 55 {
		t.Errorf("GPU 5 back in the report = %+v; want its UUID and 55%%", g)
	}
	if r.Topology == nil || r.TopologyHash != r.Topology.Hash() {
		t.Fatalf("the report after GPUs 2 and 5 came back carries no new topology (hash %q)", r.TopologyHash)
	}
	for _, i := range []int{2, 5} {
		if tg := r.Topology.GPUs[i]; tg.Lost != "" || tg.UUID != uuidOf(i) || tg.NVLinks[(i+1)%8] != 18 {
			t.Errorf("topology GPU %d = %+v; want it read, with its UUID and NV18 links", i, tg)
		}
	}
	if infos := d.GPUs(); infos[2].Lost != "" || infos[5].Lost != "" || infos[2].BusID == "" {
		t.Errorf("GPUs = %+v; want none lost", infos)
	}
	for _, i := range []string{"gpu=2", "gpu=5"} {
		if !regexp.MustCompile(`level=INFO msg="a GPU that could not be read at start can be read now[^\n]*` + i).MatchString(logs.String()) {
			t.Errorf("the log does not say %s came back:\n%s", i, logs.String())
		}
	}
	if registered == 0 {
		t.Error("GPU 5's XID events were not registered when it came back")
	}
	r, _ = a.Collect(ctx) // GPU 5's XID event is taken with the next sample
	if g := r.GPUs[5]; g.XID == nil || *g.XID != 48 {
		t.Errorf("GPU 5's XID = %v, want 48", g.XID)
	}
	if r.Topology != nil {
		t.Error("the topology is sent again with every report after the GPUs came back")
	}
	var scrape bytes.Buffer
	if err := a.Metrics().Write(&scrape); err != nil {
		t.Fatal(err)
	}
	m := scrape.String()
	for _, want := range []string{"quartermaster_agent_gpus 8\n", "quartermaster_agent_gpus_unread 0\n", "quartermaster_agent_gpus_recovered_total 2\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, grep(m, "quartermaster_agent_gpus"))
		}
	}
	want := regexp.MustCompile(`DCGM_FI_DEV_GPU_UTIL\{Hostname="dgx-01",UUID="` + uuidOf(2) + `",device="nvidia2",gpu="2",hpc_job="123",[^}]*pci_bus_id="0000:52:00.0"[^}]*\} 42\n`)
	if !want.MatchString(m) {
		t.Errorf("metrics lack GPU 2 as nvidia2 on its bus at 42%%:\n%s", grep(m, "GPU_UTIL"))
	}
}

// migGPU puts GPU i of a fake in MIG mode with one MIG device per profile (slices, MiB, GPU
// instance id), each the only compute instance (id 0) of its GPU instance. The MIG devices are
// idle and empty, and have no utilization (NOT_SUPPORTED), as on a real A100 or H100.
func migGPU(f *nvml.Fake, i int, profiles [][3]int) []*mock.Device {
	dev := f.Server.Devices[i].(*server.Device)
	dev.MigMode = gonvml.DEVICE_MIG_ENABLE
	var migs []gonvml.Device
	var out []*mock.Device
	for k, p := range profiles {
		attrs := gonvml.DeviceAttributes{GpuInstanceSliceCount: uint32(p[0]), MemorySizeMB: uint64(p[1])}
		gi, uuid := p[2], fmt.Sprintf("MIG-%s-%d", dev.UUID, k)
		m := &mock.Device{
			GetAttributesFunc:        func() (gonvml.DeviceAttributes, gonvml.Return) { return attrs, gonvml.SUCCESS },
			GetGpuInstanceIdFunc:     func() (int, gonvml.Return) { return gi, gonvml.SUCCESS },
			GetComputeInstanceIdFunc: func() (int, gonvml.Return) { return 0, gonvml.SUCCESS },
			GetUUIDFunc:              func() (string, gonvml.Return) { return uuid, gonvml.SUCCESS },
			GetMemoryInfoFunc: func() (gonvml.Memory, gonvml.Return) {
				total := attrs.MemorySizeMB << 20
				return gonvml.Memory{Total: total, Free: total}, gonvml.SUCCESS
			},
			GetUtilizationRatesFunc: func() (gonvml.Utilization, gonvml.Return) {
				return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED
			},
			GetComputeRunningProcessesFunc:    func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.SUCCESS },
			GetMPSComputeRunningProcessesFunc: func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.SUCCESS },
			GetGraphicsRunningProcessesFunc:   func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.SUCCESS },
		}
		// Nothing reserved: the second version of the memory call reads as the first does now.
		m.GetMemoryInfo_v2Func = func() (gonvml.Memory_v2, gonvml.Return) {
			mem, r := m.GetMemoryInfo()
			return gonvml.Memory_v2{Total: mem.Total, Used: mem.Used, Free: mem.Free}, r
		}
		migs = append(migs, m)
		out = append(out, m)
	}
	dev.GetMaxMigDeviceCountFunc = func() (int, gonvml.Return) { return 7, gonvml.SUCCESS }
	dev.GetMigDeviceHandleByIndexFunc = func(j int) (gonvml.Device, gonvml.Return) {
		if j < len(migs) {
			return migs[j], gonvml.SUCCESS
		}
		return nil, gonvml.ERROR_NOT_FOUND
	}
	return out
}

// A GPU in MIG mode is reported with each of its MIG devices as a device of its own, under the
// GPU's entry: UUID, GPU and compute instance, profile, memory used and total, and its processes
// with their jobs and pods. NVML gives no utilization for the GPU in MIG mode nor for its MIG
// devices here, and none is reported; where a MIG device gives one, it is. The agent runs
// unprivileged, so NVML refuses the whole GPU's processes (NO_PERMISSION): the GPU's own list is
// made of its MIG devices', so a service that reads only the GPUs still maps them to leases.
func TestMIGDevicesAreReportedEachOnItsOwn(t *testing.T) {
	ctx := context.Background()
	s, err := agent.ParseScript("* 30")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxa100", "dgx-01", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	migs := migGPU(f, 1, [][3]int{{3, 19968, 1}, {2, 9856, 5}, {1, 4864, 13}})
	parent := f.Server.Devices[1].(*server.Device)
	parent.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED }
	parent.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_NO_PERMISSION }
	migs[0].GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) {
		return gonvml.Memory{Total: 19968 << 20, Used: 8 << 30, Free: 19968<<20 - 8<<30}, gonvml.SUCCESS
	}
	migs[0].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 8 << 30, GpuInstanceId: 1}}, gonvml.SUCCESS
	}
	migs[2].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4244, UsedGpuMemory: 1 << 30, GpuInstanceId: 13}}, gonvml.SUCCESS
	}
	migs[2].GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{Gpu: 37}, gonvml.SUCCESS }
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 8 || r.GPUs[1].Index != 1 {
		t.Fatalf("the report lists %d GPUs; want all 8, GPU 1 in MIG mode among them", len(r.GPUs))
	}
	g := r.GPUs[1]
	if g.Util != nil || len(g.Processes) != 2 || g.Processes[0].Job != "123" || g.Processes[1].Pod != "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b" {
		t.Errorf("GPU 1 = %+v; want no utilization and its MIG devices' processes, job 123's and the pod's", g)
	}
	if len(g.MIG) != 3 {
		t.Fatalf("GPU 1 lists %d MIG devices, want 3: %+v", len(g.MIG), g.MIG)
	}
	want := []struct {
		gi      int
		profile string
		used    uint64
		util    float64 // -1: none
		job     string
	}{{1, "3g.20gb", 8 << 30, -1, "123"}, {5, "2g.10gb", 0, -1, ""}, {13, "1g.5gb", 0, 37, ""}}
	for k, w := range want {
		m := g.MIG[k]
		if m.UUID != fmt.Sprintf("MIG-%s-%d", parent.UUID, k) || m.GI != w.gi || m.CI != 0 || m.Profile != w.profile ||
			m.MemUsed == nil || *m.MemUsed != w.used || m.MemTotal == 0 {
			t.Errorf("MIG device %d = %+v; want GI %d, profile %s, %d bytes used", k, m, w.gi, w.profile, w.used)
		}
		if (w.util < 0) != (m.Util == nil) || (m.Util != nil && *m.Util != w.util) {
			t.Errorf("MIG device %d's utilization = %v; want %v (-1: none, as NVML gives none)", k, m.Util, w.util)
		}
		if w.job != "" && (len(m.Processes) != 1 || m.Processes[0].Job != w.job || m.Processes[0].MemUsed != 8<<30) {
			t.Errorf("MIG device %d's processes = %+v; want job %s's", k, m.Processes, w.job)
		}
	}
	if p := g.MIG[2].Processes; len(p) != 1 || p[0].PID != 4244 || p[0].Pod != "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b" {
		t.Errorf("MIG device 2's processes = %+v; want the pod's", p)
	}
	if len(g.MIG[1].Processes) != 0 {
		t.Errorf("MIG device 1 lists processes it does not have: %+v", g.MIG[1].Processes)
	}
	for _, o := range r.GPUs {
		if o.Index != 1 && (o.MIG != nil || o.Util == nil) {
			t.Errorf("GPU %d (not in MIG mode) = %+v; want its utilization and no MIG devices", o.Index, o)
		}
	}
	body, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`"mig":[{"uuid":"MIG-`)) || bytes.Count(body, []byte(`"profile":`)) != 3 {
		t.Errorf("the report's JSON lacks the MIG devices: %s", body)
	}
}

// A GPU in MIG mode is not one plain GPU to Slurm: gres-conf lists each of its MIG devices as a GPU
// of its own, typed by the model and MIG profile as Slurm's AutoDetect=nvml does (a100_3g.20gb),
// confined by the parent's device file and those of its GPU and compute instances (from the
// driver's mig-minors), with the parent's cores and no NVLinks, and slurm.conf's Gres= counts them.
// Without the MIG device files the GPU is left out with a comment saying why, never written whole.
func TestGresConfListsMIGDevicesNotTheWholeGPU(t *testing.T) {
	f, err := nvml.NewFake("dgxa100", "dgx-01", nil)
	if err != nil {
		t.Fatal(err)
	}
	migGPU(f, 1, [][3]int{{3, 19968, 1}, {2, 9856, 5}, {1, 4864, 13}})
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	topo, err := d.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	minors := agent.ParseMIGMinors([]byte("config 1\nmonitor 2\ngpu1/gi1/access 21\ngpu1/gi1/ci0/access 22\ngpu1/gi5/access 57\ngpu1/gi5/ci0/access 58\ngpu1/gi13/access 129\ngpu1/gi13/ci0/access 130\n"))
	var b bytes.Buffer
	if err := agent.WriteGresConf(&b, d.GPUs(), topo, agent.GresOptions{Cores: &f.Cores, MIGMinors: minors}); err != nil {
		t.Fatal(err)
	}
	g := b.String()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(g), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 10 || strings.Contains(g, "File=/dev/nvidia1 ") || strings.Contains(g, "File=/dev/nvidia1\n") {
		t.Fatalf("want 7 whole GPUs and GPU 1's 3 MIG devices, not GPU 1 whole:\n%s", g)
	}
	for _, want := range []string{
		"Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22 Cores=48-63 Links=0,-1,0,0,0,0,0,0,0,0\n",
		"Name=gpu Type=a100_2g.10gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap57,/dev/nvidia-caps/nvidia-cap58 Cores=48-63 ",
		"Name=gpu Type=a100_1g.5gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap129,/dev/nvidia-caps/nvidia-cap130 Cores=48-63 ",
		"Name=gpu Type=a100 File=/dev/nvidia0 Cores=48-63 Links=-1,0,0,0,12,12,12,12,12,12\n",
		"Gres=gpu:a100:7,gpu:a100_3g.20gb:1,gpu:a100_2g.10gb:1,gpu:a100_1g.5gb:1 ",
		"# GPU 1 (/dev/nvidia1) is in MIG mode",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("gres.conf lacks %q:\n%s", want, g)
		}
	}
	b.Reset()
	if err := agent.WriteGresConf(&b, d.GPUs(), topo, agent.GresOptions{}); err != nil {
		t.Fatal(err)
	}
	g = b.String()
	if strings.Contains(g, "/dev/nvidia1 ") || strings.Contains(g, "/dev/nvidia1\n") || !strings.Contains(g, "Gres=gpu:a100:7 ") ||
		!strings.Contains(g, "# GPU 1 (/dev/nvidia1) is in MIG mode, but") {
		t.Errorf("without the MIG device files, GPU 1 must be left out with a comment saying why:\n%s", g)
	}
}

// MIG mode turned on or off while the agent runs (an H100 needs no reset for it) is read at the
// next sample: a GPU just put in MIG mode, whose whole-GPU process list NVML now refuses the
// agent, is reported with its MIG devices and their processes rather than dropped from every
// report until a restart; turned off again, it is a plain GPU with its utilization.
func TestMIGModeChangedWhileRunning(t *testing.T) {
	ctx := context.Background()
	a, f, _ := newFakeAgent(t, "dgxa100", "* 30", agent.LabelsDCGM)
	if r, err := a.Collect(ctx); err != nil || len(r.GPUs) != 8 || r.GPUs[1].MIG != nil {
		t.Fatalf("before MIG: %v, %+v", err, r.GPUs)
	}
	parent := f.Server.Devices[1].(*server.Device)
	util, procs := parent.GetUtilizationRatesFunc, parent.GetComputeRunningProcessesFunc
	migs := migGPU(f, 1, [][3]int{{3, 19968, 1}, {4, 19968, 2}})
	parent.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED }
	parent.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_NO_PERMISSION }
	migs[1].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 4 << 30, GpuInstanceId: 2}}, gonvml.SUCCESS
	}
	r, err := a.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 8 {
		t.Fatalf("after GPU 1 went into MIG mode the report lists %d GPUs, want 8", len(r.GPUs))
	}
	if g := r.GPUs[1]; g.Util != nil || len(g.MIG) != 2 || len(g.Processes) != 1 || g.Processes[0].Job != "123" ||
		len(g.MIG[1].Processes) != 1 || g.MIG[1].Profile != "4g.20gb" {
		t.Errorf("GPU 1 in MIG mode = %+v; want its 2 MIG devices and job 123's process", g)
	}
	parent.MigMode = gonvml.DEVICE_MIG_DISABLE
	parent.GetUtilizationRatesFunc, parent.GetComputeRunningProcessesFunc = util, procs
	r, err = a.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := r.GPUs[1]; len(r.GPUs) != 8 || g.MIG != nil || g.Util == nil || *g.Util != 30 {
		t.Errorf("GPU 1 with MIG off again = %+v; want a plain GPU at 30%%", g)
	}
}

// A MIG profile is named as nvidia-smi, dcgm-exporter and NVIDIA's MIG guide name it — in the
// report, in /metrics' GPU_I_PROFILE and in gres.conf's types — also where the driver gives no
// profile name: the GPU instance's memory as a share of the GPU's, rounded up to eighths, of the
// GPU's memory in GB. Rounding the instance's own memory would name the A100-80GB's 3g.40gb
// (40192 MiB) 3g.39gb, the A100-40GB's 7g.40gb 7g.39gb, the H100's 7g.80gb (81152 MiB) 7g.79gb
// and the H200's 1g.18gb (16384 MiB) 1g.16gb. The memory sizes are the real cards' (nvidia-smi
// mig -lgip). The driver here gives no names, as drivers before R470 do not; one that does is
// TestMIGProfileNamesComeFromTheDriver.
func TestMIGProfileNamesAreNVIDIAs(t *testing.T) {
	for _, c := range []struct {
		card   string
		kind   string
		gpuMiB uint64
		migs   [][3]int // slices, MiB, GPU instance id
		want   []string
	}{
		{"A100-SXM4-40GB", "dgxa100", 40960, [][3]int{{7, 40192, 0}}, []string{"7g.40gb"}},
		{"A100-SXM4-40GB", "dgxa100", 40960, [][3]int{{3, 19968, 1}, {2, 9856, 5}, {1, 4864, 13}}, []string{"3g.20gb", "2g.10gb", "1g.5gb"}},
		{"A100-SXM4-80GB", "dgxa100", 81920, [][3]int{{3, 40192, 1}, {4, 40192, 2}}, []string{"3g.40gb", "4g.40gb"}},
		{"A100-SXM4-80GB", "dgxa100", 81920, [][3]int{{7, 80384, 0}}, []string{"7g.80gb"}},
		{"A100-SXM4-80GB", "dgxa100", 81920, [][3]int{{1, 9856, 9}, {1, 19968, 3}, {2, 19968, 5}}, []string{"1g.10gb", "1g.20gb", "2g.20gb"}},
		{"H100 80GB HBM3", "dgxh100", 81559, [][3]int{{1, 9984, 9}, {1, 20096, 3}, {2, 20096, 5}, {3, 40448, 2}}, []string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb"}},
		{"H100 80GB HBM3", "dgxh100", 81559, [][3]int{{4, 40448, 1}}, []string{"4g.40gb"}},
		{"H100 80GB HBM3", "dgxh100", 81559, [][3]int{{7, 81152, 0}}, []string{"7g.80gb"}},
		{"H200 141GB", "dgxh100", 143771, [][3]int{{1, 16384, 9}, {2, 33280, 5}}, []string{"1g.18gb", "2g.35gb"}},
		{"H200 141GB", "dgxh100", 143771, [][3]int{{7, 143360, 0}}, []string{"7g.141gb"}},
	} {
		t.Run(fmt.Sprintf("%s %v", c.card, c.want), func(t *testing.T) {
			f, err := nvml.NewFake(c.kind, "dgx-01", nil)
			if err != nil {
				t.Fatal(err)
			}
			parent := f.Server.Devices[1].(*server.Device)
			parent.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) {
				return gonvml.Memory{Total: c.gpuMiB << 20, Free: c.gpuMiB << 20}, gonvml.SUCCESS
			}
			parent.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED }
			f.ProfileInfo = func(int, int) (gonvml.GpuInstanceProfileInfo_v3, gonvml.Return) {
				return gonvml.GpuInstanceProfileInfo_v3{}, gonvml.ERROR_NOT_SUPPORTED
			}
			migGPU(f, 1, c.migs)
			checkMIGProfileNames(t, f, c.migs, c.want)
		})
	}
}

// checkMIGProfileNames checks that GPU 1's MIG devices have the profile names want in the report,
// in /metrics and in gres.conf.
func checkMIGProfileNames(t *testing.T, f *nvml.Fake, migs [][3]int, want []string) {
	t.Helper()
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range r.GPUs[1].MIG {
		got = append(got, m.Profile)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the report names GPU 1's MIG devices %v, want %v", got, want)
	}
	m := scrape(t, a)
	for k, p := range want {
		if s := migSeries(m, "DCGM_FI_DEV_FB_FREE", "1", strconv.Itoa(migs[k][2])); len(s) != 1 || !strings.Contains(s[0], `GPU_I_PROFILE="`+p+`"`) {
			t.Errorf("/metrics shows GPU instance %d as %v, want GPU_I_PROFILE=%q", migs[k][2], s, p)
		}
	}
	var minors strings.Builder
	for k, mig := range migs {
		fmt.Fprintf(&minors, "gpu1/gi%d/access %d\ngpu1/gi%d/ci0/access %d\n", mig[2], 100+2*k, mig[2], 101+2*k)
	}
	topo, err := d.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := agent.WriteGresConf(&b, d.GPUs(), topo, agent.GresOptions{MIGMinors: agent.ParseMIGMinors([]byte(minors.String()))}); err != nil {
		t.Fatal(err)
	}
	typ := agent.GresType(d.GPUs()[1].Name)
	for _, p := range want {
		if !strings.Contains(b.String(), "Type="+typ+"_"+p+" ") || !strings.Contains(b.String(), "gpu:"+typ+"_"+p+":") {
			t.Errorf("gres.conf lacks the type %s_%s:\n%s", typ, p, b.String())
		}
	}
}

// Where the driver names its GPU instance profiles (NVML's GPU instance profile info, v2 and v3),
// a MIG device's profile is the driver's name for it, without nvidia-smi's "MIG " in front, as
// dcgm-exporter writes it: also a name the agent could not work out, such as the H100's 1g.10gb+me
// (with the media engines), which has the slices and memory of 1g.10gb and is told apart by its
// engines. A driver that gives no names is TestMIGProfileNamesAreNVIDIAs.
func TestMIGProfileNamesComeFromTheDriver(t *testing.T) {
	f, err := nvml.NewFake("dgxh100", "dgx-01", nil)
	if err != nil {
		t.Fatal(err)
	}
	parent := f.Server.Devices[1].(*server.Device)
	parent.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) {
		return gonvml.Memory{Total: 81559 << 20, Free: 81559 << 20}, gonvml.SUCCESS
	}
	parent.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED }
	// The H100 80GB HBM3's profiles as driver 535 lists them (nvidia-smi mig -lgip).
	type profile struct {
		name           string
		slices         uint32
		mem            uint64
		dec, jpeg, ofa uint32
	}
	h100 := map[int]profile{
		gonvml.GPU_INSTANCE_PROFILE_1_SLICE:      {"MIG 1g.10gb", 1, 9984, 1, 1, 0},
		gonvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: {"MIG 1g.10gb+me", 1, 9984, 7, 7, 1},
		gonvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: {"MIG 1g.20gb", 1, 20096, 1, 1, 0},
		gonvml.GPU_INSTANCE_PROFILE_2_SLICE:      {"MIG 2g.20gb", 2, 20096, 2, 2, 0},
		gonvml.GPU_INSTANCE_PROFILE_3_SLICE:      {"MIG 3g.40gb", 3, 40448, 3, 3, 0},
		gonvml.GPU_INSTANCE_PROFILE_4_SLICE:      {"MIG 4g.40gb", 4, 40448, 4, 4, 0},
		gonvml.GPU_INSTANCE_PROFILE_7_SLICE:      {"MIG 7g.80gb", 7, 81152, 7, 7, 1},
	}
	f.ProfileInfo = func(gpu, i int) (gonvml.GpuInstanceProfileInfo_v3, gonvml.Return) {
		p, ok := h100[i]
		if gpu != 1 || !ok {
			return gonvml.GpuInstanceProfileInfo_v3{}, gonvml.ERROR_NOT_SUPPORTED
		}
		info := gonvml.GpuInstanceProfileInfo_v3{Id: uint32(i), SliceCount: p.slices, MemorySizeMB: p.mem, DecoderCount: p.dec, JpegCount: p.jpeg, OfaCount: p.ofa}
		for k, c := range []byte(p.name) {
			info.Name[k] = int8(c)
		}
		return info, gonvml.SUCCESS
	}
	migs := [][3]int{{1, 9984, 9}, {1, 9984, 10}, {3, 40448, 2}}
	for k, m := range migGPU(f, 1, migs) {
		p := map[int]profile{0: h100[gonvml.GPU_INSTANCE_PROFILE_1_SLICE], 1: h100[gonvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1], 2: h100[gonvml.GPU_INSTANCE_PROFILE_3_SLICE]}[k]
		attrs := gonvml.DeviceAttributes{GpuInstanceSliceCount: p.slices, ComputeInstanceSliceCount: p.slices, MemorySizeMB: p.mem,
			SharedDecoderCount: p.dec, SharedJpegCount: p.jpeg, SharedOfaCount: p.ofa}
		m.GetAttributesFunc = func() (gonvml.DeviceAttributes, gonvml.Return) { return attrs, gonvml.SUCCESS }
	}
	checkMIGProfileNames(t, f, migs, []string{"1g.10gb", "1g.10gb+me", "3g.40gb"})
}

// Slurm's Links= has one entry per device of the gres.conf, in the file's order, with -1 at the
// line's own place (Slurm orders the devices by where their -1 is). A GPU in MIG mode left out of
// the file (its MIG device files unknown) takes no entry, so an 8-GPU machine has 7; written as
// its MIG devices, it takes one per MIG device, 0 from every other device as MIG has no NVLinks.
func TestGresConfLinksFollowTheFile(t *testing.T) {
	f, err := nvml.NewFake("dgxa100", "dgx-01", nil)
	if err != nil {
		t.Fatal(err)
	}
	migGPU(f, 1, [][3]int{{3, 19968, 1}, {2, 9856, 5}})
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	topo, err := d.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	minors := agent.ParseMIGMinors([]byte("gpu1/gi1/access 21\ngpu1/gi1/ci0/access 22\ngpu1/gi5/access 57\ngpu1/gi5/ci0/access 58\n"))
	for _, c := range []struct {
		minors map[string]int
		files  []string // each line's device, in the file's order
	}{
		{nil, []string{"nvidia0", "nvidia2", "nvidia3", "nvidia4", "nvidia5", "nvidia6", "nvidia7"}},
		{minors, []string{"nvidia0", "nvidia-cap21", "nvidia-cap57", "nvidia2", "nvidia3", "nvidia4", "nvidia5", "nvidia6", "nvidia7"}},
	} {
		var b bytes.Buffer
		if err := agent.WriteGresConf(&b, d.GPUs(), topo, agent.GresOptions{MIGMinors: c.minors}); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		if len(lines) != len(c.files) {
			t.Fatalf("want %d devices in gres.conf:\n%s", len(c.files), b.String())
		}
		for i, l := range lines {
			if !strings.Contains(l, "/dev/"+c.files[i]+" ") && !strings.Contains(l, "/dev/nvidia-caps/"+c.files[i]+",") {
				t.Errorf("line %d is not %s: %s", i, c.files[i], l)
			}
			links := strings.Split(strings.TrimPrefix(regexp.MustCompile(`Links=\S+`).FindString(l), "Links="), ",")
			if len(links) != len(lines) {
				t.Errorf("line %d has %d entries in Links=, want one per device in the file (%d): %s", i, len(links), len(lines), l)
				continue
			}
			for j, v := range links {
				want := "0" // a MIG device, or to one
				switch {
				case j == i:
					want = "-1"
				case strings.HasPrefix(c.files[i], "nvidia") && !strings.Contains(c.files[i], "cap") && !strings.Contains(c.files[j], "cap"):
					want = "12"
				}
				if v != want {
					t.Errorf("line %d (%s), entry %d (%s) = %s, want %s: %s", i, c.files[i], j, c.files[j], v, want, l)
				}
			}
		}
	}
}

// A --fake-script changed to a MIG profile the fake's GPUs lack (an A100-40GB's 1g.5gb on an
// H100) is not taken: the last good script stays in force, rather than a slice shown as a
// 1g.10gb with 5 GiB, which no H100 has.
func TestFakeScriptWithAProfileTheGPULacksKeepsTheLastOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "util.txt")
	if err := os.WriteFile(path, []byte("1 0 mig=3g.40gb,1g.10gb; * 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sf := &agent.ScriptFile{Path: path}
	f, err := nvml.NewFake("dgxh100", "dgx-01", sf)
	if err != nil {
		t.Fatal(err)
	}
	sf.GPUs, sf.Check = f.GPUs(), f.CheckMIG
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d})
	if err != nil {
		t.Fatal(err)
	}
	profiles := func() []string {
		r, err := a.Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ps []string
		for _, m := range r.GPUs[1].MIG {
			ps = append(ps, m.Profile)
		}
		return ps
	}
	if got := profiles(); !slices.Equal(got, []string{"3g.40gb", "1g.10gb"}) {
		t.Fatalf("GPU 1's MIG devices are %v, want 3g.40gb and 1g.10gb", got)
	}
	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(path, []byte("1 0 mig=1g.5gb,1g.5gb; * 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got := profiles(); !slices.Equal(got, []string{"3g.40gb", "1g.10gb"}) {
		t.Errorf("after the script named 1g.5gb on an H100, GPU 1's MIG devices are %v; want the last good script's 3g.40gb and 1g.10gb", got)
	}
}

// A GPU lost while the agent runs is marked lost in the topology the service receives at its next
// read, as one lost at start is; when it reads again, the topology is read again at once and sent
// with that report, no longer marking it.
func TestAGPULostWhileRunningIsSentMarkedLost(t *testing.T) {
	ctx := context.Background()
	f, err := nvml.NewFake("dgxa100", "dgx-02", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	a, err := agent.New(agent.Config{Node: "dgx-02", Devices: d, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := a.Collect(ctx); err != nil || r.Topology == nil || r.Topology.GPUs[6].Lost != "" {
		t.Fatalf("the first report: %v, %v", r.Topology, err)
	}
	dev := f.Server.Devices[6].(*server.Device)
	util := dev.GetUtilizationRatesFunc
	dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_GPU_IS_LOST }
	if r, err := a.Collect(ctx); err != nil || len(r.GPUs) != 7 {
		t.Fatalf("with GPU 6 lost: %d GPUs, %v", len(r.GPUs), err)
	}
	now = now.Add(agent.DefaultTopologyEvery)
	r, err := a.Collect(ctx)
	if err != nil || r.Topology == nil || r.Topology.GPUs[6].Lost == "" || slices.Max(r.Topology.GPUs[6].NVLinks) != 0 {
		t.Fatalf("the topology read while GPU 6 is lost: %+v, %v; want it sent, GPU 6 marked lost without links", r.Topology, err)
	}
	dev.GetUtilizationRatesFunc = util
	now = now.Add(10 * time.Second)
	r, err = a.Collect(ctx)
	if err != nil || len(r.GPUs) != 8 || r.Topology == nil || r.Topology.GPUs[6].Lost != "" || r.Topology.GPUs[6].NVLinks[0] == 0 {
		t.Errorf("GPU 6 reads again: %d GPUs, topology %+v, %v; want it sent again at once, GPU 6 linked", len(r.GPUs), r.Topology, err)
	}
}
