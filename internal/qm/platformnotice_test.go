package qm_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// A lease whose telemetry is missing is told to whom the policy says platform notices go: its
// reports.showback.platform_channel, else the showback channel, else the platform admins (the
// fallback approvers, a group through its members) by DM; never to a channel the policy does
// not name. With nobody to tell, nothing is sent.
func TestMissingTelemetryGoesWhereThePolicySays(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		policy, user, class string
		showback            bool // keep the policy's reports.showback
		want                []string
	}{
		{"../../commands/testdata/tokyo.yaml", "haru@sakura.example", "jupyter", false, []string{"infra@sakura.example"}},
		{"../../commands/testdata/harbor.yaml", "wiremu@harbor.example", "bench", false, []string{"harbor-ops@harbor.example"}},
		{"../../commands/testdata/kolkata.yaml", "kenji@kestrel.example", "nb-t4", false, []string{"root1@kestrel.example", "zoe@kestrel.example"}},
		{"../../commands/testdata/kolkata.yaml", "kenji@kestrel.example", "nb-t4", true, []string{"#showback"}},
	} {
		name := filepath.Base(c.policy) + "/" + c.class
		if c.showback {
			name += "/showback"
		}
		t.Run(name, func(t *testing.T) {
			svc, _, clock, notes := schedService(t, qm.Started{State: qm.Active})
			p, err := policy.LoadFile(c.policy)
			if err != nil {
				t.Fatal(err)
			}
			if !c.showback {
				p.Reports = policy.Reports{}
			}
			svc.Policy, svc.Directory = p, p
			l := mustRequest(t, svc, c.user, 1, c.class)
			if l.State != qm.Active {
				t.Fatalf("the lease is %s (%s), want active", l.State, l.Reason)
			}
			cl, _ := p.Class(c.class)
			clock.Advance(cl.IdleTimeout.Duration + time.Minute)
			if err := svc.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			n := notes.Of(qm.NoticeTelemetryMissing, l.ID)
			if len(n) != 1 {
				t.Fatalf("%d notices of missing telemetry, want one", len(n))
			}
			got := slices.Sorted(slices.Values(n[0].To))
			if !slices.Equal(got, c.want) {
				t.Errorf("missing telemetry told to %q; want %q", got, c.want)
			}
		})
	}
}

// A policy that names no platform channel, no showback channel and no fallback approver gives
// nobody to tell: no notice goes to a channel it never names.
func TestMissingTelemetryWithNobodyToTell(t *testing.T) {
	ctx := context.Background()
	svc, _, clock, notes := schedService(t, qm.Started{State: qm.Active})
	p, err := policy.LoadFile("../../commands/testdata/tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Reports, p.Approvals.FallbackApprovers = policy.Reports{}, nil
	svc.Policy, svc.Directory = p, p
	l := mustRequest(t, svc, "haru@sakura.example", 1, "jupyter")
	clock.Advance(31 * time.Minute)
	if err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range notes.Of(qm.NoticeTelemetryMissing, l.ID) {
		t.Errorf("missing telemetry told to %q, which the policy does not name", n.To)
	}
	if got := mustGet(t, svc, l.ID); got.State != qm.Active {
		t.Errorf("a lease without telemetry is %s, want active (never reclaimed for lack of data)", got.State)
	}
}
