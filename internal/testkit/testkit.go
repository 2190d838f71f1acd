// Package testkit holds the small helpers that the tests of several packages share.
package testkit

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writes (a logger's, a child process's output)
// and reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what has been written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago, for a server the test starts
// in another process.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ShownCharacters are characters as a chat platform shows them, each of several code points, by
// what makes them so: a text cut to a platform's limit must fall between them, never inside one.
var ShownCharacters = map[string]string{
	"a ZWJ sequence":        "👩\u200d🔬",
	"a rainbow flag":        "🏳\ufe0f\u200d🌈",
	"a country's flag":      "🇳🇵",
	"a skin tone":           "👍🏽",
	"a combining mark":      "e\u0301",
	"a keycap":              "1\ufe0f\u20e3",
	"two marks on a letter": "a\u0308\u0323",
}

// OnlyCopiesOf reports whether s is nothing but copies of c.
func OnlyCopiesOf(s, c string) bool { return strings.ReplaceAll(s, c, "") == "" }
