package commands

import (
	"strings"
	"testing"
)

// /gpu template's preview of a template that uses no GPU says so as a lease's status does ("a
// CPU-only job in class C"), not "0 × C"; one that uses GPUs gives their count.
func TestTemplatePreviewOfACPUOnlyTemplateSaysSo(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	for _, tp := range h.bot.Templates.Catalog.List() {
		r := mustOK(t, h.say("kim@orbit.example", "/gpu template "+tp.Name))
		for _, s := range r.Sections {
			cpu := strings.Contains(s.Title, "a CPU-only job in class ")
			if tp.CPUOnly() && (!cpu || strings.Contains(s.Title, "0 ×")) {
				t.Errorf("/gpu template %s: %q, want a CPU-only job in its class", tp.Name, s.Title)
			}
			if !tp.CPUOnly() && (cpu || !strings.Contains(s.Title, " × ")) {
				t.Errorf("/gpu template %s: %q, want its GPUs", tp.Name, s.Title)
			}
		}
	}
}
