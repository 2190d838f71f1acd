package workload

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
)

// Paths is what a rendered workload reaches of the storage, for a backend to check further
// (Slurm resolves symlinks on the shared filesystem): the team's storage, the job directory, the
// mounted directories and the absolute paths the parameters name.
type Paths struct {
	Storage string
	JobDir  string
	Mounts  []string
	Params  map[string]string // path parameters, each as an absolute path
}

// OtherStorage is every storage directory of a team other than team, by team name.
func OtherStorage(p *policy.Policy, team string) map[string]string {
	out := map[string]string{}
	for _, t := range p.Teams {
		if t != nil && t.Storage.Path != "" && !strings.EqualFold(t.Name, team) {
			out[t.Name] = path.Clean(t.Storage.Path)
		}
	}
	return out
}

// Within reports whether p is dir or lies under it (both clean absolute paths).
func Within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// CheckGrant checks that a rendered workload is given its own team's storage and no other
// team's: its storage directory is not another team's (nor inside or around one), its job
// directory and mounts lie inside it, no parameter climbs out with "..", and neither the Slurm
// script nor the Kubernetes manifest names another team's storage, whether a parameter or the
// template put it there. A parameter's fault is a qm.EINVALID error naming it; a template's
// or the install's is a plain error.
func CheckGrant(p *policy.Policy, w *Workload) (Paths, error) {
	in := w.Input
	sp := in.Storage.Path
	if !strings.HasPrefix(sp, "/") || path.Clean(sp) != sp || sp == "/" {
		return Paths{}, fmt.Errorf("workload: team %s's storage %q is not a plain absolute directory", in.Team, sp)
	}
	others := OtherStorage(p, in.Team)
	names := make([]string, 0, len(others))
	for n := range others {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if o := others[n]; Within(sp, o) || Within(o, sp) {
			return Paths{}, fmt.Errorf("workload: team %s would be given %s, which overlaps team %s's storage %s; give every team a directory of its own (storage.path in the policy, or QM_STORAGE_ROOT)", in.Team, sp, n, o)
		}
	}
	ps := Paths{Storage: sp, JobDir: path.Clean(w.JobDir), Params: map[string]string{}}
	if !Within(ps.JobDir, sp) {
		return Paths{}, fmt.Errorf("workload: the job directory %s is outside team %s's storage %s", w.JobDir, in.Team, sp)
	}
	ex := w.Template.Example()
	keys := make([]string, 0, len(in.Params))
	for k := range in.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in.Params[k]
		if climbs(v) {
			return Paths{}, qm.Invalid(ex, "%s=%s climbs out of a directory with \"..\"; a workload reaches only team %s's storage %s.", k, clip(v), in.Team, sp)
		}
		for _, n := range names {
			if mentions(v, others[n]) {
				return Paths{}, qm.Invalid(ex, "%s=%s points into team %s's storage; a workload of team %s is given only %s.", k, clip(v), n, in.Team, sp)
			}
		}
		if isPathParam(w.Template, k) {
			abs := v
			if !strings.HasPrefix(v, "/") {
				abs = sp + "/" + v
			}
			abs = path.Clean(abs)
			if !Within(abs, sp) {
				return Paths{}, qm.Invalid(ex, "%s=%s is outside team %s's storage %s.", k, clip(v), in.Team, sp)
			}
			ps.Params[k] = abs
		}
	}
	for _, m := range w.Mounts {
		m = path.Clean(m)
		if !Within(m, sp) {
			return Paths{}, fmt.Errorf("workload: template %s mounts %s, outside team %s's storage %s", w.Template.Name, m, in.Team, sp)
		}
		ps.Mounts = append(ps.Mounts, m)
	}
	for _, n := range names {
		for what, text := range map[string]string{"Slurm script": w.SlurmScript, "Kubernetes manifest": w.KubernetesYAML} {
			if mentions(text, others[n]) {
				return Paths{}, fmt.Errorf("workload: template %s's %s for team %s names team %s's storage %s; a workload is given only its own team's storage", w.Template.Name, what, in.Team, n, others[n])
			}
		}
	}
	return ps, nil
}

// climbs reports whether v has a ".." path segment.
func climbs(v string) bool {
	for _, seg := range strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// mentions reports whether text names dir or something under it: dir followed by the end, a
// slash, or a character that cannot continue a path name.
func mentions(text, dir string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], dir)
		if j < 0 {
			return false
		}
		end := i + j + len(dir)
		if end == len(text) || !pathChar(text[end]) || text[end] == '/' {
			return true
		}
		i = i + j + 1
	}
}

func pathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '+' || c == '/'
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func isPathParam(t *templates.Template, name string) bool {
	for _, p := range t.Parameters {
		if p.Name == name {
			return p.Type == templates.TypePath
		}
	}
	return false
}
