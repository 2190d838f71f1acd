package policy

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// refused loads the example policy with each old text (in pairs: old, new; each old must be
// there) replaced once, as p.yaml, and returns its problems; it fails the test if the policy loads.
func refused(t *testing.T, pairs ...string) *Error {
	t.Helper()
	src := exampleWith(t)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("the example has no %q", pairs[i])
		}
	}
	_, err := Load([]byte(exampleWith(t, pairs...)), "p.yaml")
	if err == nil {
		t.Fatalf("%q: the policy loads", pairs)
	}
	pe, ok := err.(*Error)
	if !ok {
		t.Fatalf("%q: %v", pairs, err)
	}
	return pe
}

// wantProblem fails the test unless the problems hold one at line that says msg exactly.
func wantProblem(t *testing.T, pe *Error, line int, msg string) {
	t.Helper()
	for _, p := range pe.Problems {
		if p.Line == line && p.Msg == msg {
			return
		}
	}
	t.Errorf("want line %d to say %q; got:\n%v", line, msg, pe)
}

// TestMaxDurationZeroIsSetButTooShort: max_duration: 0 is written, so the refusal does not say it
// is missing: it must be longer than 0.
func TestMaxDurationZeroIsSetButTooShort(t *testing.T) {
	pe := refused(t, "max_duration: 8h", "max_duration: 0")
	wantProblem(t, pe, 16, "class interactive: max_duration must be longer than 0, e.g. max_duration: 8h")
	pe = refused(t, "    max_duration: 8h\n", "")
	wantProblem(t, pe, 9, "class interactive: max_duration is missing, e.g. max_duration: 8h")
	pe = refused(t, "max_duration: 8h", "max_duration: ~")
	wantProblem(t, pe, 16, "class interactive: max_duration is missing, e.g. max_duration: 8h")
}

// TestCurrencyMustBeAnActiveISOCode: three letters are not enough; XYZ is no currency, nor is
// HRK any longer (Croatia pays in EUR), so neither passes, while any active code does, in any case.
func TestCurrencyMustBeAnActiveISOCode(t *testing.T) {
	for _, c := range []string{"XYZ", "hrk", "ABC"} {
		pe := refused(t, "currency: USD", "currency: "+c)
		wantProblem(t, pe, 4, `currency "`+c+`" is not an ISO 4217 currency code (three letters, such as USD, EUR or JPY); e.g. currency: EUR`)
	}
	for _, c := range []string{"eur", "CHF", "kwd", "XOF", "Sle"} {
		p, err := Load([]byte(exampleWith(t, "currency: USD", "currency: "+c)), "p.yaml")
		if err != nil {
			t.Errorf("currency %s: %v", c, err)
		} else if p.Currency != strings.ToUpper(c) {
			t.Errorf("currency %s reads as %q", c, p.Currency)
		}
	}
}

