package main

import (
	"context"
	"os"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
)

// The Kubernetes backend: it talks to the cluster of KUBECONFIG (or ~/.kube/config), or, inside
// a pod, to its own cluster with the pod's service account. QM_KUBE_INSTANCE is the value of the
// quartermaster.io/instance label on everything it makes (default qm).
func init() {
	backends["kubernetes"] = func(_ context.Context, a *App) (qm.Backend, error) {
		cat, err := templateCatalog()
		if err != nil {
			return nil, err
		}
		cs, err := kube.Connect(os.Getenv("KUBECONFIG"))
		if err != nil {
			return nil, err
		}
		ws, err := workloadSettings()
		if err != nil {
			return nil, err
		}
		return kube.New(kube.Config{Policy: a.Policy, Catalog: cat, Workload: ws, Client: cs,
			Instance: os.Getenv("QM_KUBE_INSTANCE"), Logger: a.Logger.With("backend", "kubernetes")})
	}
}
