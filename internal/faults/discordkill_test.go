//go:build faults

package faults_test

import (
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// discordKillRounds is how many times TestKillNineWhileDiscordCommandsAreDeferredOnSlurm kills serve.
var discordKillRounds = 8

// interact posts a signed interaction to serve's Discord endpoint and returns the type of its
// answer: 4 answered in the acknowledgement, 5 deferred.
func interact(signer *discordtest.Signer, base string, body []byte) (int, error) {
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(signer.Request(base+"/discord/interactions", body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var r struct {
		Type int `json:"type"`
	}
	return r.Type, json.NewDecoder(resp.Body).Decode(&r)
}

// kill -9 of serve while Discord commands are deferred, on the real Slurm test cluster: each
// round sends two requests as Discord interactions (their provisioning is slowed by the sbatch
// in front of Slurm's, so most are deferred), then kills the process after a random 0-1.2 s and
// restarts it at once. Discord does not send an interaction again, so every deferral not yet
// replaced by its answer at the kill must be replaced after the restart, with the interaction's
// token, and the service must recover by itself: no orphan job, no lease without a job, no
// duplicate lease, no quota breach.
func TestKillNineWhileDiscordCommandsAreDeferredOnSlurm(t *testing.T) {
	const quota = 2
	k := newKillSetup(t, "qmd", quota)
	fake := discordtest.New(t)
	signer := discordtest.NewSigner()
	env := append(k.env, "DISCORD_BOT_TOKEN="+discordtest.Token,
		"DISCORD_PUBLIC_KEY="+signer.PublicKey(), "DISCORD_APP_ID="+discordtest.App, "DISCORD_API_URL="+fake.URL,
		"DISCORD_BOT_TOKEN_FILE=", "DISCORD_PUBLIC_KEY_FILE=")
	answered := func(id string) bool { _, ok := fake.AnswerTo(id); return ok }

	counts := map[string]int{}
	s := startServe(t, env, true)
	for round := range discordKillRounds {
		var deferred []string // interactions deferred, by id
		for range 2 {
			who := discordtest.Who{User: discordUser(mrand.IntN(4)), Channel: "600000000000000001", Guild: "500000000000000001"}
			body := discordtest.Command(who, "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1},
				discordtest.Opt{Name: "class", Value: []string{"interactive", "train"}[mrand.IntN(2)]},
				discordtest.Opt{Name: "duration", Value: "1h"})
			typ, err := interact(signer, s.url, body)
			if err != nil {
				t.Fatalf("round %d: %v\n%s", round, err, tail(s.log.String(), 20))
			}
			switch typ {
			case 4:
				counts["answered in the acknowledgement"]++
			case 5:
				counts["deferred"]++
				deferred = append(deferred, discordtest.ID(body))
			default:
				t.Fatalf("round %d: an answer of type %d", round, typ)
			}
		}
		time.Sleep(time.Duration(mrand.IntN(1200)) * time.Millisecond)
		s.kill()
		var open []string
		for _, id := range deferred {
			if !answered(id) {
				open = append(open, id)
			}
		}
		s = startServe(t, env, true)
		if !waitFor(30*time.Second, func() bool {
			for _, id := range open {
				if !answered(id) {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("round %d: of %d deferrals open at the kill, some were not answered after the restart\n%s", round, len(open), tail(s.log.String(), 40))
		}
		counts["deferred, unanswered at a kill, answered after it"] += len(open)
		if bad := settled(t, 30*time.Second, k.db, k.conf, k.instance, quota); len(bad) > 0 {
			t.Fatalf("round %d: after the restart the service did not recover:\n%s\n%s", round, bad, tail(s.log.String(), 40))
		}
	}
	t.Logf("%d kill -9 runs: %s", discordKillRounds, figures(counts))
	s.term(30 * time.Second)
}
