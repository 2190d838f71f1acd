package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
)

// offline is an HTTP client that reaches nothing: the work a delivery sets off fails at once.
type offline struct{}

func (offline) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("offline")
}

// fuzzAdapter is an adapter whose handler answers every command with its text, talking to no
// Slack, for the fuzz targets: they feed it signed deliveries of any shape.
func fuzzAdapter(f *testing.F) http.Handler { return fuzzAdapterB(f) }

func fuzzAdapterB(f testing.TB) http.Handler {
	a, err := slackbot.New(slackbot.Config{
		BotToken: "xoxb-fuzz", SigningSecret: secret, APIURL: "http://127.0.0.1:1/",
		HTTPClient:  &http.Client{Transport: offline{}},
		Handler:     bot.HandlerFunc(func(_ context.Context, r bot.Request) []bot.Reply { return []bot.Reply{{Text: r.Text}} }),
		Choices:     slackbot.Choices{Classes: []slackbot.Choice{{Value: "train", Label: "train — A100"}}, Teams: []string{"vision"}, Durations: []string{"1h", "4h"}},
		WorkTimeout: time.Second,
	})
	if err != nil {
		f.Fatal(err)
	}
	// Closed: the work a delivery sets off (looking the user up, answering) ends at once, so
	// the fuzzer measures the parsing and the acknowledgement, which run before any of it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		f.Fatal(err)
	}
	return a.Handler()
}

