package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// benchUsers are Slack users of the example policy's directory.
var benchUsers = map[string]string{
	"U1": "alice@acme.example", "U2": "bob@acme.example", "U3": "carl@contractor.example",
	"U4": "dana@acme.example", "U5": "maya@acme.example", "U6": "lee@acme.example",
}

// benchCommands are what the load types, in turn: mostly reads, and one request in five.
var benchCommands = []string{"list", "catalog", "request 1 interactive for 1h", "estimate 2 train 8h", "quota"}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkSlackAck measures how fast `quartermaster serve` acknowledges signed /gpu slash
// commands: QM_BENCH_SLACK_RATE per second (default 200) for QM_BENCH_SLACK_SECONDS (default 60),
// open loop, against PostgreSQL, everything on loopback (a fake Slack Web API answers users.info
// and the response URLs). A command's latency runs from when it was due to be sent to when its
// acknowledgement arrived, so a slow sender counts against the figures too. Run it once:
// go test -run '^$' -bench '^BenchmarkSlackAck$' -benchtime 1x ./cmd/quartermaster/
func BenchmarkSlackAck(b *testing.B) {
	rate := envInt("QM_BENCH_SLACK_RATE", 200)
	seconds := envInt("QM_BENCH_SLACK_SECONDS", 60)
	total := rate * seconds
	db := storetest.Postgres(b)

	var answered atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/users.info":
			_ = r.ParseForm()
			id := r.Form.Get("user")
			fmt.Fprintf(w, `{"ok":true,"user":{"id":%q,"profile":{"email":%q}}}`, id, benchUsers[id])
		case strings.HasPrefix(r.URL.Path, "/response/"):
			_, _ = io.Copy(io.Discard, r.Body)
			answered.Add(1)
			_, _ = io.WriteString(w, `{"ok":true}`)
		default:
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = io.WriteString(w, `{"ok":true,"channel":"D1","ts":"1.1"}`)
		}
	}))
	defer api.Close()

	const secret = "bench-secret"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	o := serveOptions{listener: ln, grace: time.Second, slack: slackSettings{BotToken: "xoxb-bench", SigningSecret: secret, APIURL: api.URL}}
	o.app.flags.db = db
	readyc := make(chan string, 1)
	o.onReady = func(addr string) { readyc <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o) }()
	var base string
	select {
	case addr := <-readyc:
		base = "http://" + addr + "/slack/commands"
	case err := <-done:
		b.Fatalf("serve: %v", err)
	}

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute}}
	users := []string{"U1", "U2", "U3", "U4", "U5", "U6"}
	body := func(i int) string {
		return url.Values{"command": {"/gpu"}, "text": {benchCommands[i%len(benchCommands)]}, "user_id": {users[i%len(users)]},
			"channel_id": {"C1"}, "trigger_id": {fmt.Sprintf("bench.%d", i)}, "response_url": {fmt.Sprintf("%s/response/%d", api.URL, i)}}.Encode()
	}
	lat := make([]time.Duration, total)
	var failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			payload := body(i)
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			m := hmac.New(sha256.New, []byte(secret))
			fmt.Fprintf(m, "v0:%s:%s", ts, payload)
			req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(payload))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Slack-Request-Timestamp", ts)
			req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
			resp, err := client.Do(req)
			lat[i] = time.Since(due)
			if err != nil {
				failed.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Errorf("serve: %v", err)
	}

	// The tail by ten-second window, in send order, to tell a slow start from a slow end.
	var windows []string
	per := 10 * rate
	for w := 0; w < total; w += per {
		part := slices.Clone(lat[w:min(w+per, total)])
		slices.Sort(part)
		windows = append(windows, fmt.Sprintf("%.0f", float64(part[min(len(part)-1, len(part)*99/100)].Microseconds())/1000))
	}
	b.Logf("p99 ms by 10 s window: %s", strings.Join(windows, " "))
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "commands/s")
	b.ReportMetric(float64(failed.Load()), "failed")
	b.ReportMetric(float64(answered.Load()), "answered")
	b.Logf("%d signed commands at %d/s for %ds in %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d not acknowledged with 200; %d answered through response_url before the stop",
		total, rate, seconds, elapsed.Round(time.Millisecond), pct(0.5), pct(0.99), float64(lat[len(lat)-1].Microseconds())/1000, failed.Load(), answered.Load())
}
