package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Connect makes a clientset: from the kubeconfig file named (or KUBECONFIG's, or ~/.kube/config)
// when there is one, else from the service account of the pod the service runs in. kubeconfig
// may name several files, separated as PATH is, as KUBECONFIG may: they are merged as kubectl
// merges them.
func Connect(kubeconfig string) (kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	rules := clientcmd.NewDefaultClientConfigLoadingRules() // KUBECONFIG, then ~/.kube/config
	switch files := filepath.SplitList(kubeconfig); {
	case len(files) > 1:
		// Several files, as KUBECONFIG may name (kubectl merges them, the first to set a value
		// winning, and passes over those that are not there): one that is not a file of its own.
		rules.Precedence = files
		if !slices.ContainsFunc(files, fileExists) {
			return nil, kubeconfigRefused(kubeconfig, rules.GetDefaultFilename(), fs.ErrNotExist)
		}
	case kubeconfig != "":
		rules.ExplicitPath = kubeconfig
	}
	if kubeconfig != "" || os.Getenv("KUBECONFIG") != "" || fileExists(rules.GetDefaultFilename()) {
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, kubeconfigRefused(kubeconfig, rules.GetDefaultFilename(), err)
		}
	} else if cfg, err = rest.InClusterConfig(); err != nil {
		return nil, fmt.Errorf("kube: no kubeconfig (set KUBECONFIG) and not in a cluster: %w", err)
	}
	cfg.UserAgent = "quartermaster"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: clientset: %w", err)
	}
	return cs, nil
}

// kubeconfigRefused says, in one sentence, which kubeconfig could not be used, why, and what to
// do, in place of client-go's words (its advice to set KUBERNETES_MASTER names a variable the
// service does not read).
func kubeconfigRefused(named, def string, err error) error {
	path, from := named, "KUBECONFIG names "
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path == "" {
		path, from = def, "the default kubeconfig "
	}
	detail := strings.ReplaceAll(err.Error(), "\n", " ")
	if rest, ok := strings.CutPrefix(detail, "error loading config file "); ok {
		if _, after, found := strings.Cut(rest, "\": "); found {
			detail = after // the file is named already
		}
	}
	why := "cannot be read as a kubeconfig (" + detail + ")"
	switch {
	case errors.Is(err, fs.ErrNotExist) && len(filepath.SplitList(path)) > 1:
		why = "are files none of which exists"
	case errors.Is(err, fs.ErrNotExist):
		why = "does not exist"
	case clientcmd.IsEmptyConfig(err):
		why = "names no cluster to use (no current context)"
	}
	return fmt.Errorf("%s%s, which %s; point KUBECONFIG at the cluster's kubeconfig (the file kubectl uses), or, in a pod, leave it unset to use the pod's service account", from, path, why)
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