// TestNumbersOutsideTheirRangeAreRefused: a percent over 100, a negative size or price, a quota of
// .nan GPU-hours are each refused at their line with one that works.
func TestNumbersOutsideTheirRangeAreRefused(t *testing.T) {
	for _, c := range []struct {
		old, new string
		line     int
		msg      string
	}{
		{"backend: sim ", "idle: {utilization_below: 150}\nbackend: sim ", 85, "idle.utilization_below is a percent from 0 to 100, not 150; e.g. idle: {utilization_below: 5}"},
		{"backend: sim ", "idle:\n  utilization_below: -1\nbackend: sim ", 86, "idle.utilization_below is a percent from 0 to 100, not -1; e.g. idle: {utilization_below: 5}"},
		{"backend: sim ", "idle: {utilization_below: .nan}\nbackend: sim ", 85, "idle.utilization_below is a percent from 0 to 100, not .nan; e.g. idle: {utilization_below: 5}"},
		{"gpu_memory_gib: 48", "gpu_memory_gib: -48", 12, "class interactive: gpu_memory_gib cannot be negative, not -48; e.g. gpu_memory_gib: 80"},
		{"quota_gib: 4096", "quota_gib: -1", 45, "team vision: storage quota_gib cannot be negative, not -1; e.g. quota_gib: 1024"},
		{"price_per_gpu_hour: 0.90", "price_per_gpu_hour: -0.90", 13, "class interactive: price_per_gpu_hour must be zero or more, not -0.90; e.g. price_per_gpu_hour: 2.50"},
		{"price_per_gpu_hour: 0.90", "price_per_gpu_hour: .inf", 13, "class interactive: price_per_gpu_hour must be zero or more, not .inf; e.g. price_per_gpu_hour: 2.50"},
		{"capacity_share: 0.15", "capacity_share: .nan", 19, "class interactive: capacity_share is a fraction between 0 and 1, not .nan; e.g. capacity_share: 0.15"},
		{"capacity_share: 0.15", "capacity_share: 15", 19, "class interactive: capacity_share is a fraction between 0 and 1, not 15; e.g. capacity_share: 0.15"},
		{"gpu_hours_per_week: 600", "gpu_hours_per_week: .nan", 43, "team vision: quota gpu_hours_per_week must be zero or more, not .nan; e.g. gpu_hours_per_week: 100"},
		{"gpu_hours_per_week: 24", "gpu_hours_per_week: -24", 36, "default_quota: gpu_hours_per_week must be zero or more, not -24; e.g. gpu_hours_per_week: 100"},
		{"interactive: 4, train: 16", "interactive: -4, train: 16", 43, "team vision: quota gpus.interactive cannot be negative, not -4; e.g. gpus: {interactive: 2}"},
	} {
		wantProblem(t, refused(t, c.old, c.new), c.line, c.msg)
	}
	for _, ok := range []string{"0", "100", "2.5"} {
		p, err := Load([]byte(exampleWith(t, "backend: sim ", "idle: {utilization_below: "+ok+"}\nbackend: sim ")), "p.yaml")
		if err != nil {
			t.Errorf("utilization_below: %s: %v", ok, err)
		} else if ok == "2.5" && p.Idle.UtilizationBelow != 2.5 {
			t.Errorf("utilization_below: 2.5 reads %v", p.Idle.UtilizationBelow)
		}
	}
}

// TestDecimalsInWholeNumberFieldsAreRefused: max_gpus: 2.5, a quota of 1.9 GPUs or 1.5 sim nodes
// used to pass as 2 and 1; each is refused at its line with a whole number that works, as is
// "two". A whole number written with a point (2.0) is that number.
func TestDecimalsInWholeNumberFieldsAreRefused(t *testing.T) {
	for _, c := range []struct {
		old, new string
		line     int
		msg      string
	}{
		{"max_gpus: 1  ", "max_gpus: 2.5", 15, "class interactive: max_gpus must be a whole number, not 2.5; e.g. max_gpus: 2"},
		{"max_gpus: 8", "max_gpus: two", 28, `class train: max_gpus must be a whole number, not "two"; e.g. max_gpus: 2`},
		{"interactive: 4, train: 16", "interactive: 1.9, train: 16", 43, "team vision: quota.gpus.interactive must be a whole number, not 1.9; e.g. gpus: {interactive: 2}"},
		{"name: l40s, count: 4", "name: l40s, count: 1.5", 115, "sim node group l40s: count must be a whole number, not 1.5; e.g. count: 4"},
		{"gpu_memory_gib: 48", "gpu_memory_gib: 47.5", 12, "class interactive: gpu_memory_gib must be a whole number, not 47.5; e.g. gpu_memory_gib: 80"},
		{"quota_gib: 4096", "quota_gib: 1e30", 45, "team vision: storage.quota_gib is too large: 1e30; e.g. quota_gib: 1024"},
		{"nvlink_islands: 1}", "nvlink_islands: .5}", 116, "sim node group h100: nvlink_islands must be a whole number, not .5; e.g. nvlink_islands: 1"},
	} {
		wantProblem(t, refused(t, c.old, c.new), c.line, c.msg)
	}
	p, err := Load([]byte(exampleWith(t, "max_gpus: 8", "max_gpus: 8.0")), "p.yaml")
	if err != nil {
		t.Fatalf("max_gpus: 8.0: %v", err)
	}
	if c, _ := p.Class("train"); c.MaxGPUs != 8 {
		t.Errorf("max_gpus: 8.0 reads %d", c.MaxGPUs)
	}
}

