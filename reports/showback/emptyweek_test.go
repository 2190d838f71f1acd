package showback_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/reports/showback"
)

// A week in which nobody held a GPU: the chart's subtitle read "0.00 GPU-hours, 0 JPY, n/a idle",
// and the text report "0.00 idle GPU-hours (n/a)", a share of nothing a reader cannot make sense
// of. Both say that no GPUs were used, as the chat reports of such a week do ("used no GPUs").
func TestAnEmptyWeekSaysNoGPUsWereUsed(t *testing.T) {
	for name, load := range map[string]func(*testing.T) *showback.Report{
		"yen": func(t *testing.T) *showback.Report {
			p := loadOther(t)
			w, _ := showback.ParseWeek("2026-W48", showback.Week{})
			return showback.Build(showback.Input{Policy: p, Week: w, Now: w.Start(p.Location).AddDate(0, 0, 8)})
		},
		"dinars": func(t *testing.T) *showback.Report {
			p := loadAdelaide(t)
			w, _ := showback.ParseWeek("2026-W47", showback.Week{})
			return showback.Build(showback.Input{Policy: p, Week: w, Now: w.Start(p.Location).AddDate(0, 0, 8)})
		},
	} {
		r := load(t)
		svg, err := r.SVG()
		if err != nil {
			t.Fatal(err)
		}
		sub := r.Span() + " (" + r.TimeZone + "): no GPUs used"
		if !strings.Contains(string(svg), sub) || strings.Contains(string(svg), "n/a") {
			t.Errorf("%s: the chart of an empty week has no subtitle %q, or says n/a:\n%s", name, sub, svg)
		}
		var b strings.Builder
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if text := b.String(); strings.Contains(text, "(n/a)") || !strings.Contains(text, "no GPUs used, so none idle") {
			t.Errorf("%s: the text of an empty week:\n%s", name, text)
		}
		if a := r.Answer(nil).PlainText(); strings.Contains(a, "(n/a)") || !strings.Contains(a, "no GPUs used, so none idle") {
			t.Errorf("%s: the chat answer of an empty week:\n%s", name, a)
		}
	}
}
