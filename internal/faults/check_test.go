//go:build faults

package faults_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// job is one of this service's jobs in squeue.
type job struct{ id, lease, state string }

// squeue lists the jobs of instance that have not ended, by lease ("L-n").
func squeue(t *testing.T, conf, instance string) map[string][]job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "squeue", "-h", "-o", "%i|%k|%T")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("squeue: %v\n%s", err, out)
	}
	jobs := map[string][]job{}
	scanLines(string(out), func(line string) {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 || !strings.HasPrefix(f[1], instance+":") {
			return
		}
		switch f[2] {
		case "COMPLETING", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT":
			return
		}
		l := strings.TrimPrefix(f[1], instance+":")
		jobs[l] = append(jobs[l], job{id: f[0], lease: l, state: f[2]})
	})
	return jobs
}

// lease is a lease as the database holds it.
type lease struct {
	id, user, team, class, state, ref, reason, key string
	gpus                                           int
}

func (l lease) live() bool {
	switch l.state {
	case "queued", "provisioning", "active", "idle_warned":
		return true
	}
	return false
}

func leases(t *testing.T, db string) []lease {
	var out []lease
	for _, r := range storetest.Query(t, db, "SELECT id, user_name, team, class, state, ref, reason, COALESCE(request_key, ''), gpus FROM leases WHERE kind = '' ORDER BY id") {
		n, _ := strconv.Atoi(r[8])
		out = append(out, lease{id: "L-" + r[0], user: r[1], team: r[2], class: r[3], state: r[4], ref: r[5], reason: r[6], key: r[7], gpus: n})
	}
	return out
}

// invariants lists what is wrong between the database and Slurm (conf empty: no Slurm): orphan
// jobs, leases without a job, duplicate leases, quota breaches. quota is each team's GPUs per
// class.
func invariants(t *testing.T, db, conf, instance string, quota int) []string {
	var bad []string
	ls := leases(t, db)
	var jobs map[string][]job
	if conf != "" {
		jobs = squeue(t, conf, instance)
	}
	byID := map[string]lease{}
	keys := map[string]int{}
	held := map[string]int{}
	for _, l := range ls {
		byID[l.id] = l
		if l.key != "" {
			keys[l.key]++
		}
		if l.live() {
			held[l.team+"/"+l.class] += l.gpus
		}
		if conf == "" {
			continue
		}
		js := jobs[l.id]
		switch {
		case !l.live() && len(js) > 0:
			bad = append(bad, fmt.Sprintf("orphan job: %s is %s but its job %s still runs", l.id, l.state, js[0].id))
		case l.live() && len(js) > 1:
			bad = append(bad, fmt.Sprintf("orphan job: %s has %d jobs", l.id, len(js)))
		case l.live() && len(js) == 0 && (l.state != "queued" || l.ref != ""):
			bad = append(bad, fmt.Sprintf("lease without a job: %s is %s (job %q) but Slurm has no job for it", l.id, l.state, l.ref))
		case l.live() && l.ref != "" && js[0].id != l.ref:
			bad = append(bad, fmt.Sprintf("%s records job %s but Slurm runs %s for it", l.id, l.ref, js[0].id))
		}
		if strings.Contains(l.reason, "never reached the scheduler") || strings.Contains(l.reason, "gone from the scheduler") {
			bad = append(bad, fmt.Sprintf("lost granted lease: %s %s: %s", l.id, l.state, l.reason))
		}
	}
	for id := range jobs {
		if _, ok := byID[id]; !ok {
			bad = append(bad, fmt.Sprintf("orphan job: %s runs for %s, which the database does not know", jobs[id][0].id, id))
		}
	}
	for k, n := range keys {
		if n > 1 {
			bad = append(bad, fmt.Sprintf("duplicate lease: %d leases for the one command %s", n, k))
		}
	}
	for k, n := range held {
		if n > quota {
			bad = append(bad, fmt.Sprintf("quota breach: %s holds %d GPUs, quota %d", k, n, quota))
		}
	}
	sort.Strings(bad)
	return bad
}

// settled waits until the invariants hold (the service recovers by itself) and returns what is
// still wrong after d.
func settled(t *testing.T, d time.Duration, db, conf, instance string, quota int) []string {
	var bad []string
	waitFor(d, func() bool {
		bad = invariants(t, db, conf, instance, quota)
		return len(bad) == 0
	})
	return bad
}

// scanLines calls fn for each line of s.
func scanLines(s string, fn func(string)) {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
}

// requesters are the people of teamsPolicy who ask for workspaces (u…), without the budget owners.
func requesters(people []string) []string {
	var out []string
	for _, p := range people {
		if strings.HasPrefix(p, "u") {
			out = append(out, p)
		}
	}
	return out
}
