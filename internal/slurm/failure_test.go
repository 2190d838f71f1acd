package slurm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// TestFailedAtOnceSaysWhy: a workspace whose server is missing fails at once on the real cluster;
// its job is reported with Slurm's state and reason, exit code 127, its times and the last lines
// of its output file, and the lease fails with that reason within a reconcile pass or two.
func TestFailedAtOnceSaysWhy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "broken", nil).Lease
	l = e.waitLease(l.ID, qm.Failed)
	if !strings.Contains(l.Reason, "exit code 127 (Slurm: FAILED, NonZeroExitCode)") {
		t.Errorf("%s failed for %q; want Slurm's state, reason and the exit code", l.ID, l.Reason)
	}
	if n := e.notes.Of(qm.NoticeFailed, l.ID); len(n) != 1 {
		t.Errorf("owner told %d times", len(n))
	}
	jobs, err := e.backend.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var j qm.Job
	for _, x := range jobs {
		if x.Ref == l.Ref {
			j = x
		}
	}
	if j.State != qm.JobFailed || j.ExitCode != "127" || j.Node != e.nodeName() {
		t.Errorf("job %+v; want failed with exit code 127 on %s", j, e.nodeName())
	}
	if j.StartedAt.Before(before.Truncate(time.Second)) || j.EndedAt.Before(j.StartedAt) || j.EndedAt.After(time.Now()) {
		t.Errorf("job dated %s to %s; want within this test (%s to now)", j.StartedAt, j.EndedAt, before)
	}
	t.Logf("job %s: %s; exit code %s; %s to %s; output:\n%s", j.Ref, j.Reason, j.ExitCode, j.StartedAt, j.EndedAt, j.Output)
	if !strings.Contains(j.Output, "starting the workspace on port") || !strings.Contains(j.Output, "/opt/qm-missing/sshd: No such file or directory") {
		t.Errorf("output %q; want the job's last lines", j.Output)
	}
}

// TestOutputReadOnlyFromTheLeaseDirectory: the output of a failed job is read only from its own
// lease's job directory, and only from a regular file.
func TestOutputReadOnlyFromTheLeaseDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".quartermaster", "L-2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	if err := os.WriteFile(filepath.Join(dir, "qm-l-2-nap-311.out"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(secret, []byte("not for the job's owner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.out")); err != nil {
		t.Fatal(err)
	}
	job := func(id int, lease, out string) string {
		return fmt.Sprintf(`{"job_id": %d, "name": "qm-l-2-nap", "comment": "qm:%s", "job_state": "FAILED", "state_reason": "NonZeroExitCode",
			"exit_code": 256, "nodes": "vm", "user_name": "root", "standard_output": %q}`, id, lease, out)
	}
	data := `{"jobs": [` + strings.Join([]string{
		job(311, "L-2", dir+"/%x-%j.out"),    // its own: read
		job(312, "L-3", dir+"/%x-311.out"),   // another lease's directory: not read
		job(313, "L-2", secret),              // outside the job directory: not read
		job(314, "L-2", dir+"/link.out"),     // a link out of it: not read
		job(315, "L-2", dir+"/../L-2/x.out"), // not a clean path: not read
		job(316, "L-2", dir+"/%Z.out"),       // a pattern this backend does not fill
	}, ",") + `], "errors": []}`
	b := stubBackend(t, &stub{reply: func(string, []string) (string, error) { return data, nil }})
	jobs, err := b.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(lines[20:], "\n")
	for _, j := range jobs {
		got := j.Output
		if j.Ref == "311" && got != want {
			t.Errorf("job 311: output %q, want its last 10 lines", got)
		}
		if j.Ref != "311" && got != "" {
			t.Errorf("job %s: output %q read from outside its own lease's directory", j.Ref, got)
		}
	}
}

// TestSSHWorkspaceRuns: the default workspace, the real ssh-shell template, runs on the test
// cluster: its lease becomes active and an SSH server answers on the port the reply names, for
// the account the job runs as.
func TestSSHWorkspaceRuns(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		msg := "the test cluster's node has no /usr/sbin/sshd; `make slurm-up` installs openssh-server"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	e := newEnv(t)
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	backend, err := slurm.New(slurm.Config{Policy: e.svc.Policy, Catalog: cat, Instance: e.inst,
		Workload: workload.Settings{}, Env: []string{"SLURM_CONF=" + e.conf}})
	if err != nil {
		t.Fatal(err)
	}
	e.backend, e.svc.Backend = backend, backend
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	var port int
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(l.Connect, "ssh -p %d "+me.Username+"@", &port); err != nil || !strings.HasSuffix(l.Connect, "@"+e.nodeName()) {
		t.Fatalf("connect %q; want ssh -p PORT %s@%s (the job runs as the account that submits it)", l.Connect, me.Username, e.nodeName())
	}
	var banner string
	e.eventually("an SSH server on port "+fmt.Sprint(port), func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return false
		}
		banner = string(buf[:n])
		return strings.HasPrefix(banner, "SSH-2.0-")
	})
	if j := e.job(l.Ref); j.State != "RUNNING" {
		t.Errorf("job %s is %s", l.Ref, j.State)
	}
}

