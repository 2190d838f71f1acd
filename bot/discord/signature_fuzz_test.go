package discord

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// FuzzSignature: an interaction is let through only when its X-Signature-Ed25519 is the
// application key's signature over its timestamp and body and the timestamp is within MaxSkew of
// now. Any other signature or timestamp (another key, another body, malformed, stale, in the
// future, out of int64's range) is answered 401.
func FuzzSignature(f *testing.F) {
	signer, other := discordtest.NewSigner(), discordtest.NewSigner()
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	a, err := New(Config{BotToken: "t", PublicKey: signer.PublicKey(), APIURL: "http://127.0.0.1:1", People: nobody{}, Now: func() time.Time { return now },
		Handler: bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply { return nil })})
	if err != nil {
		f.Fatal(err)
	}
	ping := []byte(`{"id":"1","type":1}`)
	f.Add(ping, int64(0), "", "", uint8(0))
	f.Add(ping, int64(300), "", "", uint8(0))
	f.Add(ping, int64(-301), "", "", uint8(0))
	f.Add(ping, int64(1<<62), "", "", uint8(0))
	f.Add([]byte(`{"type":2}`), int64(0), "", "", uint8(0))
	f.Add(ping, int64(0), "00", strconv.FormatInt(now.Unix(), 10), uint8(1))
	f.Add(ping, int64(0), "zz", "+1", uint8(1))
	f.Add(ping, int64(0), "", "", uint8(2))
	f.Add(ping, int64(0), "", "", uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, offset int64, sig, ts string, mode uint8) {
		at := now.Unix() + offset
		if offset > 0 && at < now.Unix() || offset < 0 && at > now.Unix() {
			return // wraps around int64
		}
		valid := false
		switch mode % 4 {
		case 0: // signed with the key at now+offset
			ts = strconv.FormatInt(at, 10)
			sig = signer.Signature(ts, body)
			valid = offset >= -300 && offset <= 300
		case 1: // headers as given
			if sig == signer.Signature(ts, body) {
				return
			}
		case 2: // signed with another key
			ts = strconv.FormatInt(now.Unix(), 10)
			sig = other.Signature(ts, body)
		case 3: // signed over another body
			ts = strconv.FormatInt(now.Unix(), 10)
			sig = signer.Signature(ts, append(append([]byte{}, body...), 'x'))
		}
		req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		req.Header["X-Signature-Timestamp"] = []string{ts}
		req.Header["X-Signature-Ed25519"] = []string{sig}
		w := httptest.NewRecorder()
		a.ServeHTTP(w, req)
		if valid != (w.Code != http.StatusUnauthorized) {
			t.Fatalf("signed %q at %q over %q (mode %d): HTTP %d", sig, ts, body, mode%4, w.Code)
		}
	})
}
