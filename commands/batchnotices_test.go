package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
)

// The notices of a lease whose job stopped or ended are worded by what it is: a requeued batch
// job, which has nothing to connect to, promises no way to connect when it runs again, as a
// workspace's does; and a batch job's end notice (finished, failed, expired, reclaimed) says
// where its output is, as its submit reply did, which no workspace's says. It holds for every
// template of the catalog, by kind, and for a lease with no template.
func TestRequeueAndEndNoticesAreWordedByTheLeasesKind(t *testing.T) {
	h := templateHarness(t)
	now := h.clock.Now()
	for name, batch := range leaseTemplates(h) {
		lease := func(st qm.State) *qm.Lease {
			return &qm.Lease{ID: 7, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: time.Hour,
				Template: name, State: st, StartedAt: now.Add(-30 * time.Minute), ExpiresAt: now.Add(30 * time.Minute), Reason: "the job ended"}
		}
		render := func(kind qm.NoticeKind, l *qm.Lease) string {
			rs := posted(h.bot.RenderNotice(context.Background(), qm.Notice{Kind: kind, To: []string{"alice@acme.example"}, Lease: l, Reason: "the node went down"}))
			if len(rs) != 1 {
				t.Fatalf("template %q, %s: %d messages", name, kind, len(rs))
			}
			return rs[0].Text
		}
		s := render(qm.NoticeRequeued, lease(qm.Queued))
		if connect := strings.Contains(s, "connect"); connect == batch {
			t.Errorf("template %q (batch %v), requeued: %q; want how to connect for a workspace alone", name, batch, s)
		}
		if batch && !strings.Contains(s, "a message when it starts again") {
			t.Errorf("template %q, requeued: %q; want a message when it starts again", name, s)
		}
		for _, end := range []struct {
			kind  qm.NoticeKind
			state qm.State
		}{{qm.NoticeFinished, qm.Released}, {qm.NoticeFailed, qm.Failed}, {qm.NoticeExpired, qm.Expired}, {qm.NoticeReclaimed, qm.Reclaimed}} {
			l := lease(end.state)
			l.EndedAt = now
			s := render(end.kind, l)
			where := strings.Contains(s, ".quartermaster/L-7 in the storage of team vision")
			if where != batch || strings.Contains(s, ".quartermaster") != batch {
				t.Errorf("template %q (batch %v), %s: %q; want where the output is for a batch job alone", name, batch, end.kind, s)
			}
			if batch && strings.Contains(s, "workspace") {
				t.Errorf("template %q, %s: %q speaks of a workspace", name, end.kind, s)
			}
		}
	}
}

// A batch job that is suspended or restarted is told of as a job, not as a workspace: nothing to
// connect to, and what it had not saved is its job's; a workspace keeps its words. It holds for
// every template of the catalog, by kind, and for a lease with no template.
func TestSuspendedAndRestartedNoticesAreWordedByTheLeasesKind(t *testing.T) {
	h := templateHarness(t)
	now := h.clock.Now()
	for name, batch := range leaseTemplates(h) {
		l := &qm.Lease{ID: 7, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: time.Hour,
			Template: name, State: qm.Active, Node: "h100-01", StartedAt: now.Add(-30 * time.Minute), ExpiresAt: now.Add(30 * time.Minute),
			Connect: "ssh -p 2222 alice@h100-01"}
		for _, kind := range []qm.NoticeKind{qm.NoticeSuspended, qm.NoticeRestarted} {
			rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: kind, To: []string{"alice@acme.example"}, Lease: l, Reason: "its job was suspended"})
			if len(rs) != 1 {
				t.Fatalf("template %q, %s: %d messages", name, kind, len(rs))
			}
			s := rs[0].Text
			if workspace := strings.Contains(s, "workspace"); workspace == batch {
				t.Errorf("template %q (batch %v), %s: %q; want a workspace named for a workspace alone", name, batch, kind, s)
			}
			if batch && (strings.Contains(s, "Connect") || !strings.Contains(s, "its job")) {
				t.Errorf("template %q, %s: %q; want its job named and no way to connect", name, kind, s)
			}
		}
	}
}

// leaseTemplates is every template of h's catalog, and "" for a lease with no template, each
// with whether it is a batch template.
func leaseTemplates(h *harness) map[string]bool {
	batch := map[string]bool{"": false}
	for _, tp := range h.bot.Templates.Catalog.List() {
		batch[tp.Name] = tp.Kind == templates.KindBatch
	}
	return batch
}
