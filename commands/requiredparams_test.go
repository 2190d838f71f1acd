package commands

import (
	"strings"
	"testing"
)

// A template's required parameters left out are refused naming every one of them, with an
// example that gives them all (and keeps the user's other words), which is accepted when typed
// back: on /gpu submit and on /gpu request with a template, for every template that has any.
func TestMissingRequiredParametersAreAllInTheExample(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	found := false
	for _, tp := range h.bot.Templates.Catalog.List() {
		var required []string
		for _, p := range tp.Parameters {
			if p.Required {
				required = append(required, p.Name)
			}
		}
		if len(required) == 0 {
			continue
		}
		found = true
		asks := []string{"/gpu submit " + tp.Name, "/gpu request for 1h template " + tp.Name}
		if len(required) > 1 {
			// One of them given: the others are still missing.
			given := required[0] + "=" + tp.ExampleParams()[required[0]]
			asks = append(asks, "/gpu submit "+tp.Name+" "+given, "/gpu request for 1h template "+tp.Name+" "+given)
		}
		for _, ask := range asks {
			r := h.say("kim@orbit.example", ask)
			if !r.Error {
				t.Errorf("%s: accepted without its required parameters: %s", ask, r.Text)
				continue
			}
			i := strings.Index(r.Text, "Example: ")
			if i < 0 {
				t.Errorf("%s: refused with no example: %s", ask, r.Text)
				continue
			}
			msg, ex := r.Text[:i], strings.TrimSpace(r.Text[i+len("Example: "):])
			for _, name := range required {
				if !strings.Contains(ex, " "+name+"=") {
					t.Errorf("%s: the example %q leaves out required %s", ask, ex, name)
				}
				if !strings.Contains(ask, " "+name+"=") && !strings.Contains(msg, name) {
					t.Errorf("%s: the refusal %q does not name missing %s", ask, msg, name)
				}
			}
			if again := h.say("kim@orbit.example", ex); again.Error {
				t.Errorf("%s: its example %q is refused too: %s", ask, ex, again.Text)
			}
		}
	}
	if !found {
		t.Skip("no template of the catalog has a required parameter")
	}
}
