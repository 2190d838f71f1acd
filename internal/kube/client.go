package kube

import (
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Connect makes a clientset: from the kubeconfig file named (or KUBECONFIG's, or ~/.kube/config)
// when there is one, else from the service account of the pod the service runs in.
func Connect(kubeconfig string) (kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	rules := clientcmd.NewDefaultClientConfigLoadingRules() // KUBECONFIG, then ~/.kube/config
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	if kubeconfig != "" || os.Getenv("KUBECONFIG") != "" || fileExists(rules.GetDefaultFilename()) {
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kube: kubeconfig: %w", err)
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

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