// TestExamplesInRefusalsAreOfTheirFieldsType: every example a refusal gives (a field's eg tag,
// and a map's each tag for one of its values) reads back as a value of its field.
func TestExamplesInRefusalsAreOfTheirFieldsType(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var check func(reflect.Type)
	check = func(st reflect.Type) {
		for st.Kind() == reflect.Pointer || st.Kind() == reflect.Slice || st.Kind() == reflect.Map {
			st = st.Elem()
		}
		if st.Kind() != reflect.Struct || st == durationType || seen[st] {
			return
		}
		seen[st] = true
		for i := 0; i < st.NumField(); i++ {
			f := st.Field(i)
			if !f.IsExported() || f.Tag.Get("yaml") == "-" {
				continue
			}
			eg, ok := f.Tag.Lookup("eg")
			if !ok {
				t.Errorf("%s.%s has no eg tag", st.Name(), f.Name)
			}
			v := reflect.New(f.Type)
			dec := yaml.NewDecoder(strings.NewReader(eg))
			dec.KnownFields(true)
			if err := dec.Decode(v.Interface()); err != nil || v.Elem().IsZero() && f.Type.Kind() != reflect.Bool {
				t.Errorf("%s.%s: eg %q does not read as its type: %v", st.Name(), f.Name, eg, err)
			}
			if each, ok := f.Tag.Lookup("each"); ok {
				e := reflect.New(f.Type.Elem())
				if err := yaml.Unmarshal([]byte(each), e.Interface()); err != nil || e.Elem().IsZero() {
					t.Errorf("%s.%s: each %q does not read as its values' type: %v", st.Name(), f.Name, each, err)
				}
			} else if f.Type.Kind() == reflect.Map {
				t.Errorf("%s.%s is a map without an each tag", st.Name(), f.Name)
			}
			check(f.Type)
		}
	}
	check(reflect.TypeOf(Policy{}))
}

// TestUnknownKeysAreNamedWithTheKeyMeant: a key the policy does not know is refused in the
// policy's words, with the known key it is closest to, or else the keys that would be known there.
func TestUnknownKeysAreNamedWithTheKeyMeant(t *testing.T) {
	for _, c := range []struct {
		old, new string
		line     int
		msg      string
	}{
		{"idle_timeout: 30m", "idle_timout: 30m", 17, "class interactive has no key idle_timout; did you mean idle_timeout?"},
		{"timezone:", "time_zone:", 5, "the policy has no key time_zone; did you mean timezone?"},
		{"  timeout: 24h", "  timout: 24h", 77, "approvals has no key timout; did you mean timeout?"},
		{"{partition: train,", "{partiton: train,", 32, "class train: slurm has no key partiton; did you mean partition?"},
		{"max_gpus: 8", "Max_GPUs: 8", 28, "class train has no key Max_GPUs; did you mean max_gpus?"},
		{"gpu_hours_per_week: 600", "gpu_hours: 600", 43, "team vision: quota has no key gpu_hours; did you mean gpu_hours_per_week?"},
		{"resource: nvidia.com/gpu, node_selector: {gpu.acme/class: train}", "resource:nvidia.com/gpu, node_selector: {gpu.acme/class: train}", 33, "class train: kubernetes has no key resource:nvidia.com/gpu; write a space after the colon: resource: nvidia.com/gpu"},
		{"schedule:", "when:", 83, "reports.showback has no key when; its keys are schedule, channel, dm_budget_owners, platform_channel"},
		{"name: h100, count: 2", "name: h100, size: 2", 116, "sim node group h100 has no key size; its keys are name, count, class, gpus, nvlink_islands"},
	} {
		pe := refused(t, c.old, c.new)
		wantProblem(t, pe, c.line, c.msg)
		if len(pe.Problems) != 1 {
			t.Errorf("%s: more than one problem:\n%v", c.new, pe)
		}
	}
}

