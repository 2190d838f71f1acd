// Package templates holds Quartermaster's workload templates as data: one YAML definition per
// template (name, parameters, resources, and the shell bodies it runs) plus the shared layouts in
// layouts/ that turn a definition into a Slurm batch script and a Kubernetes manifest.
//
// The files are versioned with the code and embedded in the binary; internal/templates loads
// them from FS. A definition's version field changes whenever what it renders changes.
package templates

import "embed"

// FS holds every template definition (*.yaml) and the layouts (layouts/).
//
//go:embed *.yaml layouts
var FS embed.FS
