package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A DM to the app is answered whichever mode serve runs Discord in (HTTP interactions here, which
// Discord sends no messages to, so the gateway is opened for them): a /gpu command written as
// text runs for its sender (a lease is made and its answer comes back in the DM), and any other
// text is told in one sentence how to ask, with an example of this installation that works when
// sent back.
func TestServeAnswersDirectMessagesToTheApp(t *testing.T) {
	t.Parallel()
	glen := filepath.Join(t.TempDir(), "glen.yaml")
	if err := os.WriteFile(glen, []byte(glenPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	marsh := filepath.Join(t.TempDir(), "marsh.yaml")
	if err := os.WriteFile(marsh, []byte(marshPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	// The example policy, one with none of its names, and one whose first class the sender's
	// team has no quota in.
	for name, policy := range map[string]string{"example": "", "glen": glen, "marsh": marsh} {
		t.Run(name, func(t *testing.T) { answersDirectMessages(t, policy) })
	}
}

func answersDirectMessages(t *testing.T, policy string) {
	f := discordtest.New(t)
	signer := discordtest.NewSigner()
	o := serveOptions{discord: discordSettings{BotToken: discordtest.Token, PublicKey: signer.PublicKey(), AppID: discordtest.App, APIURL: f.URL}}
	o.app.flags.policy = policy
	s := startServe(t, o)
	dm := discordtest.DMChannel(dAlice)
	answer := func(text string, n int) string {
		t.Helper()
		delivered := make(chan int, 1)
		go func() { delivered <- f.DeliverMessage(discordtest.DM{User: dAlice, Content: text}) }() // waits for a gateway client
		select {
		case got := <-delivered:
			if got != 1 {
				t.Fatalf("delivered to %d clients", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("serve never opened the gateway, which alone carries DMs to the app")
		}
		if !f.WaitFor(func() bool { return len(f.PostsTo(dm)) >= n }) {
			t.Fatalf("%q: no answer in the DM: %+v", text, f.PostsTo(dm))
		}
		return f.PostsTo(dm)[n-1].Text()
	}
	hint := answer("hello, can I have a GPU?", 1)
	_, example, _ := strings.Cut(hint, "`")
	example, _, found := strings.Cut(example, "`")
	if !strings.Contains(hint, "help") || !found {
		t.Fatalf("the answer to a DM that is no command is %q; want how to ask, with an example", hint)
	}
	if got := answer(example, 2); !strings.Contains(got, "L-1 is active") {
		t.Errorf("the example %q, sent back, was answered %q; want a lease", example, got)
	}
	if got := answer("gpu list", 3); !strings.Contains(got, "L-1") {
		t.Errorf("gpu list was answered %q", got)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// marshPolicy is a policy whose first class, reed, team egrets (Alice's) has no quota in: an
// example in reed would be refused for her.
const marshPolicy = `organization: Marsh Optics
currency: SEK
timezone: Europe/Stockholm
classes:
  - name: reed
    description: Dedicated H100
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 4.10
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
    idle_timeout: 30m
    idle_grace: 10m
    slurm: {partition: reed, gres: "gpu:h100"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: reed}}
  - name: sedge
    description: Shared A10
    sku: A10
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.60
    isolation: shared
    max_gpus: 2
    max_duration: 3h
    idle_timeout: 30m
    idle_grace: 10m
    slurm: {partition: sedge, gres: "gpu:a10"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: sedge}}
default_quota: {gpus: {sedge: 1}, gpu_hours_per_week: 10}
teams:
  - name: egrets
    idp_groups: [grp-egrets]
    budget_owners: [bo@marsh.example]
    quota: {gpus: {sedge: 2}, gpu_hours_per_week: 100}
approvals:
  timeout: 12h
  self_approval: false
  fallback_approvers: [ops@marsh.example]
backend: sim
directory:
  - {user: tove@marsh.example, groups: [grp-egrets], accounts: ["discord:100000000000000001"]}
  - {user: bo@marsh.example, groups: [grp-egrets]}
  - {user: ops@marsh.example, groups: [ops]}
sim:
  nodes:
    - {name: h100, count: 1, class: reed, gpus: 8}
    - {name: a10, count: 2, class: sedge, gpus: 2}
`
