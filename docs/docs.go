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
