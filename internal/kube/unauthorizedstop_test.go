package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestAReleaseWhoseCredentialsTheAPIRefuses: a running lease is released while the API server
// answers 401 Unauthorized to the service (its token revoked or expired). The release stands and
// the bill stops at once; the lease says why its Job could not be deleted now (the service's
// Kubernetes credentials are refused, a platform admin must renew them), the log and the reconcile
// pass's error name the credentials, not a generic failure; once they are accepted again, the
// reconcile pass deletes the Job.
func TestAReleaseWhoseCredentialsTheAPIRefuses(t *testing.T) {
	ctx := context.Background()
	k, logs := loggedKaskade(t)
	k.reconcile()
	l := k.ask("astrid@kaskade.example", 1, "notebook", "jupyterlab", 4*time.Hour)
	k.runPod("qm-fjord", "qm-l-1-jupyterlab", "mig-01", k.clock.Now())
	k.pass()
	if got := k.lease(l.ID); got.State != qm.Active {
		t.Fatalf("lease %s %q, want active", got.State, got.Reason)
	}
	revoked := refuseCredentials(k)
	k.clock.Advance(time.Hour)
	out, err := k.svc.Release(ctx, "astrid@kaskade.example", l.ID)
	if err != nil {
		t.Fatalf("release while the API refuses the service's credentials: %v", err)
	}
	if out.State != qm.Released || !out.StopDeferred {
		t.Fatalf("lease %s (stop deferred %v), want released with its stop deferred", out.State, out.StopDeferred)
	}
	if !strings.Contains(out.StopDeferredWhy, "credentials") || !strings.Contains(out.StopDeferredWhy, "platform admin must renew them") {
		t.Errorf("why its Job is not deleted now: %q, want the service's credentials refused and who renews them", out.StopDeferredWhy)
	}
	if got := k.lease(l.ID); got.EndedAt.IsZero() || !got.EndedAt.Equal(k.clock.Now()) {
		t.Errorf("billed until %v, want until the release at %v", got.EndedAt, k.clock.Now())
	}
	if !strings.Contains(logs.String(), "refuses the service's credentials") {
		t.Errorf("the log does not name the credentials:\n%s", logs.String())
	}
	_, err = k.svc.Reconcile(ctx)
	if err == nil || !strings.Contains(err.Error(), "refuses the service's credentials") {
		t.Errorf("the reconcile pass's error %v does not name the credentials", err)
	}
	*revoked = false // the test looks, not the service
	left := len(k.jobs("qm-fjord"))
	*revoked = true
	if left == 0 {
		t.Fatal("the test's API deleted the Job while refusing the credentials")
	}
	*revoked = false
	k.clock.Advance(time.Minute)
	k.pass()
	if jobs := k.jobs("qm-fjord"); len(jobs) != 0 {
		t.Errorf("Job %s still there once the credentials are accepted again", jobs[0].Name)
	}
}
