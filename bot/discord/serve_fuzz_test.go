package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// FuzzServeInteraction: whatever a signed interaction holds (any type, options of unknown types,
// no member and no user, autocomplete of anything), the endpoint answers it without a panic:
// 400 for what is not an interaction, otherwise 200 with one JSON interaction response of a type
// Discord accepts, never a 5xx.
func FuzzServeInteraction(f *testing.F) {
	signer := discordtest.NewSigner()
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	one := 1.0
	a, err := New(Config{BotToken: "t", PublicKey: signer.PublicKey(), APIURL: "http://127.0.0.1:1", People: nobody{}, Now: func() time.Time { return now },
		Handler: bot.HandlerFunc(func(_ context.Context, r bot.Request) []bot.Reply { return []bot.Reply{{Text: r.Text}} }),
		Commands: []Command{
			{Name: "request", Example: "/gpu request 1", Options: []Option{{Name: "gpus", Type: OptionInteger, MinValue: &one}, {Name: "class", OneWord: true, Choices: []string{"a"}},
				{Name: "exclusive", Type: OptionBoolean}, {Name: "lease", Required: true, Autocomplete: "lease"}},
				Text: func(v map[string]string) string {
					return "/gpu request " + v["gpus"] + " " + v["class"] + " " + v["exclusive"] + " " + v["lease"]
				}},
		}})
	if err != nil {
		f.Fatal(err)
	}
	button, _ := a.buttonID("/gpu deny L-1")
	approve, _ := a.buttonID("/gpu approve L-1")
	modal, _ := a.sign(modalPrefix, "/gpu deny L-1")
	for _, s := range []string{
		`{"id":"1","type":1}`,
		`{"id":"2","type":2,"member":{"user":{"id":"5"}},"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"gpus","type":4,"value":2},{"name":"lease","type":3,"value":"L-1"}]}]}}`,
		`{"id":"3","type":2,"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"gpus","type":4,"value":1e3}]}]}}`,
		`{"id":"4","type":2,"member":{},"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"gpus","type":99,"value":[1]}]}]}}`,
		`{"id":"5","type":4,"user":{"id":"5"},"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"lease","type":3,"value":"L","focused":true}]}]}}`,
		`{"id":"6","type":4,"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"gpus","type":4,"value":"٣","focused":true}]}]}}`,
		`{"id":"7","type":3,"user":{"id":"5"},"message":{"id":"2"},"data":{"custom_id":"` + button + `","component_type":2}}`,
		`{"id":"8","type":3,"member":{"user":{"id":"6"}},"message":{"id":"2"},"data":{"custom_id":"` + approve + `","component_type":2}}`,
		`{"id":"9","type":5,"user":{"id":"5"},"data":{"custom_id":"` + modal + `","components":[{"type":1,"components":[{"type":4,"custom_id":"reason","value":"\u202eno\u0000"}]}]}}`,
		`{"id":"10","type":5,"data":{"components":[{"type":17,"components":[{"type":9}]}]}}`,
		`{"type":2,"data":null}`, `{"type":3,"data":[]}`, `{"type":9}`, `[]`, `null`, `{"type":2,"data":{"options":[null]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ts := strconv.FormatInt(now.Unix(), 10)
		req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		req.Header.Set("X-Signature-Timestamp", ts)
		req.Header.Set("X-Signature-Ed25519", signer.Signature(ts, body))
		w := httptest.NewRecorder()
		a.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			return
		case http.StatusOK:
		default:
			t.Fatalf("answered %d to %q", w.Code, body)
		}
		var resp struct {
			Type int             `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatalf("answered %q to %q: not JSON: %v", w.Body.Bytes(), body, err)
		}
		if resp.Type < 1 || resp.Type > 12 {
			t.Fatalf("answered %q to %q: no interaction response type Discord knows", w.Body.Bytes(), body)
		}
	})
}
