package slurm_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// controllerAway puts an sbatch on PATH that, while the returned switch is on, talks to a
// controller that is not there (the test cluster's slurm.conf on a port nothing listens on), as
// sbatch does while slurmctld restarts or fails over: the real sbatch, refused a connection,
// says "Unable to contact slurm controller (connect failure)". Off, it is the real sbatch.
func (e *env) controllerAway() (away func(bool)) {
	e.t.Helper()
	real, err := exec.LookPath("sbatch")
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf, err := os.ReadFile(e.conf)
	if err != nil {
		e.t.Fatal(err)
	}
	dir := e.t.TempDir()
	broken := filepath.Join(dir, "slurm.conf")
	text := regexp.MustCompile(`(?m)^SlurmctldPort=.*$`).ReplaceAllString(string(conf), "SlurmctldPort="+strconv.Itoa(port))
	if err := os.WriteFile(broken, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	flag := filepath.Join(dir, "away")
	script := "#!/bin/sh\nif [ -e '" + flag + "' ]; then SLURM_CONF='" + broken + "'; export SLURM_CONF; fi\nexec '" + real + "' \"$@\"\n"
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func(on bool) {
		if !on {
			_ = os.Remove(flag)
			return
		}
		if err := os.WriteFile(flag, nil, 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

// A lease whose job cannot be handed to Slurm because slurmctld does not answer (restarting,
// failing over) was not refused by the cluster: nothing was submitted. It waits in the service's
// queue, saying that the scheduler does not answer, rather than failing with "the cluster refused
// its job"; once slurmctld answers again it is submitted, once, and its owner told it runs.
func TestLeaseWaitsWhileSlurmctldDoesNotAnswer(t *testing.T) {
	e := newEnv(t)
	away := e.controllerAway()
	away(true)
	out := e.request("bob@acme.example", 1, "interactive", time.Hour, "", nil)
	l := out.Lease
	if l.State != qm.Queued {
		t.Fatalf("with slurmctld not answering, %s is %s (%s); want it queued until slurmctld answers", l.ID, l.State, l.Reason)
	}
	if strings.Contains(l.Reason, "refused") || !strings.Contains(l.Reason, "does not answer") {
		t.Errorf("%s waits because %q; want it to say that the scheduler does not answer, not that it refused the job", l.ID, l.Reason)
	}
	if l.Ref != "" || e.jobsOf(l.ID) != 0 {
		t.Fatalf("%s has job %q (%d in squeue) though sbatch never reached slurmctld", l.ID, l.Ref, e.jobsOf(l.ID))
	}
	if n := len(e.notes.Of(qm.NoticeFailed, l.ID)); n != 0 {
		t.Errorf("bob was told %d times that %s failed", n, l.ID)
	}
	// Until slurmctld is seen answering again, the ticks leave the lease waiting: it is not
	// handed to sbatch on every tick, each time "provisioning" (which Cancel refuses) for the
	// seconds sbatch takes to give up, its history growing by two lines a tick.
	for i := 0; i < 2; i++ {
		if err := e.svc.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := e.svc.History(context.Background(), l.ID)
	if err != nil {
		t.Fatal(err)
	}
	backs := 0
	for _, ev := range hist {
		if ev.From == qm.Provisioning && ev.To == qm.Queued {
			backs++
		}
	}
	if cur, _ := e.svc.Get(context.Background(), l.ID); cur.State != qm.Queued || backs != 1 {
		t.Errorf("after two ticks with slurmctld still away, %s is %s and went back to the queue %d times; want it queued, handed over once", l.ID, cur.State, backs)
	}
	away(false)
	got := e.waitLease(l.ID, qm.Active)
	if got.Ref == "" || e.jobsOf(l.ID) != 1 {
		t.Errorf("%s is active with job %q and %d jobs in squeue; want its one job", l.ID, got.Ref, e.jobsOf(l.ID))
	}
	hist, err = e.svc.History(context.Background(), l.ID)
	if err != nil {
		t.Fatal(err)
	}
	var again *qm.Event // the last hand-over, once slurmctld answered
	for _, ev := range hist {
		if ev.From == qm.Queued && ev.To == qm.Provisioning {
			again = ev
		}
	}
	if again == nil || !strings.Contains(again.Reason, "scheduler answers again") {
		t.Errorf("%s's history does not say it was handed over again because the scheduler answers again: %+v", l.ID, again)
	}
	if n := len(e.notes.Of(qm.NoticeGranted, l.ID)); n != 1 {
		t.Errorf("bob was told %d times that %s runs; want once, when slurmctld took it", n, l.ID)
	}
}
