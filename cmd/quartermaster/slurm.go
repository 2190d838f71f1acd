package main

import (
	"context"
	"os"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
)

// The Slurm backend: the host needs Slurm's client commands and the cluster's slurm.conf
// (SLURM_CONF, /etc/slurm, or configless). QM_SLURM_INSTANCE names this service in job comments
// (INSTANCE:L-42; default qm): services sharing a cluster need different ones.
func init() {
	backends["slurm"] = func(_ context.Context, a *App) (qm.Backend, error) {
		cat, err := templateCatalog()
		if err != nil {
			return nil, err
		}
		ws, err := workloadSettings()
		if err != nil {
			return nil, err
		}
		return slurm.New(slurm.Config{Policy: a.Policy, Catalog: cat, Workload: ws,
			Instance: os.Getenv("QM_SLURM_INSTANCE"), Logger: a.Logger.With("backend", "slurm")})
	}
}
