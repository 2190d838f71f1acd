package templates

import (
	"errors"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	qmtemplates "github.com/acme/quartermaster/templates"
)

// withDefinition is the embedded layouts plus one definition file.
func withDefinition(t *testing.T, file, body string) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	for _, f := range []string{layoutSlurm, layoutKubernetes, defaultsFile} {
		data, err := fs.ReadFile(qmtemplates.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		m[f] = &fstest.MapFile{Data: data}
	}
	m[file] = &fstest.MapFile{Data: []byte(body)}
	return m
}

const goodDefinition = `name: hello
version: 1
title: Hello
description: Says hello.
tags: [test]
kind: batch
example: greeting=hi
parameters:
  - name: greeting
    type: string
    default: hello
    description: What to say.
run: |
  echo {{shq .P.greeting}}
`

func TestLoadGood(t *testing.T) {
	c, err := Load(withDefinition(t, "hello.yaml", goodDefinition))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.List()) != 1 || c.List()[0].Name != "hello" {
		t.Fatalf("List = %v", c.List())
	}
}

// TestLoadErrors: a malformed definition is an error naming the file and the line.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"yaml syntax", strings.Replace(goodDefinition, "tags: [test]", "tags: [test", 1),
			"hello.yaml:5: did not find expected ',' or ']'"},
		{"unknown field", strings.Replace(goodDefinition, "kind: batch", "kind: batch\ngpu: 1", 1),
			`hello.yaml:7: unknown field "gpu"`},
		{"wrong type", strings.Replace(goodDefinition, "version: 1", "version: one", 1),
			"hello.yaml:2: cannot unmarshal !!str `one` into int"},
		{"bad kind", strings.Replace(goodDefinition, "kind: batch", "kind: service", 1),
			`hello.yaml:6: kind must be interactive or batch, not "service"`},
		{"name and file", strings.Replace(goodDefinition, "name: hello", "name: hi", 1),
			`hello.yaml:1: name "hi" must match the file name hello.yaml`},
		{"parameter type", strings.Replace(goodDefinition, "type: string", "type: float", 1),
			`hello.yaml:10: type must be int, string, bool, duration, enum or path, not "float"`},
		{"bad bound", strings.Replace(goodDefinition, "    type: string\n", "    type: int\n    min: x\n", 1),
			`hello.yaml:11: min: "x" is not a whole number`},
		{"bad default", strings.Replace(goodDefinition, "    type: string\n    default: hello", "    type: int\n    default: hello", 1),
			`hello.yaml:11: default "hello" does not pass its own limits: greeting must be a whole number, not "hello"`},
		{"missing block key", "name: hello\nversion: 1\nparameters:\n  - name: x\n - name: y\n",
			"hello.yaml:"},
		{"template syntax", strings.Replace(goodDefinition, "echo {{shq .P.greeting}}", "echo hi\n  echo {{shq .P.greeting}", 1),
			`hello.yaml:15: run: bad character U+007D '}'`},
		{"template function", strings.Replace(goodDefinition, "echo {{shq .P.greeting}}", "echo {{shout .P.greeting}}", 1),
			`hello.yaml:14: run: function "shout" not defined`},
		{"missing key at render", strings.Replace(goodDefinition, "echo {{shq .P.greeting}}", "echo hi\n  echo {{.P.greting}}", 1),
			`hello.yaml:15: run: executing "run" at <.P.greting>: map has no entry for key "greting"`},
		{"example does not parse", strings.Replace(goodDefinition, "example: greeting=hi", "example: greting=hi", 1),
			`hello.yaml:7: example "greting=hi" does not parse: Unknown parameter "greting" (did you mean greeting?)`},
		{"no run", strings.Replace(goodDefinition, "run: |\n  echo {{shq .P.greeting}}\n", "run: \"\"\n", 1),
			`hello.yaml:13: run is required`},
		{"interactive without connect", strings.Replace(goodDefinition, "kind: batch", "kind: interactive", 1),
			`hello.yaml:6: an interactive template says how to connect`},
		{"parameter named like a submit keyword", strings.Replace(strings.Replace(goodDefinition, "- name: greeting", "- name: team", 1), "greeting", "team", -1),
			`hello.yaml:9: parameter name "team" is a word /gpu submit reads itself (team=T charges a team), so the parameter could never be given; rename it, e.g. name: team_name`},
		{"multi-node without nnodes", strings.Replace(goodDefinition, "kind: batch", "kind: batch\nmulti_node: true", 1),
			`hello.yaml:7: a multi-node template declares an int parameter "nnodes"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(withDefinition(t, "hello.yaml", tc.body))
			if err == nil {
				t.Fatal("loaded")
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Errorf("%v is not a *LoadError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n got: %v\nwant: %s…", err, tc.want)
			}
		})
	}
}

func TestLoadDuplicateAndMissingLayout(t *testing.T) {
	m := withDefinition(t, "hello.yaml", goodDefinition).(fstest.MapFS)
	delete(m, layoutSlurm)
	if _, err := Load(m); err == nil || !strings.HasPrefix(err.Error(), layoutSlurm+": ") {
		t.Errorf("missing layout: %v", err)
	}
	m = withDefinition(t, "hello.yaml", goodDefinition).(fstest.MapFS)
	m["broken.yaml"] = &fstest.MapFile{Data: []byte("name: broken\nversion: 1\n  title: x\n")}
	if _, err := Load(m); err == nil || !strings.HasPrefix(err.Error(), "broken.yaml:3: ") {
		t.Errorf("broken file: %v", err)
	}
}

func TestHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"train.py":      "train.py",
		"":              "''",
		"a b":           "'a b'",
		"it's":          `'it'"'"'s'`,
		"$(reboot)":     "'$(reboot)'",
		"~/x":           "'~/x'",
		"a=b,c:d@e%f+g": "a=b,c:d@e%f+g",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	for d, want := range map[string]string{"90s": "00:02:00", "4h": "04:00:00", "72h": "3-00:00:00", "25h30m": "1-01:30:00"} {
		if got := slurmTime(mustDuration(t, d)); got != want {
			t.Errorf("slurmTime(%s) = %s, want %s", d, got, want)
		}
	}
	for in, want := range map[string]string{
		"nvcr.io/nvidia/pytorch:24.05-py3": "nvcr.io#nvidia/pytorch:24.05-py3",
		"localhost/x:1":                    "localhost#x:1",
		"ubuntu:22.04":                     "ubuntu:22.04",
		"rayproject/ray:2.24.0":            "rayproject/ray:2.24.0",
	} {
		if got := enrootImage(in); got != want {
			t.Errorf("enrootImage(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"L-42": "qm-l-42-x", "lease_7.b": "qm-lease-7-b-x"} {
		if got := objectName("qm", in, "x"); got != want {
			t.Errorf("objectName(%s) = %s, want %s", in, got, want)
		}
	}
	// Installations sharing a Kubernetes cluster name their objects after their instance.
	for instance, want := range map[string]string{"": "qm-l-42-x", "qm": "qm-l-42-x", "prod": "prod-l-42-x", "staging-2": "staging-2-l-42-x"} {
		if got := KubernetesName(instance, "L-42", "x"); got != want {
			t.Errorf("KubernetesName(%q) = %s, want %s", instance, got, want)
		}
	}
	if a, b := KubernetesName("Staging_2", "L-42", "x"), KubernetesName("staging-2", "L-42", "x"); a == b || !strings.HasPrefix(a, "staging-2-") {
		t.Errorf("instances Staging_2 and staging-2 name their L-42 %s and %s", a, b)
	}
	// A Service's name begins with a letter: an instance that begins with a digit (2026-prod, a
	// label value the backend takes) is written after "qm-", with its hash.
	for _, instance := range []string{"2026-prod", "7", "-x"} {
		if got := KubernetesName(instance, "L-42", "jupyterlab"); !regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`).MatchString(got) || len(got) > 52 {
			t.Errorf("KubernetesName(%q) = %s, not a Service name", instance, got)
		}
	}
	if a, b := KubernetesName("2026-prod", "L-42", "x"), KubernetesName("qm-2026-prod", "L-42", "x"); a == b {
		t.Errorf("instances 2026-prod and qm-2026-prod name their L-42 %s and %s", a, b)
	}
	if got := KubernetesName(strings.Repeat("Q", 63), "L-123456", "checkpoint-training"); len(got) > 52 || !strings.Contains(got, "-l-123456-") {
		t.Errorf("KubernetesName of a long instance: %s", got)
	}
	if got := objectName("qm", strings.Repeat("a", 40), "checkpoint-training"); len(got) > 52 {
		t.Errorf("objectName too long: %s", got)
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestEmptyListEntryInATemplateIsRefused: an empty entry in any list of a template definition (a
// bare "-", ~ or a blank text, in parameters, tags or a parameter's own lists) is refused with its
// file, line and list, instead of loading as a nameless parameter or tag.
func TestEmptyListEntryInATemplateIsRefused(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"a parameter", "parameters:\n", "parameters:\n  -\n", "hello.yaml:9: parameters entry 1 is empty"},
		{"a null parameter", "parameters:\n", "parameters:\n  - ~\n", "hello.yaml:9: parameters entry 1 is empty"},
		{"a tag", "tags: [test]", "tags: [test, ~]", "hello.yaml:5: tags entry 2 is empty"},
		{"a blank tag", "tags: [test]", "tags: ['  ', test]", "hello.yaml:5: tags entry 1 is empty"},
		{"a parameter's choice", "    type: string\n    default: hello\n", "    type: enum\n    choices: [hello, ~]\n    default: hello\n", "hello.yaml:11: parameters.1.choices entry 2 is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(goodDefinition, tc.from) {
				t.Fatalf("the definition lacks %q", tc.from)
			}
			_, err := Load(withDefinition(t, "hello.yaml", strings.Replace(goodDefinition, tc.from, tc.to, 1)))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v; want %s…", err, tc.want)
			}
		})
	}
}

// The name a refusal of a parameter named like a /gpu submit key suggests loads.
func TestTheParameterNameSuggestedForASubmitWordLoads(t *testing.T) {
	for k := range SubmitWords {
		body := strings.Replace(strings.Replace(goodDefinition, "- name: greeting", "- name: "+k+"_name", 1), "greeting", k+"_name", -1)
		if _, err := Load(withDefinition(t, "hello.yaml", body)); err != nil {
			t.Errorf("%s_name: %v", k, err)
		}
	}
}