// TestValuesOfTheWrongKindAreRefusedInThePolicysWords: a text where a list, a map, a number, a
// yes/no or a duration belongs (or the other way round), or a key written twice, is refused at
// its line in the policy's words, not the decoder's, with one that works.
func TestValuesOfTheWrongKindAreRefusedInThePolicysWords(t *testing.T) {
	for _, c := range []struct {
		old, new string
		line     int
		msg      string
	}{
		{"idp_groups: [ai-language]", "idp_groups: grp-genomics", 47, `team language: idp_groups must be a list, not "grp-genomics"; e.g. idp_groups: [grp-genomics]`},
		{"idp_groups: [ai-language]", "idp_groups: ai-language]", 47, `team language: idp_groups must be a list, not "ai-language]"; e.g. idp_groups: [ai-language]`},
		{"data_classes: [public, internal]", "data_classes: public, internal", 44, `team vision: data_classes must be a list, not "public, internal"; e.g. data_classes: [public, internal]`},
		{"fallback_approvers: [platform-leads@acme.example]", "fallback_approvers: {lead: x}", 79, `approvals.fallback_approvers must be a list, not a map; e.g. fallback_approvers: [platform-leads@acme.example]`},
		{"budget_owners: [dana@acme.example]", "budget_owners: [dana@acme.example, [lee]]", 41, `team vision: budget_owners entry 2 must be text, not a list; e.g. budget_owners: [dana@acme.example]`},
		{`slurm: {partition: train, gres: "gpu:h100"}`, "slurm: train", 32, `class train: slurm must be a map, not "train"; e.g. slurm: {partition: train, gres: "gpu:h100"}`},
		{"{interactive: 4, train: 16}", "16", 43, `team vision: quota.gpus must be a map, not 16; e.g. gpus: {notebook: 2}`},
		{"  - name: train\n", "  - name: [train]\n", 22, `class 2: name must be text, not a list; e.g. name: notebook`},
		{"price_per_gpu_hour: 0.90", "price_per_gpu_hour: cheap", 13, `class interactive: price_per_gpu_hour must be a number, not "cheap"; e.g. price_per_gpu_hour: 2.50`},
		{"price_per_gpu_hour: 0.90", `price_per_gpu_hour: "0.90"`, 13, `class interactive: price_per_gpu_hour must be a number, not the text "0.90"; write it without quotes: price_per_gpu_hour: 0.90`},
		{"max_gpus: 8", `max_gpus: "8"`, 28, `class train: max_gpus must be a whole number, not the text "8"; write it without quotes: max_gpus: 8`},
		{"self_approval: false", "self_approval: maybe", 78, `approvals.self_approval must be true or false, not "maybe"; e.g. self_approval: false`},
		{"max_duration: 72h", "max_duration: 3 days-ish", 29, `class train: max_duration "3 days-ish" is not a duration; e.g. max_duration: 8h`},
		{"max_duration: 72h", "max_duration: 9999w", 29, `class train: max_duration "9999w" is too long (10 years at most); e.g. max_duration: 8h`},
		{"idle_grace: 30m", "idle_grace: [30m]", 31, `class train: idle_grace must be a duration, not a list; e.g. idle_grace: 10m`},
		{"    max_duration: 72h\n", "    max_duration: 72h\n    max_gpus: 4\n", 30, `class train: max_gpus is written twice (first at line 28); keep one`},
		{"{interactive: 4, train: 16}", "{interactive: 4, interactive: 16}", 43, `team vision: quota.gpus: interactive is written twice (first at line 43); keep one`},
		{"directory:\n", "directory:\n  - alice@acme.example\n", 104, `directory entry 1 must be a map, not "alice@acme.example"; e.g. - {user: alice@acme.example, groups: [ai-vision]}`},
		{"classes:\n  - name: interactive", "classes: interactive\nclasses2:\n  - name: interactive", 8, `classes must be a list, not "interactive"; e.g. classes: [{name: notebook, max_gpus: 1, max_duration: 8h}]`},
	} {
		wantProblem(t, refused(t, c.old, c.new), c.line, c.msg)
	}
	for _, c := range []struct {
		src  string
		line int
		msg  string
	}{
		{"organization: X\nclasses:\n  - {name: a, max_gpus: 1, max_duration: 1h, slurm: &s {partition: p}}\nteams:\n  - {name: t, idp_groups: *s}\n", 5, "team t: idp_groups must be a list, not a map; e.g. idp_groups: [ai-vision] (through *s, written at line 3)"},
		{"organization: X\nbase: &b {max_gpus: 1.5}\nclasses:\n  - {<<: *b, name: a, max_duration: 1h}\n", 4, "class a: max_gpus must be a whole number, not 1.5; e.g. max_gpus: 2 (through *b, written at line 2)"},
		{"? [organization]\n: X\n", 1, "the policy has a list for a key; its keys are organization, currency, timezone, classes, default_quota, teams, exceptions, approvals, reports, backend, directory, discord, sim, idle, oidc"},
		{"- organization: X\n", 1, "the policy must be a map of keys such as organization: and classes:, not a list; start from docs/quartermaster.example.yaml"},
		{"just words\n", 1, `the policy must be a map of keys such as organization: and classes:, not "just words"; start from docs/quartermaster.example.yaml`},
	} {
		_, err := Load([]byte(c.src), "p.yaml")
		if pe, ok := err.(*Error); !ok {
			t.Errorf("%q: %v", c.src, err)
		} else {
			wantProblem(t, pe, c.line, c.msg)
		}
	}
}

