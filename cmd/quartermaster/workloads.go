package main

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/metrics"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// templateCatalog is the embedded template catalog, loaded once.
var templateCatalog = sync.OnceValues(func() (*templates.Catalog, error) { return templates.Load(qmtemplates.FS) })

// workloadSettings are the install's rendering choices, from the environment:
// QM_DEFAULT_TEMPLATE (what a lease naming none runs; ssh-shell), QM_STORAGE_ROOT (ROOT/TEAM for
// teams the policy gives no storage), QM_SLURM_ACCOUNTING=true (pass the team as the Slurm
// account), QM_SLURM_CONTAINER (apptainer or pyxis) and QM_BASE_IMAGE.
func workloadSettings() workload.Settings {
	acct, _ := strconv.ParseBool(os.Getenv("QM_SLURM_ACCOUNTING"))
	return workload.Settings{
		DefaultTemplate: os.Getenv("QM_DEFAULT_TEMPLATE"),
		StorageRoot:     os.Getenv("QM_STORAGE_ROOT"),
		Account:         acct,
		Container:       os.Getenv("QM_SLURM_CONTAINER"),
		BaseImage:       os.Getenv("QM_BASE_IMAGE"),
	}
}

// addTemplateVerbs plugs /gpu templates, /gpu template and /gpu submit into the app's bot.
func addTemplateVerbs(a *App) error {
	cat, err := templateCatalog()
	if err != nil {
		return err
	}
	commands.AddTemplates(a.Bot, cat, workloadSettings())
	return nil
}

// reconcileInterval is how often serve asks a scheduler backend what became of each lease's job.
const reconcileInterval = 5 * time.Second

// reconcileLoop refreshes the scheduler's inventory and makes the scheduler and the database
// agree, now and every interval (QM_RECONCILE_INTERVAL, default reconcileInterval), for backends
// on a real scheduler (Slurm, Kubernetes). With the sim backend it returns at once. Each pass is
// timed on /metrics.
func reconcileLoop(ctx context.Context, svc *qm.Service, log *slog.Logger, m *metrics.Metrics) {
	_, watches := svc.Backend.(qm.Watcher)
	_, refreshes := svc.Backend.(qm.InventoryRefresher)
	if !watches && !refreshes {
		return
	}
	every := reconcileInterval
	if d, err := time.ParseDuration(os.Getenv("QM_RECONCILE_INTERVAL")); err == nil && d > 0 {
		every = d
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		start := time.Now()
		rep, err := svc.Reconcile(ctx)
		if ctx.Err() == nil {
			m.Reconcile(time.Since(start), err)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("reconcile", "err", err, "report", rep.String())
		case rep.Activated+rep.Queued+rep.Ended+rep.Vanished+rep.Adopted+rep.Cancelled+rep.Retimed > 0:
			log.Info("reconciled", "report", rep.String(), "took", time.Since(start))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