// TestSSHWorkspaceLogsIn: the address the reply gives for the default workspace logs in. Slurm
// runs the job, and so its SSH server, as the account that submitted it (here the service's
// own), and an SSH server that is not root logs in only the account it runs as: the reply names
// that account, and a key in the team's keys file logs in with it and runs a command.
func TestSSHWorkspaceLogsIn(t *testing.T) {
	e, key := sshEnv(t)
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	if out := sshRun(e, l, key, "echo logged-in"); !strings.Contains(out, "logged-in") {
		t.Fatalf("%s: %s does not log in: %s", l.ID, l.Connect, out)
	}
}

// TestSSHWorkspaceCopiesFiles: scp copies files out of an SSH workspace, over SFTP (scp's
// default since OpenSSH 9) and over the older scp protocol (scp -O), which runs a command.
func TestSSHWorkspaceCopiesFiles(t *testing.T) {
	e, key := sshEnv(t)
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	sshRun(e, l, key, "true") // the server is up
	team, _ := e.svc.Policy.Team("vision")
	src := filepath.Join(team.Storage.Path, "results.txt")
	if err := os.WriteFile(src, []byte("accuracy 0.91\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var port int
	var login string
	if _, err := fmt.Sscanf(l.Connect, "ssh -p %d %s", &port, &login); err != nil {
		t.Fatalf("connect %q; want ssh -p PORT USER@NODE", l.Connect)
	}
	for _, mode := range [][]string{{}, {"-O"}} {
		dst := filepath.Join(t.TempDir(), "copy.txt")
		args := append(append([]string{}, mode...), "-i", key, "-P", fmt.Sprint(port), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
			"-o", "UserKnownHostsFile=/dev/null", login+":"+src, dst)
		out, err := exec.Command("scp", args...).CombinedOutput()
		got, _ := os.ReadFile(dst)
		if err != nil || string(got) != "accuracy 0.91\n" {
			t.Errorf("%s: scp %s from %s: %v, copied %q\n%s", l.ID, strings.Join(mode, " "), l.Connect, err, got, out)
		}
	}
}

// TestSSHSessionSeesJobGPUs: a session in an SSH workspace sees the GPUs of its job, as the job
// itself does: CUDA_VISIBLE_DEVICES (and its AMD and Intel siblings) lists the GPUs Slurm gave
// the job, not nothing, which would let a program use every GPU of the node.
func TestSSHSessionSeesJobGPUs(t *testing.T) {
	e, key := sshEnv(t)
	if fi, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(e.conf)), "dev", "nvidia0")); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skip("the test cluster's GPUs are plain files, for which Slurm sets no CUDA_VISIBLE_DEVICES; slurm-up.sh makes them devices where the host allows mknod")
	}
	l := e.request("alice@acme.example", 2, "train", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	m := regexp.MustCompile(`GRES=gpu:[^(\s]*\(IDX:([0-9,-]+)\)`).FindStringSubmatch(e.slurmCmd("scontrol", "show", "job", "-d", l.Ref))
	if m == nil {
		t.Fatalf("scontrol show job -d %s names no GPU indexes", l.Ref)
	}
	want := strings.Join(expandIndexes(t, m[1]), ",")
	out := sshRun(e, l, key, `echo "CVD=${CUDA_VISIBLE_DEVICES:-unset} GDO=${GPU_DEVICE_ORDINAL:-unset}"`)
	if !strings.Contains(out, "CVD="+want+" GDO="+want) {
		t.Errorf("%s: an SSH session into job %s (GPUs %s) sees %q; want CUDA_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL %s", l.ID, l.Ref, m[1], strings.TrimSpace(out), want)
	}
}

