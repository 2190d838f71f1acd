package policy

import (
	"strconv"
	"testing"
)

// TestEachRefusalGivesAnExampleThatWorks: a refusal of the catalog, the backend, the simulated
// nodes, the directory, the oidc scopes or the teams' storage names the field at its line, quotes
// the value as written, and gives an example that works, as the other refusals do.
func TestEachRefusalGivesAnExampleThatWorks(t *testing.T) {
	for _, c := range []struct {
		old, new, at, msg string
	}{
		{"isolation: exclusive", "isolation: Exclusive", "isolation: Exclusive",
			`class train: isolation must be shared or exclusive, in lower case, not "Exclusive"; e.g. isolation: exclusive`},
		{"isolation: exclusive", "isolation: private", "isolation: private",
			`class train: isolation must be shared or exclusive, not "private"; e.g. isolation: shared`},
		{"max_gpus: 8", "max_gpus: 0", "max_gpus: 0", "class train: max_gpus must be at least 1, not 0; e.g. max_gpus: 1"},
		{"max_gpus: 8", "max_gpus: -2", "max_gpus: -2", "class train: max_gpus must be at least 1, not -2; e.g. max_gpus: 1"},
		{"    max_gpus: 8\n", "", "  - name: train", "class train: max_gpus is missing; e.g. max_gpus: 1"},
		{"{user: maya@acme.example,", "{user: maya,", "{user: maya,",
			`directory entry 6 needs a user written as an email address, not "maya"; e.g. {user: maya@acme.example, groups: [ai-language]}`},
		{"backend: sim ", "backend: Slurm ", "backend: Slurm",
			`backend must be sim, slurm or kubernetes, in lower case, not "Slurm"; e.g. backend: slurm`},
		{"backend: sim ", "backend: pbs ", "backend: pbs",
			`backend must be sim, slurm or kubernetes, not "pbs"; e.g. backend: slurm`},
		{"name: h100, count: 2", "name: h100, count: 0", "name: h100, count: 0",
			"sim node group h100: count must be from 1 to 1000, not 0; e.g. count: 2"},
		{"name: h100, count: 2, class: train, gpus: 8", "name: h100, count: 2, class: train, gpus: 80", "gpus: 80",
			"sim node group h100: gpus must be from 1 to 64, not 80; e.g. gpus: 8"},
		{"name: h100, count: 2, class: train, gpus: 8", "name: h100, class: train, gpus: 8", "name: h100, class: train",
			"sim node group h100: count is missing; e.g. count: 2"},
		{"gpus: 8, nvlink_islands: 1}", "gpus: 8, nvlink_islands: 9}", "nvlink_islands: 9",
			"sim node group h100: nvlink_islands must be from 1 to its 8 GPUs, not 9; e.g. nvlink_islands: 8"},
		{"gpus: 8, nvlink_islands: 1}", "gpus: 8, nvlink_islands: -1}", "nvlink_islands: -1",
			"sim node group h100: nvlink_islands must be from 1 to its 8 GPUs, not -1; e.g. nvlink_islands: 1"},
		{"  recheck: 24h\n", "  recheck: 24h\n  scopes: [openid, \"read write\"]\n", "scopes:",
			`oidc.scopes: scope "read write" is not one word; write each scope as an entry of its own, e.g. scopes: [openid, email, profile]`},
	} {
		src := exampleWith(t, c.old, c.new)
		wantProblem(t, refused(t, c.old, c.new), lineOf(t, src, c.at), c.msg)
	}
}

