package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
)

// TestSubmitWordsAreTheKeysSubmitReads: the template loader refuses as parameter names exactly
// the key= words /gpu submit reads itself, so a template parameter is never swallowed by submit.
func TestSubmitWordsAreTheKeysSubmitReads(t *testing.T) {
	s, _ := Lookup("submit")
	keys := map[string]bool{}
	for _, p := range s.Params {
		if k, ok := strings.CutSuffix(p.Keyword, "="); ok {
			keys[k] = true
			if _, ok := templates.SubmitWords[k]; !ok {
				t.Errorf("/gpu submit reads %s= itself, but a template parameter may be named %s", k, k)
			}
		}
	}
	for k := range templates.SubmitWords {
		if !keys[k] {
			t.Errorf("templates refuse a parameter named %s, which /gpu submit does not read", k)
		}
	}
}
