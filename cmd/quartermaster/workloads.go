package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/metrics"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// templateCatalog is the embedded template catalog with the installation's own templates from
// QM_TEMPLATES_DIR, loaded once. A definition there with a problem is left out, and said on
// standard error with its file and line; the others load. A directory that cannot be read is
// refused.
var templateCatalog = sync.OnceValues(func() (*templates.Catalog, error) {
	return loadCatalog(os.Getenv("QM_TEMPLATES_DIR"), os.Stderr)
})

// loadCatalog is the embedded catalog plus the templates in dir ("" for none); each definition
// there that is left out is a warning on warn.
func loadCatalog(dir string, warn io.Writer) (*templates.Catalog, error) {
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil || dir == "" {
		return cat, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, errUsage{fmt.Sprintf("QM_TEMPLATES_DIR=%q is not a directory this service can read; e.g. QM_TEMPLATES_DIR=/etc/quartermaster/templates", dir)}
	}
	for _, p := range cat.AddDir(os.DirFS(dir)) {
		fmt.Fprintf(warn, "warning: QM_TEMPLATES_DIR %s/%s (left out of the catalog; the other templates load)\n", strings.TrimRight(dir, "/"), p)
	}
	return cat, nil
}

// withCatalogWarnings adds to p's warnings, in line order, those of its rules that compare
// request.template with a name the template catalog does not have (policy.TemplateWarnings):
// policy check prints them, and serve and the console log them, as they do the others.
func withCatalogWarnings(p *policy.Policy) *policy.Policy {
	cat, err := templateCatalog()
	if err != nil || p == nil {
		return p
	}
	var names []string
	for _, t := range cat.List() {
		names = append(names, t.Name)
	}
	if ws := p.TemplateWarnings(names); len(ws) > 0 {
		p.Warnings = append(p.Warnings, ws...)
		sort.SliceStable(p.Warnings, func(i, j int) bool { return p.Warnings[i].Line < p.Warnings[j].Line })
	}
	return p
}

// workloadSettings are the install's rendering choices, from the environment:
// QM_DEFAULT_TEMPLATE (what a lease naming none runs; ssh-shell), QM_STORAGE_ROOT (ROOT/TEAM for
// teams the policy gives no storage), QM_SLURM_ACCOUNTING=true (pass the team as the Slurm
// account), QM_SLURM_CONTAINER (apptainer or pyxis), QM_BASE_IMAGE and QM_KUBE_INSTANCE.
// A value that is none of these is refused at start, not read as false, and so are a container
// runtime other than apptainer or pyxis and a default template the catalog does not have: either
// would otherwise fail every lease, one by one, once the service runs.
func workloadSettings() (workload.Settings, error) {
	acct, err := envBool("QM_SLURM_ACCOUNTING")
	if err != nil {
		return workload.Settings{}, err
	}
	ws := workload.Settings{
		DefaultTemplate: os.Getenv("QM_DEFAULT_TEMPLATE"),
		StorageRoot:     os.Getenv("QM_STORAGE_ROOT"),
		Account:         acct,
		Container:       os.Getenv("QM_SLURM_CONTAINER"),
		BaseImage:       os.Getenv("QM_BASE_IMAGE"),
	}
	// The Kubernetes backend's instance label (QM_KUBE_INSTANCE), so that a preview's manifest is
	// labelled and named as the backend makes it. One that is no label value is refused when the
	// Kubernetes backend starts; a preview then shows the default.
	if v := os.Getenv("QM_KUBE_INSTANCE"); policy.IsLabelValue(v) {
		ws.KubernetesInstance = v
	}
	// The Slurm backend's instance (QM_SLURM_INSTANCE), so that a preview's script carries the
	// job comment, and the port, the backend submits it with. One with a colon or a space is
	// refused when the Slurm backend starts; a preview then shows the default.
	if v := os.Getenv("QM_SLURM_INSTANCE"); !strings.ContainsAny(v, ": \t\r\n") {
		ws.Instance = v
	}
	switch ws.Container {
	case "", "apptainer", "pyxis":
	default:
		return ws, errUsage{fmt.Sprintf("QM_SLURM_CONTAINER=%q is neither apptainer nor pyxis; e.g. QM_SLURM_CONTAINER=apptainer (unset, jobs run on the nodes' own software)", ws.Container)}
	}
	if ws.DefaultTemplate != "" {
		cat, err := templateCatalog()
		if err != nil {
			return ws, err
		}
		if _, err := cat.Get(ws.DefaultTemplate); err != nil {
			return ws, errUsage{fmt.Sprintf("QM_DEFAULT_TEMPLATE=%q is not a template of the catalog (quartermaster templates list names them); e.g. QM_DEFAULT_TEMPLATE=%s",
				ws.DefaultTemplate, workload.DefaultTemplate)}
		}
	}
	return ws, nil
}

