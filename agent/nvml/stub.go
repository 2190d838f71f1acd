//go:build !cgo

// Package nvml reads a node's GPUs through NVML (github.com/NVIDIA/go-nvml), which needs cgo. This
// build has no cgo, so there is no NVML and no fake DGX: the agent says so and exits.
package nvml

import (
	"errors"
	"log/slog"

	"github.com/acme/quartermaster/agent"
)

// FakeKinds are the fake machines a cgo build offers.
var FakeKinds = []string{"dgxa100", "dgxh100"}

// ErrNoGPU matches (errors.Is) the error returned when there is no NVML to read.
var ErrNoGPU = errors.New("no GPU")

type noGPU string

func (e noGPU) Error() string        { return string(e) }
func (e noGPU) Is(target error) bool { return target == ErrNoGPU }

var errNoCgo error = noGPU("this quartermaster-agent was built without cgo, so it cannot read the GPUs through NVML; build it with CGO_ENABLED=1 (and a C compiler)")

// Devices is not available without cgo.
type Devices struct{ agent.Devices }

// System reports that this build cannot read NVML.
func System(*slog.Logger) (*Devices, error) { return nil, errNoCgo }

// Fake is not available without cgo.
type Fake struct {
	Cores agent.CoreMap
}

// NewFake reports that this build has no fake either: the fakes are go-nvml's mock servers.
func NewFake(string, string, agent.ScriptSource) (*Fake, error) { return nil, errNoCgo }

// GPUs is none: there is no fake in this build.
func (f *Fake) GPUs() int { return 0 }

// MIGProfiles are none: there is no fake in this build.
func (f *Fake) MIGProfiles() []string { return nil }

// MIGExample is empty: there is no fake in this build.
func (f *Fake) MIGExample() string { return "" }

// CheckMIG has nothing to check: there is no fake in this build.
func (f *Fake) CheckMIG(agent.Script) error { return nil }

// OpenFake reports that this build has no fake.
func OpenFake(*Fake, *slog.Logger) (*Devices, error) { return nil, errNoCgo }