// deliver posts body to path, signed, and checks the answer: 200, or 400 for what does not
// parse, and JSON when it has a body on 200.
func deliver(t *testing.T, h http.Handler, path, body string) {
	ts := time.Now().Unix()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", fmt.Sprint(ts))
	req.Header.Set("X-Slack-Signature", sign(secret, ts, body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	switch w.Code {
	case http.StatusOK:
		if b := w.Body.Bytes(); len(b) > 0 && !json.Valid(b) {
			t.Fatalf("%s answered 200 with a body that is not JSON: %q", path, b)
		}
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
	default:
		t.Fatalf("%s answered %d to %q", path, w.Code, body)
	}
}

// Slash commands: any form body, signed, is parsed without a panic and answered 200 or 400.
func FuzzSlashCommand(f *testing.F) {
	for _, s := range []string{
		url.Values{"command": {"/gpu"}, "text": {"request 1 train for 4h"}, "user_id": {"U1"}, "trigger_id": {"T1"}, "response_url": {"https://hooks.slack.com/x"}}.Encode(),
		url.Values{"command": {"/gpu"}, "text": {""}, "user_id": {"U1"}, "trigger_id": {"T2"}}.Encode(),
		"text=%zz&user_id=", "", "command=/gpu&text=" + strings.Repeat("a", 3000), "user_id=U1&user_id=U2&text=deny+L-1",
	} {
		f.Add(s)
	}
	h := fuzzAdapter(f)
	f.Fuzz(func(t *testing.T, body string) { deliver(t, h, "/slack/commands", body) })
}

// Interactions: any payload (block actions, suggestions, view submissions, or JSON of any
// shape), signed, is parsed without a panic and answered 200 or 400.
func FuzzInteractionPayload(f *testing.F) {
	for _, s := range []string{
		`{"type":"block_actions","trigger_id":"T1","user":{"id":"U1"},"actions":[{"action_id":"qm.cmd.0","value":"/gpu approve L-1"}]}`,
		`{"type":"block_actions","trigger_id":"T2","user":{"id":"U1"},"actions":[{"action_id":"qm.cmd.1","value":"/gpu deny L-1"}]}`,
		`{"type":"block_actions","user":{"id":"U1"},"actions":[{"action_id":"qm.form.class","value":"x"},{"action_id":"qm.open.request"}]}`,
		`{"type":"block_suggestion","action_id":"qm.form.class","value":"tr"}`,
		`{"type":"view_submission","user":{"id":"U1"},"view":{"id":"V1","callback_id":"qm.request","private_metadata":"{\"c\":\"C1\"}","state":{"values":{"qm.form.gpus":{"qm.form.gpus":{"type":"plain_text_input","value":"2"}}}}}}`,
		`{"type":"view_submission","view":{"id":"V2","callback_id":"qm.deny","private_metadata":"{\"l\":\"L-1\"}","state":{"values":{"qm.deny.reason":{"qm.deny.reason":{"value":"  no  "}}}}}}`,
		`{"type":"view_submission","view":{"callback_id":"qm.deny","private_metadata":"not json","state":null}}`,
		`{"type":7}`, `[]`, `null`, `{"actions":"x"}`,
	} {
		f.Add(s, true)
	}
	f.Add("payload=%zz", false)
	h := fuzzAdapter(f)
	f.Fuzz(func(t *testing.T, payload string, asForm bool) {
		body := payload
		if asForm {
			body = url.Values{"payload": {payload}}.Encode()
		}
		deliver(t, h, "/slack/interactions", body)
	})
}

// Events: any body, signed, is parsed without a panic and answered 200 or 400.
func FuzzEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"url_verification","challenge":"abc"}`,
		`{"type":"event_callback","event_id":"E1","event":{"type":"app_home_opened","user":"U1","tab":"home"}}`,
		`{"type":"event_callback","event_id":"E2","event":{"type":"app_home_opened","user":"U1","tab":"messages"}}`,
		`{"type":"event_callback","event":{"type":"message","text":"hi"}}`,
		`{"type":"event_callback","event":null}`, `{"type":"app_rate_limited"}`, `{}`, `[`, ``,
	} {
		f.Add(s)
	}
	h := fuzzAdapter(f)
	f.Fuzz(func(t *testing.T, body string) { deliver(t, h, "/slack/events", body) })
}

// Signatures: a delivery is let through only when its X-Slack-Signature is the HMAC of
// "v0:timestamp:body" with the signing secret and its timestamp is within five minutes of now.
// Any other signature or timestamp header (forged, another secret, another body, malformed,
// stale, in the future, out of int64's range) is answered 401 on every endpoint.
func FuzzSignature(f *testing.F) {
	f.Add(uint8(0), "command=/gpu&text=list&user_id=U1", int64(0), "", "", uint8(0))
	f.Add(uint8(1), `{"type":"url_verification","challenge":"c"}`, int64(-301), "", "", uint8(0))
	f.Add(uint8(2), `payload={"type":"block_actions"}`, int64(299), "", "", uint8(0))
	f.Add(uint8(0), "text=list", int64(1<<62), "", "", uint8(0))
	f.Add(uint8(0), "text=list", int64(-1<<62), "", "", uint8(0))
	f.Add(uint8(0), "text=list", int64(0), "v0=00", "1", uint8(1))
	f.Add(uint8(1), "{}", int64(0), "v0=zz", "-9223372036854775808", uint8(1))
	f.Add(uint8(2), "", int64(0), "", " 1", uint8(1))
	f.Add(uint8(0), "text=list", int64(0), "", "", uint8(2))
	f.Add(uint8(1), "{}", int64(0), "", "", uint8(3))
	h := fuzzAdapter(f)
	paths := []string{"/slack/commands", "/slack/events", "/slack/interactions"}
	f.Fuzz(func(t *testing.T, p uint8, body string, offset int64, sig, ts string, mode uint8) {
		path := paths[int(p)%len(paths)]
		now := time.Now().Unix()
		at := now + offset
		if offset > 0 && at < now || offset < 0 && at > now {
			return // wraps around int64
		}
		valid := false
		switch mode % 4 {
		case 0: // signed with the secret at now+offset
			ts, sig = strconv.FormatInt(at, 10), sign(secret, at, body)
			if offset > -290 && offset < 290 {
				valid = true
			} else if offset >= -310 && offset <= 310 {
				return // too near the edge of five minutes to tell on a slow machine
			}
		case 1: // headers as given
			if sig == sign(secret, now, body) {
				return
			}
		case 2: // signed with another secret
			ts, sig = strconv.FormatInt(now, 10), sign(secret+"x", now, body)
		case 3: // signed over another body
			ts, sig = strconv.FormatInt(now, 10), sign(secret, now, body+"&")
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header["X-Slack-Request-Timestamp"] = []string{ts}
		req.Header["X-Slack-Signature"] = []string{sig}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if valid != (w.Code != http.StatusUnauthorized) {
			t.Fatalf("%s signed %q at %q over %q (mode %d): HTTP %d", path, sig, ts, body, mode%4, w.Code)
		}
	})
}
