package templates_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/slurm/slurmtest"

	"github.com/acme/quartermaster/internal/templates"
)

// slurmCluster is the test cluster, held by this test alone until it ends.
func slurmCluster(t *testing.T) (conf string) {
	t.Helper()
	return slurmtest.Cluster(t)
}

// TestSlurmTestOnly submits every rendering of the golden cases (each template's example and the
// variants) with sbatch --test-only: Slurm parses the #SBATCH lines and checks partition, GRES,
// CPUs, memory and time against the cluster without starting anything. The test cluster has one
// node, so multi-node cases run on one node here (their multi-node form is covered by the golden
// files and TestScriptsParse).
func TestSlurmTestOnly(t *testing.T) {
	conf := slurmCluster(t)
	dir := t.TempDir()
	for _, rc := range cases(t) {
		in := rc.in
		if in.Nodes > 1 || in.Params["nnodes"] != "" {
			nodes := max(in.Nodes, 1)
			if n, err := strconv.Atoi(in.Params["nnodes"]); err == nil {
				nodes = max(nodes, n)
			}
			params := templates.Params{}
			for k, v := range in.Params {
				if k != "nnodes" {
					params[k] = v
				}
			}
			in.Params, in.Nodes, in.GPUs = params, 0, in.GPUs/nodes
		}
		in.Slurm.NodeList = "" // names nodes of a real cluster
		out, err := rc.tmpl.Render(in)
		if err != nil {
			t.Fatalf("%s: %v", rc.name, err)
		}
		script := filepath.Join(dir, rc.name+".sh")
		if err := os.WriteFile(script, []byte(out.SlurmScript), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, "sbatch", "--test-only", script)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		msg, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: sbatch --test-only: %v\n%s\n--- script ---\n%s", rc.name, err, msg, out.SlurmScript)
			continue
		}
		if !strings.Contains(string(msg), "in partition "+in.Slurm.Partition) {
			t.Errorf("%s: sbatch --test-only: %s", rc.name, msg)
		}
	}
}

