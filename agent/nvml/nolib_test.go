//go:build cgo

package nvml_test

import (
	"errors"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent/nvml"
)

// Without libnvidia-ml.so.1 the agent says in one sentence what an operator of a GPU node does
// about it: install the driver on the node, or, for the agent in a container (the DaemonSet), run it
// with the NVIDIA container runtime, which mounts the library; not only to try a demo.
func TestNoNVMLLibrarySaysWhatToDoOnANodeAndInAContainer(t *testing.T) {
	srv := server.NewServerWithGPUs("570.86.15", "12.570.86.15", 12080, gpus.Multiple(4, gpus.A100_PCIE_80GB)...)
	srv.InitFunc = func() gonvml.Return { return gonvml.ERROR_LIBRARY_NOT_FOUND }
	_, err := nvml.Open(srv, nil)
	if err == nil {
		t.Fatal("opened without a library")
	}
	msg := err.Error()
	for _, want := range []string{"libnvidia-ml.so.1", "install the NVIDIA driver", "container runtime", "runtimeClassName: nvidia"} {
		if !strings.Contains(msg, want) {
			t.Errorf("without libnvidia-ml: %q does not say %q", msg, want)
		}
	}
	if !errors.Is(err, nvml.ErrNoGPU) || strings.Contains(msg, ". ") || strings.Contains(msg, "ERROR_") {
		t.Errorf("without libnvidia-ml: %q; want one sentence, no NVML code", msg)
	}
}
