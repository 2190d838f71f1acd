package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// signer signs deliveries as Slack and Discord do.
type signer struct {
	slackSecret []byte
	discordKey  ed25519.PrivateKey
}

// body is delivery i of the plan: its path on the service, content type and payload.
func (p plan) body(i int, responseBase string) (path, contentType string, payload []byte) {
	s := mix[i%len(mix)]
	u := p.user(i)
	switch s.kind {
	case slashCommand:
		v := url.Values{"command": {"/gpu"}, "text": {p.text(i)}, "user_id": {p.slackID(u)}, "team_id": {"TLOAD"},
			"channel_id": {loadChannel}, "trigger_id": {p.trigger(i)}, "response_url": {fmt.Sprintf("%s/response/%d", responseBase, i)}}
		return "/slack/commands", "application/x-www-form-urlencoded", []byte(v.Encode())
	case buttonClick:
		cb := map[string]any{
			"type": "block_actions", "trigger_id": p.trigger(i), "response_url": fmt.Sprintf("%s/response/%d", responseBase, i),
			"user": map[string]any{"id": p.slackID(u)}, "team": map[string]any{"id": "TLOAD"}, "channel": map[string]any{"id": loadChannel},
			"container": map[string]any{"type": "message", "channel_id": loadChannel, "message_ts": p.messageTS(i)},
			"actions":   []any{map[string]any{"type": "button", "action_id": "qm.cmd.0", "block_id": "actions", "value": p.text(i), "action_ts": "1.2"}},
		}
		raw, _ := json.Marshal(cb)
		return "/slack/interactions", "application/x-www-form-urlencoded", []byte(url.Values{"payload": {string(raw)}}.Encode())
	}
	var opts []any
	if s.request {
		opts = []any{
			map[string]any{"name": "gpus", "type": 4, "value": 1},
			map[string]any{"name": "class", "type": 3, "value": "interactive"},
			map[string]any{"name": "duration", "type": 3, "value": p.length(i)},
		}
	}
	in := map[string]any{
		"id": p.interactionID(i), "application_id": discordAppID, "type": 2, "token": fmt.Sprintf("load.%d", i), "version": 1,
		"channel_id": discordChanID, "guild_id": discordGuild, "locale": "en-US",
		"member": map[string]any{"user": map[string]any{"id": p.discordID(u), "username": fmt.Sprintf("u%03d", u)}, "roles": []any{}},
		"data": map[string]any{"id": "400000000000000001", "name": "gpu", "type": 1,
			"options": []any{map[string]any{"name": s.text, "type": 1, "options": append([]any{}, opts...)}}},
	}
	raw, _ := json.Marshal(in)
	return "/discord/interactions", "application/json", raw
}

// sign adds the signature headers of the platform the path belongs to.
func (s signer) sign(req *http.Request, path string, payload []byte, at time.Time) {
	ts := strconv.FormatInt(at.Unix(), 10)
	if path == "/discord/interactions" {
		req.Header.Set("X-Signature-Timestamp", ts)
		req.Header.Set("X-Signature-Ed25519", hex.EncodeToString(ed25519.Sign(s.discordKey, append([]byte(ts), payload...))))
		return
	}
	m := hmac.New(sha256.New, s.slackSecret)
	fmt.Fprintf(m, "v0:%s:%s", ts, payload)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
}

// phase is one open-loop run against one target.
type phase struct {
	ack     []time.Duration // by delivery: from when it was due to when its acknowledgement arrived
	status  []int           // by delivery: the HTTP status; 0 when the request failed
	start   time.Time
	elapsed time.Duration // from the first due time to the last send
	failed  int
	behind  time.Duration // the most the sender fell behind its schedule
}

// prepared is one delivery ready to go.
type prepared struct {
	path, contentType string
	payload           []byte
}

// sendAll sends the plan's deliveries to base at rate per second, each at its due time whether or
// not the earlier ones were answered (open loop). onAck is told each acknowledgement's body.
func sendAll(ctx context.Context, p plan, s signer, base, responseBase string, rate int, onAck func(i int, status int, body []byte)) *phase {
	reqs := make([]prepared, p.total)
	for i := range reqs {
		reqs[i].path, reqs[i].contentType, reqs[i].payload = p.body(i, responseBase)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute, DisableCompression: true}}
	defer client.CloseIdleConnections()
	ph := &phase{ack: make([]time.Duration, p.total), status: make([]int, p.total)}
	var failed atomic.Int64
	var wg sync.WaitGroup
	interval := time.Second / time.Duration(rate)
	ph.start = time.Now()
	for i := range reqs {
		due := ph.start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			select {
			case <-ctx.Done():
				wg.Wait()
				return ph
			case <-time.After(d):
			}
		} else {
			ph.behind = max(ph.behind, -d)
		}
		wg.Go(func() {
			r := reqs[i]
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+r.path, bytes.NewReader(r.payload))
			if err != nil {
				failed.Add(1)
				return
			}
			req.Header.Set("Content-Type", r.contentType)
			s.sign(req, r.path, r.payload, time.Now())
			resp, err := client.Do(req)
			if err != nil {
				ph.ack[i] = time.Since(due)
				failed.Add(1)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ph.ack[i] = time.Since(due)
			ph.status[i] = resp.StatusCode
			if resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
			if onAck != nil {
				onAck(i, resp.StatusCode, body)
			}
		})
	}
	ph.elapsed = time.Since(ph.start)
	wg.Wait()
	ph.failed = int(failed.Load())
	return ph
}
