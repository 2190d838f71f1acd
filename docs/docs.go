// Package docs carries the annotated example policy into the binary, so a fresh install runs with
// no files at all.
package docs

import _ "embed"

// ExamplePolicy is docs/quartermaster.example.yaml, the console's default policy.
//
//go:embed quartermaster.example.yaml
var ExamplePolicy []byte

// ExamplePolicyName is how the embedded policy is named in messages.
const ExamplePolicyName = "docs/quartermaster.example.yaml (embedded)"

// Configuration is docs/configuration.md: its table of every environment variable and flag is
// what `quartermaster COMMAND --help` lists under "environment".
//
//go:embed configuration.md
var Configuration string
