package ingest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// leaseIndex finds the running lease behind a Slurm job id, a pod UID, or on a node.
type leaseIndex struct {
	at     time.Time
	byJob  map[string]*qm.Lease
	byPod  map[string]*qm.Lease
	byNode map[string][]*qm.Lease
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
		if l.Node != "" {
			for _, n := range strings.Split(l.Node, ",") {
				idx.byNode[n] = append(idx.byNode[n], l)
			}
		}
	}
	i.idx, i.uids = idx, keep
	return idx, nil
}
