package ingest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/hostlist"
	"github.com/acme/quartermaster/internal/qm"
)

// leaseIndex finds the running lease behind a Slurm job id, a pod UID, or on a node.
type leaseIndex struct {
	at     time.Time
	byJob  map[string]*qm.Lease
	byPod  map[string]*qm.Lease
	byNode map[string][]*qm.Lease // by node name in lower case
}

// cachedUIDs are the pod UIDs behind a Kubernetes lease's Ref.
type cachedUIDs struct {
	uids []string
	at   time.Time
}

// uidTTL is how long the pod UIDs of a Kubernetes object are trusted (a Job's pods can be
// replaced).
const uidTTL = time.Minute

// slurmJobRef is a Slurm lease's Ref: the job id.
var slurmJobRef = regexp.MustCompile(`^[0-9]+$`)

// index returns the lease index, reading the running leases again when it is older than
// IndexEvery. Requests arriving meanwhile wait for the one read.
func (i *Ingest) index(ctx context.Context) (*leaseIndex, error) {
	i.idxMu.Lock()
	defer i.idxMu.Unlock()
	if i.idx != nil && time.Since(i.idx.at) < i.cfg.IndexEvery {
		return i.idx, nil
	}
	leases, err := i.cfg.Leases(ctx)
	if err != nil {
		if i.idx != nil {
			i.log.Warn("reading the running leases failed; using the last list", "err", err)
			return i.idx, nil
		}
		return nil, fmt.Errorf("ingest: running leases: %w", err)
	}
	idx := &leaseIndex{at: time.Now(), byJob: map[string]*qm.Lease{}, byPod: map[string]*qm.Lease{}, byNode: map[string][]*qm.Lease{}}
	keep := map[string]cachedUIDs{}
	for _, l := range leases {
		if l.Kind != qm.KindWorkspace || !l.State.Running() {
			continue
		}
		switch {
		case slurmJobRef.MatchString(l.Ref):
			idx.byJob[l.Ref] = l
		case i.cfg.PodUIDs != nil && (strings.HasPrefix(l.Ref, "pod/") || strings.HasPrefix(l.Ref, "job/")):
			c, ok := i.uids[l.Ref]
			if !ok || time.Since(c.at) > uidTTL {
				uids, err := i.cfg.PodUIDs(ctx, l.Ref)
				if err != nil {
					i.log.Warn("finding a lease's pods failed", "lease", l.ID, "ref", l.Ref, "err", err)
				} else {
					c = cachedUIDs{uids: uids, at: time.Now()}
				}
			}
			keep[l.Ref] = c
			for _, u := range c.uids {
				idx.byPod[u] = l
			}
		}
		for _, n := range hostlist.Expand(l.Node) {
			n = strings.ToLower(n) // node names match ignoring A-Z case
			idx.byNode[n] = append(idx.byNode[n], l)
		}
	}
	i.idx, i.uids = idx, keep
	return idx, nil
}

// mayRunOn reports whether lease l runs, or may run, on node, so that node's report of a process
// of its job or pod counts for it: node is in its node list (ignoring A-Z case); or the list
// cannot say where the job runs, because the scheduler has not said yet (the list is empty until
// the service's pass sees the job run) or the job went back to the scheduler's queue and may
// start again elsewhere before the service's next pass follows it there. Any other node's word
// about the lease's job is not taken: it could keep a lease busy that its own nodes show idle.
func (x *leaseIndex) mayRunOn(l *qm.Lease, node string) bool {
	if strings.TrimSpace(l.Node) == "" || qm.Requeued(l) {
		return true
	}
	return slices.Contains(x.byNode[strings.ToLower(node)], l)
}