// TestAClassOrTeamDefinedTwiceSaysWhereAndWhatWorks: the second definition is refused at its
// line, naming the first one's, with a name that would be its own.
func TestAClassOrTeamDefinedTwiceSaysWhereAndWhatWorks(t *testing.T) {
	pairs := []string{"  - name: train\n", "  - name: interactive\n"}
	src := exampleWith(t, pairs...)
	pe := refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, src, "  - name: interactive\n    description: Exclusive"),
		`class "interactive" is defined twice (first at line `+strconv.Itoa(lineOf(t, src, "  - name: interactive"))+`); keep one, or give this one a name of its own, e.g. name: interactive-2`)

	pairs = []string{"  - name: language\n", "  - name: vision\n"}
	src = exampleWith(t, pairs...)
	pe = refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, src, "  - name: vision\n    idp_groups: [ai-language]"),
		`team "vision" is defined twice (first at line `+strconv.Itoa(lineOf(t, src, "  - name: vision"))+`); keep one, or give this one a name of its own, e.g. name: vision-2`)
}

// TestStorageSharedByTwoTeamsGivesADirectoryThatWorks: a team whose storage is another's, or lies
// inside or holds another's, is given a directory of its own that overlaps no other team's.
func TestStorageSharedByTwoTeamsGivesADirectoryThatWorks(t *testing.T) {
	for path, msg := range map[string]string{
		"/projects/vision":       "teams vision and language both have storage /projects/vision; each team needs a directory of its own, e.g. path: /projects/language",
		"/projects/vision/audio": "the storage /projects/vision/audio of team language lies inside /projects/vision of team vision; give each team a directory of its own, e.g. path: /projects/language",
		"/projects":              "the storage /projects of team language holds /projects/vision of team vision; give each team a directory of its own, e.g. path: /language",
	} {
		pairs := []string{"storage: {path: /projects/language,", "storage: {path: " + path + ","}
		src := exampleWith(t, pairs...)
		wantProblem(t, refused(t, pairs...), lineOf(t, src, "storage: {path: "+path+", quota_gib: 2048"), msg)
	}
}

// TestNVLinkIslandsSplitTheGPUsEvenly: nvlink_islands splits a node's GPUs evenly, so a number of
// islands that does not divide its GPUs (4 islands of 6 GPUs) is refused at its line with the
// nearest numbers that do, rather than accepted and made into fewer islands than asked.
func TestNVLinkIslandsSplitTheGPUsEvenly(t *testing.T) {
	for _, c := range []struct{ gpus, islands, eg string }{
		{"6", "4", "nvlink_islands: 3 or nvlink_islands: 6"},
		{"5", "4", "nvlink_islands: 1 or nvlink_islands: 5"},
		{"8", "3", "nvlink_islands: 2 or nvlink_islands: 4"},
	} {
		pairs := []string{"gpus: 8, nvlink_islands: 1}", "gpus: " + c.gpus + ", nvlink_islands: " + c.islands + "}"}
		src := exampleWith(t, pairs...)
		wantProblem(t, refused(t, pairs...), lineOf(t, src, pairs[1]),
			"sim node group h100: nvlink_islands "+c.islands+" does not split its "+c.gpus+" GPUs evenly; e.g. "+c.eg)
	}
	for _, ok := range []string{"gpus: 6, nvlink_islands: 3}", "gpus: 8, nvlink_islands: 8}", "gpus: 5, nvlink_islands: 1}"} {
		if _, err := Load([]byte(exampleWith(t, "gpus: 8, nvlink_islands: 1}", ok)), "p.yaml"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestAClassDefinedTwiceIsListedOnceInAHint: a class name unknown to the catalog is answered with
// the catalog's classes, each once, even where one is defined twice (refused on its own).
func TestAClassDefinedTwiceIsListedOnceInAHint(t *testing.T) {
	src := exampleWith(t, "  - name: train\n", "  - name: interactive\n", "class: train, gpus: 8", "class: zzz, gpus: 8")
	_, err := Load([]byte(src), "p.yaml")
	pe, ok := err.(*Error)
	if !ok {
		t.Fatalf("want a refusal, got %v", err)
	}
	wantProblem(t, pe, lineOf(t, src, "class: zzz"), `sim node group h100: class "zzz" is not in the catalog; its classes are interactive`)
}
