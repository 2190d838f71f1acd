package policy

import (
	"strings"
	"testing"
)

// TestAccentedNamesAreSuggestedWithTheirLetters: a team or class named in French, Wolof or
// German ("équipe-vision", "santé-données", "straße") was refused, which names must be as
// Kubernetes labels carry them, with a name to write that had lost its accented letters:
// "quipe-vision", "sant--donn-es". The name to write keeps each letter without its accent, and
// loads.
func TestAccentedNamesAreSuggestedWithTheirLetters(t *testing.T) {
	for name, want := range map[string]string{
		"équipe-vision": "equipe-vision",
		"santé-données": "sante-donnees",
		"Ñandú_Øre":     "nandu_ore",
		"straße":        "strasse",
		"cœur-æther":    "coeur-aether",
		"łódź":          "lodz",
	} {
		src := "organization: X\nclasses:\n  - {name: gpu, max_gpus: 1, max_duration: 1h}\nteams:\n  - {name: \"" + name + "\", idp_groups: [g]}\nsim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}\n"
		_, err := Load([]byte(src), "p.yaml")
		pe, ok := err.(*Error)
		msg := `team name "` + name + `" must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most); write "` + want + `"`
		if !ok || !hasProblem(pe, 5, msg) {
			t.Errorf("%q: %v; want line 5 to say %q", name, err, msg)
			continue
		}
		if _, err := Load([]byte(strings.ReplaceAll(src, "\""+name+"\"", want)), "p.yaml"); err != nil {
			t.Errorf("%q: the name suggested, %s, does not load: %v", name, want, err)
		}
	}
}
