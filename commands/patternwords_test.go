package commands

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// gaugeTemplate is a template of the test's own with two patterned parameters: station says in
// words what its pattern admits, buoy does not.
const gaugeTemplate = `name: gauge-fit
version: 1
title: Gauge fit
description: Fits a tide model to one station's gauge readings.
tags: [test]
kind: batch
resources: {gpus: 1, max_gpus: 4, cpus_per_gpu: 1, memory_gib_per_gpu: 1, shm_gib: 1}
example: station=KW-042
parameters:
  - name: station
    type: string
    default: KW-001
    pattern: "[A-Z]{2}-[0-9]{3}"
    pattern_description: a station code, two capital letters, a dash and three digits (like KW-042)
    description: The gauge station.
  - name: buoy
    type: string
    default: b1
    pattern: "b[0-9]+"
    description: The buoy whose readings calibrate the fit.
run: |
  echo {{shq .P.station}} {{shq .P.buoy}}
`

// heronGauge is the bot on heronPolicy with the layouts and gauge-fit alone.
func heronGauge(t *testing.T) *harness {
	t.Helper()
	h := heronOn(t)
	files := fstest.MapFS{"gauge-fit.yaml": {Data: []byte(gaugeTemplate)}}
	for _, p := range []string{"layouts"} {
		err := fs.WalkDir(qmtemplates.FS, p, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(qmtemplates.FS, p)
			files[p] = &fstest.MapFile{Data: b}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cat, err := templates.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	return h
}

// A template parameter's value refused for its pattern is refused in words a researcher reads,
// not as the regular expression; /gpu template lists the parameter with the same words, and the
// refusal's example, typed back, runs.
func TestAPatternRefusalInChatSaysWhatTheTemplateListSays(t *testing.T) {
	h := heronGauge(t)
	const una = "una@heron.example"
	show := h.say(una, "/gpu template gauge-fit")
	if show.Error {
		t.Fatalf("/gpu template gauge-fit: %s", show.Text)
	}
	for _, tc := range []struct{ ask, words, example string }{
		{"/gpu submit gauge-fit station=kw42", "a station code, two capital letters, a dash and three digits (like KW-042)", "/gpu submit gauge-fit station=KW-042"},
		{"/gpu submit gauge-fit buoy=b;7", "like b1", "/gpu submit gauge-fit buoy=b1"},
	} {
		r := h.say(una, tc.ask)
		if !r.Error || !strings.Contains(r.Text, "must be "+tc.words) || strings.Contains(r.Text, "[0-9]") || strings.Contains(r.Text, "must match") {
			t.Errorf("%s: %q; want it refused as not %s, without the pattern", tc.ask, r.Text, tc.words)
		}
		if !strings.Contains(show.Text, "which must be "+tc.words) {
			t.Errorf("/gpu template gauge-fit: %q; want it to say the parameter must be %s, as the refusal does", show.Text, tc.words)
		}
		if got := exampleIn(t, r); got != tc.example {
			t.Errorf("%s: example %q, want %q", tc.ask, got, tc.example)
		}
		typedBack(t, h, una, tc.ask, tc.example, false)
	}
}
