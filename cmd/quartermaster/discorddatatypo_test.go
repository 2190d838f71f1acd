package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// On Discord, a request naming a data class no team has, a typo of one the policy knows, is
// answered with the class likely meant and the request asked with it, written as Discord takes
// it (data:field), as are the refusal's hint and example. (This policy has no rule about data
// classes: the lease is granted, and the reply says how to end it.)
func TestDiscordPointsOutADataClassTypo(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "glen.yaml")
	if err := os.WriteFile(path, []byte(glenPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newDiscordEnvWith(t, commonFlags{db: storetest.SQLite(t), policy: path})
	text := e.command(dAlice, "request", opt("gpus", 1), opt("class", "loft"), opt("duration", "2h"), opt("data", "fild")).Text()
	for _, want := range []string{`No team has data class "fild"; did you mean field?`, "/gpu request gpus:1 class:loft duration:2h data:field", "/gpu release lease:L-1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the reply %q does not say %q", text, want)
		}
	}
	text = e.command(dAlice, "request", opt("gpus", 1), opt("class", "lofty"), opt("duration", "2h"), opt("data", "fild")).Text()
	if !strings.Contains(text, "did you mean field?") || !strings.Contains(text, "Example: /gpu request gpus:1 class:loft duration:2h data:field") {
		t.Errorf("the refusal %q; want it to ask did you mean field?, with the request of data:field as its example", text)
	}
}