// submit renders tp for a lease whose storage is a temporary directory, puts fake tools first on
// PATH, and submits it to the test cluster. It returns the job id and the job directory.
func submit(t *testing.T, conf string, tp *templates.Template, params templates.Params, tools map[string]string) (jobID, jobDir string) {
	t.Helper()
	storage := t.TempDir()
	bin := filepath.Join(storage, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range tools {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in := templates.ExampleInput(tp, "", params)
	in.Lease = "T-" + strconvItoa(os.Getpid()) + "-" + tp.Name
	in.Storage.Path = storage
	out, err := tp.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	// sbatch does not create the output directory: the service makes it before submitting.
	if err := os.MkdirAll(out.JobDir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(storage, "job.sh")
	if err := os.WriteFile(script, []byte(out.SlurmScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sbatch", "--parsable", script)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf, "PATH="+bin+":"+os.Getenv("PATH"))
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s", err, msg)
	}
	jobID = strings.TrimSpace(strings.Split(string(msg), ";")[0])
	t.Cleanup(func() { slurmCmd(t, conf, "scancel", jobID) })
	return jobID, out.JobDir
}

func slurmCmd(t *testing.T, conf string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// waitFor polls until cond holds, or fails after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readAll(dir, glob string) string {
	files, _ := filepath.Glob(filepath.Join(dir, glob))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

// TestSlurmCheckpointRequeue runs checkpoint-training on the test cluster with a stand-in for
// torchrun: USR1 to the batch shell (what --signal=B:USR1@lead sends before the time limit) must
// raise the checkpoint flag, let the workload finish its checkpoint, and requeue the job, which
// then starts again with SLURM_RESTART_COUNT=1.
func TestSlurmCheckpointRequeue(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job on the test cluster")
	}
	conf := slurmCluster(t)
	tp, _ := catalog(t).Get("checkpoint-training")
	fakeTorchrun := `echo "start restart=${SLURM_RESTART_COUNT:-0} rank=$QM_NODE_RANK gpus=$QM_GPUS_PER_NODE"
while [ ! -e "$QM_CHECKPOINT_FLAG" ]; do sleep 0.2; done
echo "checkpoint saved to $QM_CHECKPOINT_DIR"
`
	id, dir := submit(t, conf, tp, templates.Params{"checkpoint_lead": "2m", "max_requeues": "1"}, map[string]string{"torchrun": fakeTorchrun})
	log := func() string { return readAll(dir, "*.out") }
	waitFor(t, 30*time.Second, "the job to start", func() bool { return strings.Contains(log(), "start restart=0") })
	signalled := time.Now()
	if out := slurmCmd(t, conf, "scancel", "--signal=USR1", "--batch", id); out != "" {
		t.Fatalf("scancel --signal: %s", out)
	}
	waitFor(t, 30*time.Second, "the job to requeue", func() bool { return strings.Contains(log(), "requeueing") })
	// Slurm holds a requeued job back for about two minutes; start it now. On a busy machine the
	// node may take a while to finish with the first run (COMPLETING) before the job can start.
	// Slurm sets that begin time only once the first run has ended (a begin time set before is
	// overwritten), and slurmd refuses to run a job whose credential is dated the second the first
	// run's was revoked ("Job credential revoked": the job fails), so the job starts a second after
	// its begin time moved past the requeue.
	var state string
	var requeueDone bool
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(log(), "start restart=1") {
		state = slurmCmd(t, conf, "squeue", "-h", "-j", id, "-o", "%T %r")
		if strings.Contains(state, "Held") || strings.Contains(state, "REQUEUE_HOLD") {
			slurmCmd(t, conf, "scontrol", "release", id)
		}
		if !requeueDone && strings.Contains(state, "PENDING") {
			eligible, err := time.ParseInLocation("2006-01-02T15:04:05", strings.TrimSpace(slurmCmd(t, conf, "squeue", "-h", "-j", id, "-O", "EligibleTime")), time.Local)
			if requeueDone = err == nil && eligible.After(signalled); requeueDone {
				time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
			}
		}
		if requeueDone && strings.Contains(state, "PENDING") {
			slurmCmd(t, conf, "scontrol", "update", "JobId="+id, "StartTime=now")
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 90s waiting for the requeued job to start again (squeue: %q; nodes: %q)", state,
				slurmCmd(t, conf, "sinfo", "-h", "-N", "-o", "%N %T"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	got := log()
	for _, want := range []string{"asking for a checkpoint", "checkpoint saved to", "requeueing (restart 1 of 1)"} {
		if !strings.Contains(got, want) {
			t.Errorf("job log lacks %q:\n%s", want, got)
		}
	}
}

// TestSlurmSweepArray runs hparam-sweep on the test cluster with a stand-in for python3: every
// array task runs once with its own index.
func TestSlurmSweepArray(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job on the test cluster")
	}
	conf := slurmCluster(t)
	tp, _ := catalog(t).Get("hparam-sweep")
	fakePython := `echo "trial $QM_TASK_INDEX of $QM_TASK_COUNT: $*"; touch "$QM_JOB_DIR/done-$QM_TASK_INDEX"`
	_, dir := submit(t, conf, tp, templates.Params{"trials": "5"}, map[string]string{"python3": fakePython})
	// A trial runs in a job step (srun), whose output srun relays to the task's .out file: it can
	// land there a moment after the trial's done file, so the wait is for both.
	ran := func(out string) int {
		n := 0
		for i := 0; i < 5; i++ {
			if strings.Contains(out, "trial "+strconvItoa(i)+" of 5: ") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if files, _ := filepath.Glob(filepath.Join(dir, "done-*")); len(files) == 5 && ran(readAll(dir, "*.out")) == 5 {
			break
		}
	}
	got := readAll(dir, "*.out")
	for i := 0; i < 5; i++ {
		if !strings.Contains(got, "trial "+strconvItoa(i)+" of 5: ") {
			t.Errorf("trial %d did not run:\n%s", i, got)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "done-*")); len(files) != 5 {
		t.Errorf("%d trials finished (their done files); want 5", len(files))
	}
}

func strconvItoa(n int) string { return strconv.Itoa(n) }