// TestSSHSessionSeesJobVariables: a session in an SSH workspace has the job's own variables, as
// a program the job starts does: its QM_* variables (QM_DATA, QM_JOB_DIR, QM_USER, …), exactly,
// whatever characters they hold, and SLURM_JOB_ID, so srun, scontrol show job and squeue -j work
// from the session on the job it runs in.
func TestSSHSessionSeesJobVariables(t *testing.T) {
	// Slurm hands the job the environment it was submitted with: a variable the job has with a
	// space, quotes, a dollar and a backslash in it; and an owner whose address holds quotes.
	odd := `two words "double" 'single' $HOME \back`
	e, key := sshEnv(t, "QM_SITE_NOTE="+odd)
	user := `o'brien+$home` + "`id`" + `@acme.example`
	e.svc.Policy.Directory = append(e.svc.Policy.Directory, &policy.Identity{User: user, Groups: []string{"ai-vision"}})
	l := e.request(user, 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	team, _ := e.svc.Policy.Team("vision")
	want := map[string]string{
		"QM_DATA":      team.Storage.Path,
		"QM_JOB_DIR":   filepath.Join(team.Storage.Path, ".quartermaster", l.ID.String()),
		"QM_LEASE":     l.ID.String(),
		"QM_USER":      user,
		"QM_SITE_NOTE": odd,
		"SLURM_JOB_ID": l.Ref,
	}
	// Each variable's value between markers, on a line of its own, so nothing is trimmed or split.
	var cmd strings.Builder
	for k := range want {
		fmt.Fprintf(&cmd, `printf '%%s=<%%s>\n' %s "${%s-(unset)}"; `, k, k)
	}
	// sshRun tries again until the command succeeds: squeue's error is printed, not returned.
	cmd.WriteString(`squeue -h -j "$SLURM_JOB_ID" -o 'squeue=<%i %T>' 2>&1; true`)
	out := sshRun(e, l, key, cmd.String())
	var wrong []string
	for k, v := range want {
		if !strings.Contains(out, k+"=<"+v+">\n") {
			wrong = append(wrong, fmt.Sprintf("%s (want %q)", k, v))
		}
	}
	if !strings.Contains(out, "squeue=<"+l.Ref+" RUNNING>") {
		wrong = append(wrong, fmt.Sprintf("squeue -j \"$SLURM_JOB_ID\" (want job %s RUNNING)", l.Ref))
	}
	if len(wrong) > 0 {
		sort.Strings(wrong)
		t.Errorf("%s: an SSH session into job %s has the job's variables wrong: %s; the session printed:\n%s", l.ID, l.Ref, strings.Join(wrong, ", "), out)
	}
}

// expandIndexes writes Slurm's "2-3,6" as 2, 3, 6.
func expandIndexes(t *testing.T, s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		var a, b int
		if _, err := fmt.Sscan(lo, &a); err != nil {
			t.Fatalf("GPU indexes %q: %v", s, err)
		}
		if _, err := fmt.Sscan(hi, &b); err != nil {
			t.Fatalf("GPU indexes %q: %v", s, err)
		}
		for i := a; i <= b; i++ {
			out = append(out, fmt.Sprint(i))
		}
	}
	return out
}

// sshEnv is a test environment whose workspaces are the catalog's real ssh-shell, and a key that
// the team's keys file lets in. It skips where the node has no SSH server.
func sshEnv(t *testing.T, jobEnv ...string) (*env, string) {
	for _, bin := range []string{"/usr/sbin/sshd", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(bin); err != nil {
			msg := "the test cluster's node has no " + bin + "; `make slurm-up` installs openssh-server"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	e := newEnv(t)
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	backend, err := slurm.New(slurm.Config{Policy: e.svc.Policy, Catalog: cat, Instance: e.inst,
		Workload: workload.Settings{}, Env: append([]string{"SLURM_CONF=" + e.conf}, jobEnv...)})
	if err != nil {
		t.Fatal(err)
	}
	e.backend, e.svc.Backend = backend, backend
	team, _ := e.svc.Policy.Team("vision")
	key := filepath.Join(t.TempDir(), "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(team.Storage.Path, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(team.Storage.Path, ".ssh", "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	return e, key
}

// sshRun logs in to the lease's workspace at the address its reply gave, with key, and runs
// command there; it returns what the session printed.
func sshRun(e *env, l *qm.Lease, key, command string) string {
	e.t.Helper()
	var port int
	var login string
	if _, err := fmt.Sscanf(l.Connect, "ssh -p %d %s", &port, &login); err != nil {
		e.t.Fatalf("connect %q; want ssh -p PORT USER@NODE", l.Connect)
	}
	var out []byte
	var err error
	end := time.Now().Add(deadline)
	for {
		cmd := exec.Command("ssh", "-i", key, "-p", fmt.Sprint(port), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
			"-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=5", login, command)
		out, err = cmd.CombinedOutput()
		if err == nil || strings.Contains(string(out), "Permission denied") {
			return string(out)
		}
		if time.Now().After(end) {
			// What the last try said, and what Slurm says of the job, tell a session that never
			// came up from one that reached something else on the port.
			e.t.Fatalf("gave up waiting for ssh %s to log in on port %d: %v\n%s\nscontrol show job %s:\n%s",
				login, port, err, out, l.Ref, e.slurmCmd("scontrol", "show", "job", l.Ref))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
