package main

import (
	"context"
	"fmt"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
)

// endState is what the database holds after a run, against what the deliveries should have made.
type endState struct {
	Requests       int      `json:"requests"`        // deliveries that asked for a lease
	Leases         int      `json:"leases"`          // leases the run's teams hold in any state
	Granted        int      `json:"granted"`         // running at the end
	Pending        int      `json:"pending"`         // waiting for a budget owner
	Other          int      `json:"other"`           // in any other state
	ExpectedGrants int      `json:"expected_grants"` // each team's quota, or what it asked for when less
	WithoutLease   int      `json:"without_lease"`   // requests that made no lease
	Refused        int      `json:"refused"`         // of those, answered with a refusal (too busy, …)
	Duplicates     int      `json:"duplicates"`      // leases beyond one per request key, or without a key of this run
	OverQuota      int      `json:"over_quota"`      // teams holding more than their quota
	Problems       []string `json:"problems,omitempty"`
}

// ok reports whether the end state keeps every promise: each lease made once, none granted beyond
// a quota, and as many granted as the quotas allow.
func (e endState) ok() bool { return len(e.Problems) == 0 }

// checkEndState reads the run's leases from the database serve used.
func checkEndState(ctx context.Context, dbURL string, p plan, answered []bool) (endState, error) {
	db, err := store.Connect(ctx, dbURL, nil)
	if err != nil {
		return endState{}, err
	}
	defer db.Close()
	byKey := map[string]int{} // request key -> leases with it
	made := make([]int, p.teams)
	var e endState
	for t := range p.teams {
		var leases []*qm.Lease
		if err := db.View(ctx, func(tx qm.Tx) error {
			var err error
			leases, err = tx.ListLeases(ctx, qm.LeaseFilter{Kind: qm.KindWorkspace, Team: p.teamName(t)})
			return err
		}); err != nil {
			return endState{}, fmt.Errorf("read the leases of %s: %w", p.teamName(t), err)
		}
		held := 0
		for _, l := range leases {
			e.Leases++
			made[t]++
			byKey[l.RequestKey]++
			switch {
			case l.State.Running():
				e.Granted++
				held += l.GPUs
			case l.State == qm.PendingApproval:
				e.Pending++
			default:
				e.Other++
			}
		}
		if held > p.quota {
			e.OverQuota++
			e.Problems = append(e.Problems, fmt.Sprintf("team %s holds %d GPUs, over its quota of %d", p.teamName(t), held, p.quota))
		}
	}
	for i := range p.total {
		if !mix[i%len(mix)].request {
			continue
		}
		e.Requests++
		k := p.requestKey(i)
		n := byKey[k]
		delete(byKey, k)
		switch {
		case n == 0:
			e.WithoutLease++
			if answered[i] {
				e.Refused++
			}
		case n > 1:
			e.Duplicates += n - 1
		}
	}
	for k, n := range byKey {
		e.Duplicates += n
		e.Problems = append(e.Problems, fmt.Sprintf("%d lease(s) with key %q, which no request of the run made", n, k))
	}
	e.ExpectedGrants = p.expectedGrants(made)
	if e.Duplicates > 0 {
		e.Problems = append(e.Problems, fmt.Sprintf("%d duplicate lease(s)", e.Duplicates))
	}
	if e.Granted != e.ExpectedGrants {
		e.Problems = append(e.Problems, fmt.Sprintf("%d leases granted where the quotas allow %d for the requests taken", e.Granted, e.ExpectedGrants))
	}
	if e.Other > 0 {
		e.Problems = append(e.Problems, fmt.Sprintf("%d lease(s) neither running nor waiting for approval", e.Other))
	}
	return e, nil
}
