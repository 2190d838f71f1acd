package ingest_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A Kubernetes node's name is a DNS subdomain of up to 253 characters: its agent's reports are
// taken under the token created for it and cover the leases the scheduler places there; a
// report without a token is told the command that makes one for that name. A name of 254
// characters is refused as malformed, saying why.
func TestALongKubernetesNodeNameReports(t *testing.T) {
	name := strings.Join([]string{"ip-10-20-30-40", strings.Repeat("g", 63), strings.Repeat("h", 63), strings.Repeat("i", 63)}, ".")
	name += "." + strings.Repeat("x", 253-len(name)-1)
	if len(name) != 253 {
		t.Fatalf("the name has %d characters", len(name))
	}
	l := &qm.Lease{ID: 1, State: qm.Active, GPUs: 1, Ref: "pod/qm-vision/ws", Node: name}
	e := newEnv(t, storetest.SQLite(t), l)
	tok, err := ingest.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateAgentToken(t.Context(), name, ingest.HashToken(tok), t0); err != nil {
		t.Fatal(err)
	}
	r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(70), Processes: []report.Process{{PID: 1, Pod: "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}}},
		report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
	r.Node = name
	e.accept(tok, r)
	if a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), l); !ok || !a.LastActive.Equal(t0) {
		t.Errorf("the lease on the node of 253 characters: %+v %v; want active", a, ok)
	}
	code, out := e.post("", r)
	if msg, _ := out["error"].(string); code != 401 || !strings.Contains(msg, "`quartermaster agent-token create "+name+"`") {
		t.Errorf("a report without a token: %d %v", code, out)
	}

	r.Node = name + "y"
	code, out = e.post(tok, r)
	if msg, _ := out["error"].(string); code != 400 || !strings.Contains(msg, "254 characters") || !strings.Contains(msg, "at most 253") {
		t.Errorf("a report naming a node of 254 characters: %d %v", code, out)
	}
}
