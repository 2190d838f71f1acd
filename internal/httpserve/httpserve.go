// Package httpserve is the HTTP server every Quartermaster process listens with: it closes
// connections that send their headers or bodies too slowly or sit idle, and it reads request
// bodies, before anyone checks a signature or a token, only so many at once.
//
// Anyone who can reach the port can open connections; Slack's, Discord's and the agents'
// requests are authenticated only once their body has arrived. Without limits a client that
// sends a byte every few seconds holds a connection, a goroutine and a buffer for good, and a few
// hundred of them starve the real traffic.
package httpserve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Limits bound what one connection may hold. Zero fields take the defaults.
type Limits struct {
	// ReadHeaderTimeout is how long a client has to send a request's headers.
	ReadHeaderTimeout time.Duration
	// BodyTimeout is how long a client has to send a request's body once its headers are in.
	BodyTimeout time.Duration
	// ReadTimeout bounds reading a whole request, headers and body (a backstop to the two above).
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from its headers to the end of its answer.
	WriteTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its next request.
	IdleTimeout time.Duration
	// MaxBody is the largest request body read; a larger one is answered 413, unless
	// AnswersTooLarge claims it.
	MaxBody int64
	// AnswersTooLarge, when set, says which requests h answers itself when their body is over
	// MaxBody (serve's node agent reports, refused and counted as the ingest refuses any report
	// too large): Guard hands such a request to h with a body that reads nothing and fails with
	// an *http.MaxBytesError, and closes the connection after h's answer, without reading the
	// rest of the body.
	AnswersTooLarge func(r *http.Request) bool
	// MaxBodyReads is how many request bodies are read at once; a request beyond that is
	// answered 503 at once (with Retry-After), before its body is read.
	MaxBodyReads int
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
}

// Defaults.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxBody           = 2 << 20
	DefaultMaxBodyReads      = 64
	DefaultMaxHeaderBytes    = 64 << 10
)

func (l Limits) withDefaults() Limits {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&l.BodyTimeout, DefaultBodyTimeout)
	set(&l.ReadTimeout, DefaultReadTimeout)
	set(&l.WriteTimeout, DefaultWriteTimeout)
	set(&l.IdleTimeout, DefaultIdleTimeout)
	if l.MaxBody <= 0 {
		l.MaxBody = DefaultMaxBody
	}
	if l.MaxBodyReads <= 0 {
		l.MaxBodyReads = DefaultMaxBodyReads
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return l
}

// Server is an http.Server for h with the limits' timeouts, and h behind Guard.
func Server(h http.Handler, l Limits) *http.Server {
	l = l.withDefaults()
	return &http.Server{
		Handler:           Guard(h, l),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// Guard reads each request's body before h sees it: at most l.MaxBodyReads at once (the next is
// answered 503 at once and its connection closed), each within l.BodyTimeout (else 408 and the
// connection closed) and at most l.MaxBody bytes (else 413, or h's own answer to a body too
// large where l.AnswersTooLarge claims the request). h then reads the body from memory. Requests
// without a body pass straight through.
func Guard(h http.Handler, l Limits) http.Handler {
	l = l.withDefaults()
	slots := make(chan struct{}, l.MaxBodyReads)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		// hangUp answers without reading what is left of the body: the connection is closed
		// after the answer instead of waiting for the rest.
		hangUp := func() {
			_ = rc.SetReadDeadline(time.Now())
			w.Header().Set("Connection", "close")
		}
		tooLarge := func() {
			hangUp()
			if l.AnswersTooLarge != nil && l.AnswersTooLarge(r) {
				// A copy: the server still finds the request's own body unread, and so closes the
				// connection as it does after its own 413, letting the client read the answer.
				r2 := r.WithContext(r.Context())
				r2.Body = tooLargeBody{&http.MaxBytesError{Limit: l.MaxBody}}
				h.ServeHTTP(w, r2)
				return
			}
			http.Error(w, fmt.Sprintf("request body larger than %d bytes", l.MaxBody), http.StatusRequestEntityTooLarge)
		}
		if r.ContentLength > l.MaxBody {
			tooLarge()
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			hangUp()
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many requests are sending their bodies at once; try again in a second", http.StatusServiceUnavailable)
			return
		}
		_ = rc.SetReadDeadline(time.Now().Add(l.BodyTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.MaxBody))
		<-slots
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				tooLarge()
				return
			}
			hangUp()
			http.Error(w, "the request body did not arrive in time", http.StatusRequestTimeout)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}

// tooLargeBody is the body h reads of a request Guard found too large: nothing, and the error.
type tooLargeBody struct{ err error }

func (b tooLargeBody) Read([]byte) (int, error) { return 0, b.err }
func (tooLargeBody) Close() error               { return nil }
