package discord

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot/internal/httpbody"
)

// Path is where Discord delivers interactions; set it as the application's Interactions
// Endpoint URL (https://HOST/discord/interactions).
const Path = "/discord/interactions"

// Register adds the interactions endpoint to mux.
func (a *Adapter) Register(mux *http.ServeMux) { mux.Handle("POST "+Path, a) }

// ServeHTTP answers one interaction delivered over HTTP: it checks the Ed25519 signature over
// the timestamp and the body and that the timestamp is fresh (anything else gets 401 and no
// further look), answers a PING, and answers everything else in the response itself.
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "interactions are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpbody.Refuse(w, err)
		return
	}
	if !a.verified(r, body) {
		a.log.Warn("refused an unverified Discord request", "remote", r.RemoteAddr)
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	i, err := decodeInteraction(body)
	if err != nil {
		a.log.Warn("refused a malformed interaction", "err", err)
		http.Error(w, "malformed interaction", http.StatusBadRequest)
		return
	}
	resp, sent := a.respond(r.Context(), i, false)
	defer sent()
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(resp); err != nil {
		a.log.Warn("cannot write an interaction's answer", "id", i.ID, "err", err)
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// verified checks the request's signature (with discordgo, over the timestamp and the body) and
// that its timestamp is within MaxSkew of now.
func (a *Adapter) verified(r *http.Request, body []byte) bool {
	if a.pub == nil {
		return false
	}
	ts, err := strconv.ParseInt(r.Header.Get("X-Signature-Timestamp"), 10, 64)
	if err != nil {
		return false
	}
	if d := a.cfg.Now().Sub(time.Unix(ts, 0)); d > a.cfg.MaxSkew || d < -a.cfg.MaxSkew {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return discordgo.VerifyInteraction(r, a.pub)
}