// TestDecoderErrorsInThePolicysWords: what the decoder still finds after the shape check (it
// should find nothing) is said without Go's type names.
func TestDecoderErrorsInThePolicysWords(t *testing.T) {
	for in, want := range map[string]string{
		"field colour not found in type policy.Class":       "no key colour is known here",
		"cannot unmarshal !!str `two` into int":             `"two" must be a whole number here`,
		"cannot unmarshal !!map into []string":              "this value must be a list here",
		"cannot unmarshal !!seq into policy.SlurmMapping":   "this value must be a map here",
		`mapping key "max_gpus" already defined at line 12`: "max_gpus is written twice (first at line 12); keep one",
	} {
		if got := decoderWords(in); got != want {
			t.Errorf("decoderWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAnIndentationSlipIsFoundAtItsLine: yaml reports a line that is indented as no line above
// it at the start of the block it broke (line 8, classes:); the refusal names the line itself and
// the indentation of the lines it could belong with.
func TestAnIndentationSlipIsFoundAtItsLine(t *testing.T) {
	for _, c := range []struct {
		old, new string
		line     int
		msg      string
	}{
		{"    idle_timeout: 30m", "   idle_timeout: 30m", 17, "this line is indented 3 spaces, which matches no block above it (line 16 is at 4; line 9's entry is at 2, its keys at 4); indent it as the keys it belongs with"},
		{"  - name: train", " - name: train", 22, `this list entry is indented 1 space, where YAML expected a line lined up with a block above it (line 21 at 4; line 9's entry at 2, its keys at 4); indent it as the entry at line 9 (2 spaces, its keys at 4): "  - name: train"`},
		{"  timeout: 24h", "   timeout: 24h", 78, "this line is indented 2 spaces, which matches no block above it (line 77 is at 3; line 76 at 0); indent it as the keys it belongs with"},
		{"    idle_timeout: 30m", "      idle_timeout: 30m", 17, "this line is indented 6 spaces, more than line 16 (4), which has its value already; indent it as line 16"},
		{"    storage: {path: /projects/vision", "  storage: {path: /projects/vision", 45, "this line is indented 2 spaces, which matches no block above it (line 44 is at 4; line 39's entry is at 2, its keys at 4); indent it as the keys it belongs with"},
		{"why: More GPUs than", "why: Note: more GPUs than", 59, `the value of why holds ": ", which YAML reads as another key; put it in quotes: why: "Note: more GPUs than the class allows without approval"`},
	} {
		pe := refused(t, c.old, c.new)
		wantProblem(t, pe, c.line, c.msg)
	}
	// A bracket left open is not taken for an indentation slip.
	pe := refused(t, "idp_groups: [ai-vision]", "idp_groups: [ai-vision")
	if strings.Contains(pe.Error(), "indented") {
		t.Errorf("an open bracket: %v", pe)
	}
}

// TestAChannelIsOneWord: a quote left open after a channel swallows the lines after it into the
// channel's name, which used to pass since it starts with #; a channel with a space or a line
// break in it is refused.
func TestAChannelIsOneWord(t *testing.T) {
	pe := refused(t, `channel: "#vision-gpu"`, `channel: "#vision-gpu`)
	wantProblem(t, pe, 42, `team vision: channel "#vision-gpu quota: {gpus…" must be one word, such as "#vision-gpu"; a quote left open runs on into the lines after it`)
	pe = refused(t, `channel: "#gpu-showback"`, `channel: "#gpu showback"`)
	wantProblem(t, pe, 83, `reports.showback.channel "#gpu showback" must be one word, such as "#gpu-showback"`)
}

// A price too large for what it costs to be written (1e308 made every estimate, the catalog and
// the showback read "$+Inf") is refused at its line; the largest price allowed still writes the
// cost of the longest, largest lease as a number.
func TestAPriceTooLargeToWriteIsRefused(t *testing.T) {
	for _, price := range []string{"1e308", "2e9"} {
		wantProblem(t, refused(t, "price_per_gpu_hour: 0.90", "price_per_gpu_hour: "+price), 13,
			"class interactive: price_per_gpu_hour must be at most 1000000000 per GPU-hour, not "+price+"; e.g. price_per_gpu_hour: 2.50")
	}
	p, err := Load([]byte(exampleWith(t, "price_per_gpu_hour: 0.90", "price_per_gpu_hour: 1e9")), "p.yaml")
	if err != nil {
		t.Fatalf("price_per_gpu_hour: 1e9: %v", err)
	}
	c, _ := p.Class("interactive")
	if s := Money("KWD", c.PricePerGPUHour*4096*10*366*24); strings.Contains(s, "Inf") || strings.Contains(s, "NaN") {
		t.Errorf("the longest, largest lease at the highest price costs %s", s)
	}
}

// TestAnUnknownKeyDoesNotHideTheFilesOtherMistakes: a team's misspelled key (budget_owner) was
// the one problem policy check named, though the same file had a class misspelled in a quota and
// a rule that reads a field requests do not have; each came to light only once the one before was
// put right. An unknown key of a class, team or other part is named with the file's other
// mistakes, without those that follow from the key it meant.
func TestAnUnknownKeyDoesNotHideTheFilesOtherMistakes(t *testing.T) {
	pe := refused(t,
		"    budget_owners: [lee@acme.example]", "    budget_owner: [lee@acme.example]",
		"quota: {gpus: {interactive: 2, train: 8}", "quota: {gpus: {interactive: 2, trian: 8}",
		"when: \"'contractors' in user.groups\"", "when: \"'contractors' in user.group\"",
		"    max_gpus: 8\n", "    Max_GPUs: 8\n")
	wantProblem(t, pe, 48, "team language has no key budget_owner; did you mean budget_owners?")
	wantProblem(t, pe, 28, "class train has no key Max_GPUs; did you mean max_gpus?")
	found := map[string]bool{}
	for _, p := range pe.Problems {
		switch {
		case strings.Contains(p.Msg, `"trian"`):
			found["quota"] = true
		case strings.Contains(p.Msg, `exception rule "contractor"`):
			found["rule"] = true
		case strings.Contains(p.Msg, "max_gpus") && !strings.Contains(p.Msg, "Max_GPUs"):
			t.Errorf("a problem that follows from Max_GPUs: %s", p)
		}
	}
	if !found["quota"] || !found["rule"] {
		t.Errorf("the class misspelled in a quota and the rule are not named:\n%v", pe)
	}
}
