package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestMain lets the test binary stand in for quartermaster-load when it starts its floor server.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		if err := runFloorServer(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestLoadAnswersEveryCommandAndKeepsQuotas drives a real `quartermaster serve` on PostgreSQL at a
// low rate for a few seconds: every Slack command, click and Discord interaction is acknowledged
// with 200 and answered, each request made exactly one lease, the teams' quotas bound (some
// requests wait for approval) and as many leases were granted as the quotas allow.
func TestLoadAnswersEveryCommandAndKeepsQuotas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts quartermaster serve")
	}
	db := storetest.Postgres(t)
	bin := filepath.Join(t.TempDir(), "quartermaster")
	if out, err := exec.Command("go", "build", "-o", bin, "../quartermaster").CombinedOutput(); err != nil {
		t.Fatalf("build quartermaster: %v\n%s", err, out)
	}
	var log strings.Builder
	serveLog := filepath.Join(t.TempDir(), "serve.log")
	res, err := run(context.Background(), options{rate: 30, duration: 4 * time.Second, drain: time.Minute, db: db, bin: bin, teams: 2, floor: true, serveLog: serveLog}, io.MultiWriter(&log))
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.Floor == nil || res.Floor.Sent != 120 || res.Floor.Failed != 0 {
		t.Errorf("the floor server should have taken all 120 deliveries with 200, got %+v", res.Floor)
	}
	if res.Serve.Sent != 120 || res.Serve.Failed != 0 {
		t.Errorf("serve should have acknowledged all 120 deliveries with 200, got %d sent, %d failed", res.Serve.Sent, res.Serve.Failed)
	}
	if res.Answered != 120 || res.AllAnsweredAfter < 0 {
		t.Errorf("every delivery should have been answered, got %d of 120", res.Answered)
	}
	e := res.End
	if len(e.Problems) > 0 {
		t.Errorf("end state: %s", strings.Join(e.Problems, "; "))
	}
	if e.Requests != 12 || e.Leases != 12 || e.WithoutLease != 0 || e.Duplicates != 0 {
		t.Errorf("each of the 12 requests should have made one lease, got %+v", e)
	}
	if e.Granted != e.ExpectedGrants || e.Pending == 0 || e.OverQuota != 0 {
		t.Errorf("the quotas should have granted %d and sent the rest for approval, got %d granted and %d pending (%d teams over quota)",
			e.ExpectedGrants, e.Granted, e.Pending, e.OverQuota)
	}
	if !res.ok() {
		t.Error("the run should report success")
	}
	// serve opens Discord's gateway (for DMs to the app) on the fake platforms too: it connects,
	// and does not keep logging that it cannot.
	b, err := os.ReadFile(serveLog)
	if err != nil {
		t.Fatal(err)
	}
	if sl := string(b); !strings.Contains(sl, "connected to the Discord gateway") || strings.Contains(sl, "cannot open the Discord gateway") {
		t.Errorf("serve did not connect to the fake Discord's gateway; its log:\n%s", sl)
	}
	for _, line := range strings.Split(string(b), "\n") {
		discord := strings.Contains(line, "adapter=discord") || strings.Contains(line, "[DG")
		if discord && (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "error")) {
			t.Errorf("serve logged: %s", line)
		}
	}
}

// TestFloorRefusesBadSignatures: the floor checks signatures, as the service does, so its figure
// includes that work and a mis-signed load would show as failures.
func TestFloorRefusesBadSignatures(t *testing.T) {
	p := newPlan("abc123", 2, 30)
	s := testSigner(t)
	other := testSigner(t)
	h := floorHandler(s.slackSecret, s.discordKey.Public().(ed25519.PublicKey))
	for i := range 30 {
		for _, sg := range []struct {
			s    signer
			want int
		}{{s, 200}, {other, 401}} {
			path, ct, payload := p.body(i, "http://127.0.0.1:9")
			rec := serveOnce(h, sg.s, path, ct, payload)
			if rec != sg.want {
				t.Fatalf("delivery %d (%s) signed by the %s key: status %d, want %d", i, mix[i%len(mix)].kind, map[int]string{200: "right", 401: "wrong"}[sg.want], rec, sg.want)
			}
		}
	}
}

func testSigner(t *testing.T) signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 8)
	_, _ = rand.Read(secret)
	return signer{slackSecret: secret, discordKey: priv}
}

func serveOnce(h http.Handler, s signer, path, contentType string, payload []byte) int {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(payload))
	req.Header.Set("Content-Type", contentType)
	s.sign(req, path, payload, time.Now())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}
