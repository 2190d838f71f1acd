//go:build faults

package faults_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/slurm/slurmtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// Three replicas of serve on one database, on the real Slurm cluster, under load with Slack
// redeliveries: every command goes to two replicas, as a Slack retry that reaches another
// replica would. Workspaces last a minute and over-quota requests time out after 20 s, so
// expiries and approval timeouts fall due while all three tick every second; at start all three
// post the showback weeks that are due. Each lease, expiry, timeout and weekly post happens once,
// whichever replica sees it, and each notice goes out once.
func TestThreeReplicasUnderLoadDoEachThingOnce(t *testing.T) {
	storetest.RequirePostgres(t)
	conf := slurmtest.Cluster(t)
	instance := newInstance(t, conf, "qmr")
	db := storetest.Postgres(t)
	const quota = 1
	// The weekly post falls due while the run goes on, 10-70 s after it starts.
	due := time.Now().UTC().Add(70 * time.Second).Truncate(time.Minute)
	schedule := strings.ToUpper(due.Weekday().String()[:3]) + " " + due.Format("15:04")
	policy, people := teamsPolicy(t, 4, quota, "slurm",
		"approvals: {timeout: 20s, self_approval: false}",
		"reports: {showback: {schedule: \""+schedule+"\", channel: \"#fault-showback\", dm_budget_owners: false}}")
	// Interactive workspaces idle for 20 s are warned, and reclaimed 10 s later.
	raw, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(strings.Replace(string(raw), "idle_timeout: 24h", "idle_timeout: 20s\n    idle_grace: 10s", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	users := requesters(people)
	api := newSlackAPI(t, people)
	sl := &slack{api: api}
	env := append(baseEnv(t, policy, db, api), "SLURM_CONF="+conf, "QM_SLURM_INSTANCE="+instance,
		"QM_RECONCILE_INTERVAL=1s", "QM_TICK_INTERVAL=1s", "QM_STORAGE_ROOT="+t.TempDir())
	var replicas []*server
	var urls []string
	for i := 0; i < 3; i++ {
		s := startServe(t, env, true)
		replicas = append(replicas, s)
		urls = append(urls, s.url)
		if i == 0 {
			// A lease of ten days ago, so that the weeks since are due for the showback.
			storetest.Query(t, db, `INSERT INTO leases (user_name, team, class, gpus, duration_ns, state, created_at, started_at, expires_at, ended_at)
				VALUES ('u00@fault.example', 't00', 'interactive', 1, 3600000000000, 'released', now() - interval '10 days',
				now() - interval '10 days', now() - interval '10 days' + interval '1 hour', now() - interval '10 days' + interval '1 hour')`)
		}
	}
	// The node's agent: the workspaces of odd-numbered leases sit idle, the others are busy.
	sinfo := exec.Command("sinfo", "-h", "-o", "%N")
	sinfo.Env = append(os.Environ(), "SLURM_CONF="+conf)
	nodeOut, err := sinfo.Output()
	if err != nil {
		t.Fatal(err)
	}
	agentCtx, stopAgent := context.WithCancel(context.Background())
	defer stopAgent()
	var idleMu sync.Mutex
	idle := map[string]bool{}
	go nodeAgent(agentCtx, t, db, strings.TrimSpace(string(nodeOut)), urls, func(lease string) bool {
		idleMu.Lock()
		defer idleMu.Unlock()
		return idle[lease]
	})
	load := &loadRun{sl: sl, targets: urls, users: users, redeliver: true, request: "request 1 interactive for 1m"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	load.run(ctx, t, 10)
	cancel()
	if missing := load.unanswered(30 * time.Second); len(missing) > 0 {
		t.Errorf("%d of %d commands never answered", len(missing), len(load.commands()))
	}
	// Then each team releases what it holds and asks for one workspace more, redelivered too:
	// those of t00 and t01 sit idle until they are reclaimed, those of t02 and t03 are busy until
	// they expire.
	for _, l := range liveLeases(t, db) {
		c := sl.command(l.user, "release "+l.id)
		_ = send(urls[0], c)
		_ = send(urls[1], c)
	}
	waitFor(30*time.Second, func() bool { return len(liveLeases(t, db)) == 0 })
	var last []command
	for i := 0; i < 4; i++ {
		c := sl.command(fmt.Sprintf("u%02d@fault.example", i), "request 1 interactive for 1m")
		_ = send(urls[i%3], c)
		_ = send(urls[(i+1)%3], c)
		last = append(last, c)
	}
	for i, c := range last {
		if !waitFor(30*time.Second, func() bool { _, ok := api.answer(c.n); return ok }) {
			t.Fatalf("the last request of u%02d was not answered", i)
		}
		m, _ := api.answer(c.n)
		if i < 2 {
			idleMu.Lock()
			idle[leaseRef.FindString(m.Text)] = true
			idleMu.Unlock()
		}
	}

	// Everything falls due: the last workspaces expire a minute after they start, and the week's
	// post goes out.
	if !waitFor(max(time.Until(due), 80*time.Second)+30*time.Second, func() bool {
		if len(storetest.Query(t, db, "SELECT week FROM showback_weeks WHERE posted_at IS NOT NULL")) == 0 {
			return false
		}
		for _, l := range leases(t, db) {
			if l.live() || l.state == "pending_approval" {
				return false
			}
		}
		return true
	}) {
		t.Errorf("leases still open or no showback posted well after they fell due: %v", openLeases(t, db))
	}
	if bad := settled(t, 30*time.Second, db, conf, instance, quota); len(bad) > 0 {
		t.Errorf("after the run:\n%s", strings.Join(bad, "\n"))
	}

	// Each lease ended once: one event into its end state.
	ends := map[string]int{}
	for _, r := range storetest.Query(t, db, `SELECT e.lease_id, e.to_state, count(*) FROM lease_events e JOIN leases l ON l.id = e.lease_id
		WHERE l.kind = '' AND e.to_state IN ('expired', 'denied', 'released', 'reclaimed', 'failed', 'cancelled') GROUP BY e.lease_id, e.to_state`) {
		ends[r[1]]++
		if r[2] != "1" {
			t.Errorf("L-%s became %s %s times", r[0], r[1], r[2])
		}
	}
	timedOut := len(storetest.Query(t, db, "SELECT id FROM leases WHERE state = 'denied' AND reason LIKE 'no decision within%'"))
	if ends["expired"] == 0 || ends["reclaimed"] == 0 || timedOut == 0 {
		t.Errorf("the run saw %d expiries, %d idle reclaims and %d approval timeouts; it should see each", ends["expired"], ends["reclaimed"], timedOut)
	}
	for _, r := range storetest.Query(t, db, "SELECT lease_id, count(*) FROM lease_events WHERE to_state = 'idle_warned' GROUP BY lease_id HAVING count(*) > 1") {
		t.Errorf("L-%s was warned as idle %s times", r[0], r[1])
	}

	// Each showback week posted once.
	weeks := storetest.Query(t, db, "SELECT week FROM showback_weeks WHERE posted_at IS NOT NULL ORDER BY week")
	weekRE := regexp.MustCompile(`\d{4}-W\d{2}`)
	posts := map[string]int{}
	for _, m := range api.messages() {
		if m.Kind == "post" && m.Channel == "#fault-showback" {
			posts[weekRE.FindString(m.Text)]++
		}
	}
	if len(weeks) == 0 {
		t.Errorf("no showback week was posted; the replicas said:\n%s", grepLog(replicas[0].log.String()+replicas[1].log.String()+replicas[2].log.String(), "showback", "week"))
	}
	for _, w := range weeks {
		if posts[w[0]] != 1 {
			t.Errorf("showback week %s was posted %d times", w[0], posts[w[0]])
		}
	}

	settle(t, db, api, 30*time.Second)
	notices, repeats := checkNotices(t, db, api)
	ls := leases(t, db)
	states := map[string]int{}
	for _, l := range ls {
		states[l.state]++
	}
	var ticked []string
	for i, s := range replicas {
		n := strings.Count(s.log.String(), "reconciled")
		ticked = append(ticked, "replica "+string(rune('A'+i))+": "+itoa(n)+" reconcile passes that changed something")
	}
	t.Logf("3 replicas, %d commands each sent to two of them: %d leases (%s), %d expiries, %d idle reclaims, %d approval timeouts, %d showback weeks posted once each; %d notices, each sent once, %d repeats; %s",
		len(load.commands()), len(ls), figures(states), ends["expired"], ends["reclaimed"], timedOut, len(weeks), notices, repeats, strings.Join(ticked, ", "))
	for _, s := range replicas {
		s.term(30 * time.Second)
	}
}

func openLeases(t *testing.T, db string) []string {
	var out []string
	for _, l := range leases(t, db) {
		if l.live() || l.state == "pending_approval" {
			out = append(out, l.id+" "+l.state)
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