// envBool reads a yes/no setting from the environment as the policy file reads one: true, yes,
// on or 1, and false, no, off or 0, in any case; unset is false, and anything else is refused.
func envBool(name string) (bool, error) {
	v := os.Getenv(name)
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return false, nil
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, errUsage{fmt.Sprintf("%s=%q is neither true nor false; e.g. %s=true", name, v, name)}
}

// reconcileEvery is QM_RECONCILE_INTERVAL, or reconcileInterval when it is unset; a value that is
// not a positive duration, or is shorter than a second, is refused.
func reconcileEvery() (time.Duration, error) {
	v := os.Getenv("QM_RECONCILE_INTERVAL")
	if v == "" {
		return reconcileInterval, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errUsage{fmt.Sprintf("QM_RECONCILE_INTERVAL=%q is not a positive duration; set a duration with its unit, e.g. QM_RECONCILE_INTERVAL=%s (the default)", v, reconcileInterval)}
	}
	return positiveDuration("QM_RECONCILE_INTERVAL", v, reconcileInterval.String())
}

// addTemplateVerbs plugs /gpu templates, /gpu template and /gpu submit into the app's bot.
func addTemplateVerbs(a *App) error {
	cat, err := templateCatalog()
	if err != nil {
		return err
	}
	ws, err := workloadSettings()
	if err != nil {
		return err
	}
	commands.AddTemplates(a.Bot, cat, ws)
	return nil
}

// reconcileInterval is how often serve asks a scheduler backend what became of each lease's job.
const reconcileInterval = 5 * time.Second

// reconcileLoop refreshes the scheduler's inventory and makes the scheduler and the database
// agree, now and every interval (QM_RECONCILE_INTERVAL, default reconcileInterval), for backends
// on a real scheduler (Slurm, Kubernetes). With the sim backend it returns at once. Each pass is
// timed on /metrics.
func reconcileLoop(ctx context.Context, svc *qm.Service, log *slog.Logger, m *metrics.Metrics) {
	_, watches := qm.BackendAs[qm.Watcher](svc.Backend)
	_, refreshes := qm.BackendAs[qm.InventoryRefresher](svc.Backend)
	if !watches && !refreshes {
		return
	}
	every, err := reconcileEvery()
	if err != nil { // checked when serve started; never here
		every = reconcileInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	failing := "" // what the passes failing now say: logged once, not every pass
	for {
		start := time.Now()
		rep, err := svc.Reconcile(ctx)
		if ctx.Err() == nil {
			m.Reconcile(time.Since(start), err)
		}
		if err == nil && failing != "" {
			failing = ""
			log.Info("reconcile works again")
		}
		switch {
		case err != nil && ctx.Err() == nil:
			if err.Error() != failing {
				failing = err.Error()
				log.Error("reconcile; logged again once it fails otherwise or works", "err", err, "report", rep.String())
			}
		case rep.Activated+rep.Queued+rep.Ended+rep.Vanished+rep.Adopted+rep.Cancelled+rep.Retimed+rep.Removed > 0:
			log.Info("reconciled", "report", rep.String(), "took", time.Since(start))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
