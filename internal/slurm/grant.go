package slurm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/workload"
)

// pathOptions are the sbatch options that name a path, long and short.
var pathOptions = map[string]bool{"--chdir": true, "-D": true, "--output": true, "-o": true, "--error": true, "-e": true, "--input": true, "-i": true}

// checkStorage checks, on the filesystem the service shares with the nodes, that a job reaches
// only its team's storage: the team's directory is not (through a symlink) another team's, and
// the job directory, the mounted directories, every path parameter and every path an #SBATCH
// line names resolve inside it, symlinks followed. It runs before anything is created, so a
// refused job leaves nothing behind.
func (b *Backend) checkStorage(w *workload.Workload) error {
	ps := w.Paths
	root, err := resolve(ps.Storage)
	if err != nil {
		return fmt.Errorf("slurm: team %s's storage %s: %w", w.Input.Team, ps.Storage, err)
	}
	others := workload.OtherStorage(b.cfg.Policy, w.Input.Team)
	names := make([]string, 0, len(others))
	for n := range others {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		o, err := resolve(others[n])
		if err != nil {
			return fmt.Errorf("slurm: team %s's storage %s: %w", n, others[n], err)
		}
		if workload.Within(root, o) || workload.Within(o, root) {
			return fmt.Errorf("slurm: team %s's storage %s resolves to %s, which is team %s's %s; each team needs a directory of its own", w.Input.Team, ps.Storage, root, n, others[n])
		}
	}
	inside := func(what, p string, user bool) error {
		real, err := resolve(p)
		if err != nil {
			return fmt.Errorf("slurm: %s %s: %w", what, p, err)
		}
		if workload.Within(real, root) {
			return nil
		}
		if user {
			return qm.Invalid(w.Template.Example(), "%s leads outside team %s's storage %s (it resolves to %s).", what, w.Input.Team, ps.Storage, real)
		}
		return fmt.Errorf("slurm: %s %s resolves to %s, outside team %s's storage %s", what, p, real, w.Input.Team, ps.Storage)
	}
	keys := make([]string, 0, len(ps.Params))
	for k := range ps.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := inside(k+"="+w.Input.Params[k], ps.Params[k], true); err != nil {
			return err
		}
	}
	for _, m := range ps.Mounts {
		if err := inside("the mounted directory", m, false); err != nil {
			return err
		}
	}
	if err := inside("the job directory", ps.JobDir, false); err != nil {
		return err
	}
	for _, d := range directivePaths(w.SlurmScript) {
		if !strings.HasPrefix(d, "/") {
			continue // relative to the job directory, which is checked
		}
		if !workload.Within(path.Clean(d), ps.Storage) {
			return fmt.Errorf("slurm: template %s's script has an #SBATCH path %s outside team %s's storage %s", w.Template.Name, d, w.Input.Team, ps.Storage)
		}
		if err := inside("the #SBATCH path", d, false); err != nil {
			return err
		}
	}
	return nil
}

// directivePaths lists the paths the script's #SBATCH lines name (--chdir, --output, --error,
// --input, long or short), with Slurm's %-patterns left in.
func directivePaths(script string) []string {
	var out []string
	for _, line := range strings.Split(script, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#SBATCH")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		for i := 0; i < len(f); i++ {
			opt, val, hasVal := strings.Cut(f[i], "=")
			if !pathOptions[opt] {
				continue
			}
			if !hasVal && i+1 < len(f) {
				i++
				val = f[i]
			}
			out = append(out, strings.Trim(val, `"'`))
		}
	}
	return out
}

// resolve is where p really leads: its longest existing prefix with every symlink followed, and
// the rest (which does not exist yet, so holds no symlink) after it.
func resolve(p string) (string, error) {
	p = filepath.Clean(p)
	var rest []string
	for cur := p; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		// A dangling symlink names no real place yet; refuse rather than guess where it goes.
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symlink to nothing", cur)
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}
