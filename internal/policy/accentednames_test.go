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

// TestAClassRenamedForItsAccentIsTheClassItsReferencesName: a class named "fér", refused with
// `write "fer"`, also had every quota and sim node group naming fer refused, each with "did you
// mean 'fér'?", the name just refused. Those references are right once the class is renamed as
// told, so the class's own line is the one problem.
func TestAClassRenamedForItsAccentIsTheClassItsReferencesName(t *testing.T) {
	src := "organization: X\nclasses:\n  - {name: cuivre, max_gpus: 1, max_duration: 1h}\n  - {name: \"fér\", max_gpus: 1, max_duration: 1h}\n" +
		"default_quota: {gpus: {cuivre: 1, fer: 0}}\nteams:\n  - {name: vision, idp_groups: [g], quota: {gpus: {fer: 2}}}\n" +
		"sim: {nodes: [{name: cu, count: 1, class: cuivre, gpus: 1}, {name: fe, count: 1, class: fer, gpus: 1}]}\n"
	_, err := Load([]byte(src), "p.yaml")
	pe, ok := err.(*Error)
	if !ok || len(pe.Problems) != 1 || !hasProblem(pe, 4, `class name "fér" must be lower case letters a to z, digits, - or _ (starting with a letter, ending with a letter or digit, 40 at most); write "fer"`) {
		t.Fatalf("%v; want the class's own line alone", err)
	}
	if _, err := Load([]byte(strings.Replace(src, `"fér"`, "fer", 1)), "p.yaml"); err != nil {
		t.Errorf("renamed as told, the policy does not load: %v", err)
	}
}

// TestADataClassWithAnAccentIsToldItsLettersAreAToZ: data class "intérne" was refused as not
// "one word of letters", which é is. The refusal says the letters are a to z, and names the data
// class to write with each letter without its accent.
func TestADataClassWithAnAccentIsToldItsLettersAreAToZ(t *testing.T) {
	src := "organization: X\nclasses:\n  - {name: gpu, max_gpus: 1, max_duration: 1h}\nteams:\n  - {name: vision, idp_groups: [g], data_classes: [ouvert, \"intérne\"]}\nsim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}\n"
	_, err := Load([]byte(src), "p.yaml")
	pe, ok := err.(*Error)
	if !ok || !hasProblem(pe, 5, `team vision: data class "intérne" must be one word of the letters a to z, digits, -, _ or . (40 at most), as a request names it (data interne); write "interne"`) {
		t.Errorf("%v", err)
	}
}

// TestANameWithSignsIsSuggestedWithOneHyphenForThem: a team named "Søk-&-Analyse" was refused
// with `write "sok---analyse"`, each sign between the hyphens typed around it becoming one more
// hyphen. A run of signs and the hyphens beside them is one hyphen in the name to write.
func TestANameWithSignsIsSuggestedWithOneHyphenForThem(t *testing.T) {
	for name, want := range map[string]string{
		"Søk-&-Analyse":  "sok-analyse",
		"R & D":          "r-d",
		"ML / Vision!":   "ml-vision",
		"Þóra's team":    "thora-s-team",
		"data--lab (EU)": "data--lab-eu",
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
