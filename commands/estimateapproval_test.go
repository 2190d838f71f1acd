package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// /gpu estimate says when a request like the one priced would wait for a budget owner, naming
// the published rule and who decides, as the request itself would: its predicted wait is the
// scheduler's, after the decision. Within the rules it says nothing of approval. Nothing is made.
func TestEstimateSaysWhenTheRequestWouldWaitForApproval(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	big := h.say("rita@borealis.example", "/gpu estimate 3 dev 2h")
	if big.Error || !strings.Contains(big.Text, "too-big") || !strings.Contains(big.Text, "olga@borealis.example") || !strings.Contains(big.Text, "budget owner") {
		t.Errorf("estimate of 3 dev (max_gpus 2): %q, want it to say rule too-big sends it to olga@borealis.example", big.Text)
	}
	within := h.say("rita@borealis.example", "/gpu estimate 2 dev 2h")
	if within.Error || strings.Contains(within.Text, "approv") || strings.Contains(within.Text, "budget owner") {
		t.Errorf("estimate of 2 dev, within the rules: %q, want nothing of approval", within.Text)
	}
	// The team's quota as it stands: vision holds its 2 dev GPUs, so one more waits.
	mustOK(t, h.say("vic@borealis.example", "/gpu request 2 dev for 1h"))
	over := h.say("vic@borealis.example", "/gpu estimate 1 dev 1h")
	if over.Error || !strings.Contains(over.Text, "beyond-quota") || !strings.Contains(over.Text, "vera@borealis.example") {
		t.Errorf("estimate of 1 dev for team vision, which holds its 2: %q, want rule beyond-quota and vera@borealis.example", over.Text)
	}
	ls, err := h.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 {
		t.Errorf("estimates made leases: %d leases, want the one request's", len(ls))
	}
}
