//go:build faults

package faults_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/slurm/slurmtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// killRounds is how many times TestKillNineDuringProvisioningOnSlurm kills serve.
var killRounds = 20

// slowSbatch puts an sbatch in front of the real one that waits a random 0-0.4 s before
// submitting and 0-0.3 s after, and logs each call, so that kills land between writing a lease,
// submitting its job and recording it.
func slowSbatch(t *testing.T) (dir, log string) {
	real, err := exec.LookPath("sbatch")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	log = filepath.Join(dir, "sbatch.log")
	script := fmt.Sprintf(`#!/bin/sh
echo "start $$" >> %[1]s
sleep 0.$(shuf -i 0-4 -n 1)
out=$(%[2]s "$@")
rc=$?
echo "end $$ $out" >> %[1]s
sleep 0.$(shuf -i 0-3 -n 1)
echo "$out"
exit $rc
`, log, real)
	if err := os.WriteFile(filepath.Join(dir, "sbatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// killSetup is what a kill test runs serve with: the real Slurm test cluster under an instance of
// its own, a fresh PostgreSQL schema, teamsPolicy's four teams, the fake Slack, and sbatch
// slowed (slowSbatch) so that kills land while a workspace is provisioned.
type killSetup struct {
	conf, instance, db string
	api                *slackAPI
	sbatchLog          string
	env                []string
}

func newKillSetup(t *testing.T, prefix string, quota int) killSetup {
	storetest.RequirePostgres(t)
	k := killSetup{conf: slurmtest.Cluster(t)}
	k.instance = newInstance(t, k.conf, prefix)
	k.db = storetest.Postgres(t)
	policy, people := teamsPolicy(t, 4, quota, "slurm")
	k.api = newSlackAPI(t, people)
	wrap, log := slowSbatch(t)
	k.sbatchLog = log
	k.env = append(baseEnv(t, policy, k.db, k.api), "SLURM_CONF="+k.conf, "QM_SLURM_INSTANCE="+k.instance,
		"QM_RECONCILE_INTERVAL=1s", "QM_SUBMIT_GRACE=3s", "QM_STORAGE_ROOT="+t.TempDir(),
		"PATH="+wrap+":"+os.Getenv("PATH"))
	return k
}

// inFlightSbatch counts sbatch calls logged as started and not ended.
func inFlightSbatch(log string) int {
	b, _ := os.ReadFile(log)
	open := map[string]bool{}
	scanLines(string(b), func(l string) {
		f := strings.Fields(l)
		if len(f) < 2 {
			return
		}
		if f[0] == "start" {
			open[f[1]] = true
		} else {
			delete(open, f[1])
		}
	})
	return len(open)
}

// kill -9 of serve at random points of provisioning, 20 times, on the real Slurm test cluster,
// each time restarted at once. Each round asks for workspaces and releases one, then kills the
// process after a random 0-1.2 s. The commands that got no answer are not sent again (Slack does
// not send an acknowledged command again): after each restart every one of them must be
// answered, and the test waits for the service to recover by itself: no orphan job, no lease
// without a job, no lost granted lease, no duplicate lease, no quota breach; at the end no lost
// notice.
func TestKillNineDuringProvisioningOnSlurm(t *testing.T) {
	const quota = 2
	k := newKillSetup(t, "qmk", quota)
	conf, instance, db, api, sbatchLog, env := k.conf, k.instance, k.db, k.api, k.sbatchLog, k.env
	sl := &slack{api: api}

	where := map[string]int{}
	recovered := map[string]int{}
	var unanswered []command
	requests := map[int]bool{} // response URL numbers of the request commands
	s := startServe(t, env, true)
	all := []*server{s}
	for round := 0; round < killRounds; round++ {
		var pending []command
		for i := 0; i < 2; i++ {
			u := fmt.Sprintf("u%02d@fault.example", mrand.IntN(4))
			c := sl.command(u, fmt.Sprintf("request 1 %s for 1h", []string{"interactive", "train"}[mrand.IntN(2)]))
			if err := send(s.url, c); err != nil {
				t.Fatal(err)
			}
			pending = append(pending, c)
			requests[c.n] = true
		}
		if live := liveLeases(t, db); len(live) > 0 {
			l := live[mrand.IntN(len(live))]
			c := sl.command(l.user, "release "+l.id)
			if err := send(s.url, c); err != nil {
				t.Fatal(err)
			}
			pending = append(pending, c)
		}
		time.Sleep(time.Duration(mrand.IntN(1200)) * time.Millisecond)
		inSbatch := inFlightSbatch(sbatchLog)
		s.kill()

		// Where the kill landed.
		before := leases(t, db)
		jobs := squeue(t, conf, instance)
		unanswered = nil
		for _, c := range pending {
			if _, ok := api.answer(c.n); !ok {
				unanswered = append(unanswered, c)
			}
		}
		switch {
		case inSbatch > 0:
			where["while sbatch ran"]++
		case provisioningWithoutJob(before, jobs) > 0:
			where["after a lease was written, before its job was submitted"]++
		case unrecorded(before, jobs) > 0:
			where["after a job was submitted, before the lease recorded it"]++
		case len(unanswered) > 0:
			where["before a command was answered"]++
		default:
			where["between commands"]++
		}
		recovered["leases without a job at the kill"] += provisioningWithoutJob(before, jobs)
		recovered["jobs not yet recorded at the kill"] += unrecorded(before, jobs)

		s = startServe(t, env, true)
		all = append(all, s)
		// Commands the killed process acknowledged and never answered are not sent again: the
		// restarted process finds them in the inbox and runs them.
		if left := awaitAnswers(api, unanswered, 30*time.Second); len(left) > 0 {
			t.Fatalf("round %d: %d of %d commands acknowledged before the kill were not answered after the restart\n%s", round, len(left), len(unanswered), tail(s.log.String(), 40))
		}
		recovered["commands acknowledged before a kill and answered after it, not sent again"] += len(unanswered)
		if bad := settled(t, 30*time.Second, db, conf, instance, quota); len(bad) > 0 {
			t.Fatalf("round %d: after the restart the service did not recover:\n%s\n%s", round, strings.Join(bad, "\n"), tail(s.log.String(), 40))
		}
	}
	if bad := settled(t, 30*time.Second, db, conf, instance, quota); len(bad) > 0 {
		t.Fatalf("after the last restart:\n%s", strings.Join(bad, "\n"))
	}
	// Every lease a requester was told of exists.
	known := map[string]bool{}
	for _, l := range leases(t, db) {
		known[l.id] = true
	}
	for _, m := range api.messages() {
		if n, _ := strconv.Atoi(m.Channel); m.Kind == "answer" && requests[n] {
			if id := leaseRef.FindString(m.Text); id != "" && !known[id] {
				t.Errorf("lost granted lease: a requester was told of %s, which the database does not hold: %q", id, m.Text)
			}
		}
	}
	settle(t, db, api, 30*time.Second)
	notices, repeats := checkNotices(t, db, api)
	ls := leases(t, db)
	states := map[string]int{}
	for _, l := range ls {
		states[l.state]++
	}
	t.Logf("%d kill -9 runs; killed: %s", killRounds, figures(where))
	t.Logf("recovered: %s", figures(recovered))
	did := map[string]int{}
	reportRE := regexp.MustCompile(`(\d+) (adopted|cancelled|resubmitted|vanished)`)
	tookRE := regexp.MustCompile(`took back the notices.* notices=(\d+)`)
	for _, p := range all {
		scanLines(p.log.String(), func(l string) {
			if strings.Contains(l, "msg=reconciled") {
				for _, m := range reportRE.FindAllStringSubmatch(l, -1) {
					n, _ := strconv.Atoi(m[1])
					did[map[string]string{"adopted": "jobs adopted by their lease", "cancelled": "orphan jobs cancelled",
						"resubmitted": "jobs submitted again", "vanished": "leases failed for a vanished job"}[m[2]]] += n
				}
			}
			if m := tookRE.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[1])
				did["notices taken back from a killed sender"] += n
			}
		})
	}
	t.Logf("the restarted processes: %s", figures(did))
	t.Logf("%d leases (%s); %d notices, all sent once, %d sent again after a kill", len(ls), figures(states), notices, repeats)
	s.term(30 * time.Second)
}

func liveLeases(t *testing.T, db string) []lease {
	var out []lease
	for _, l := range leases(t, db) {
		if l.live() {
			out = append(out, l)
		}
	}
	return out
}

func provisioningWithoutJob(ls []lease, jobs map[string][]job) int {
	n := 0
	for _, l := range ls {
		if l.state == "provisioning" && l.ref == "" && len(jobs[l.id]) == 0 {
			n++
		}
	}
	return n
}

func unrecorded(ls []lease, jobs map[string][]job) int {
	n := 0
	for _, l := range ls {
		if l.live() && l.ref == "" && len(jobs[l.id]) > 0 {
			n++
		}
	}
	return n
}

// newInstance names a Slurm instance of the test's own (prefix and eight random hex digits), whose
// jobs are cancelled when the test ends.
func newInstance(t *testing.T, conf, prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	instance := prefix + hex.EncodeToString(b)
	t.Cleanup(func() { cancelInstance(conf, instance) })
	return instance
}

// cancelInstance cancels every job whose comment names instance.
func cancelInstance(conf, instance string) {
	cmd := exec.Command("squeue", "-h", "-o", "%i|%k")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, _ := cmd.Output()
	scanLines(string(out), func(line string) {
		f := strings.SplitN(line, "|", 2)
		if len(f) == 2 && strings.HasPrefix(f[1], instance+":") {
			c := exec.Command("scancel", f[0])
			c.Env = cmd.Env
			_ = c.Run()
		}
	})
}

// figures prints counts as "k: n, …", largest first.
func figures(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// grepLog keeps the log lines that contain any of words.
func grepLog(log string, words ...string) string {
	var out []string
	scanLines(log, func(l string) {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				return
			}
		}
	})
	return strings.Join(out, "\n")
}

// awaitAnswers waits up to d for an answer to every command and returns those still unanswered.
func awaitAnswers(api *slackAPI, cmds []command, d time.Duration) []command {
	deadline := time.Now().Add(d)
	for {
		var left []command
		for _, c := range cmds {
			if _, ok := api.answer(c.n); !ok {
				left = append(left, c)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}
