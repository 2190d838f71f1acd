package policy

import (
	"strings"
	"testing"
)

// TestSlurmGRESWithACountReadsAsItsType: a class's slurm.gres written with a count, as a node's
// GRES is in slurm.conf (gpu:h100:8, gpu:4), would have matched no node of the cluster and
// rendered no job; it reads as the GRES without the count, with a warning on its line, since each
// lease asks for its own GPUs.
func TestSlurmGRESWithACountReadsAsItsType(t *testing.T) {
	for gres, want := range map[string]string{"gpu:h100:8": "gpu:h100", "gpu:4": "gpu", "gpu:a100-sxm4-80gb:2": "gpu:a100-sxm4-80gb"} {
		p, err := Load([]byte(exampleWith(t, `gres: "gpu:h100"`, `gres: "`+gres+`"`)), "p.yaml")
		if err != nil {
			t.Fatalf("%s: %v", gres, err)
		}
		c, _ := p.Class("train")
		if c.Slurm.GRES != want {
			t.Errorf("gres %q reads as %q, want %q", gres, c.Slurm.GRES, want)
		}
		text := warningText(p.Warnings)
		if !strings.Contains(text, `32: class train: slurm.gres "`+gres+`" ends in a count`) || !strings.Contains(text, `gres: "`+want+`"`) {
			t.Errorf("gres %q: warnings\n%s", gres, text)
		}
	}
	if p, err := LoadFile(examplePath); err != nil || len(p.Warnings) != 0 {
		t.Errorf("the example: %v %v", err, p.Warnings)
	}
}

// TestClassMappingsThatCannotRenderAreRefused: a class mapping no job or manifest could carry (a
// GRES or partition that is not one word, a node selector that is not a label, a resource that is
// not a resource name) failed every lease of the class with "the workspace could not be started";
// policy check refuses it on its line.
func TestClassMappingsThatCannotRenderAreRefused(t *testing.T) {
	for _, c := range []struct {
		old, new string
		line     int
		msg      string
	}{
		{`gres: "gpu:h100"`, `gres: "gpu h100"`, 32, `class train: slurm.gres "gpu h100" is not a GRES as Slurm writes it; write its name and type, e.g. gres: "gpu:h100" (or "gpu" for any type)`},
		{`gres: "gpu:h100"`, `gres: "gpu:h100,gpu:a100"`, 32, `class train: slurm.gres "gpu:h100,gpu:a100" is not a GRES as Slurm writes it; write its name and type, e.g. gres: "gpu:h100" (or "gpu" for any type)`},
		{`partition: train,`, `partition: "train,debug",`, 32, `class train: slurm.partition "train,debug" is not one partition name (letters, digits, _ . -); e.g. partition: train`},
		{`node_selector: {gpu.acme/class: train}`, `node_selector: {gpu.acme/class: "train pool"}`, 33, `class train: kubernetes.node_selector gpu.acme/class: "train pool" is not a Kubernetes label; e.g. node_selector: {gpu.acme/class: train}`},
		{`node_selector: {gpu.acme/class: train}`, `node_selector: {"gpu class": train}`, 33, `class train: kubernetes.node_selector "gpu class": "train" is not a Kubernetes label; e.g. node_selector: {gpu.acme/class: train}`},
		{`resource: nvidia.com/gpu, node_selector: {gpu.acme/class: train}`, `resource: nvidia gpu, node_selector: {gpu.acme/class: train}`, 33, `class train: kubernetes.resource "nvidia gpu" is not a resource name; e.g. resource: nvidia.com/gpu`},
	} {
		pe := refused(t, c.old, c.new)
		wantProblem(t, pe, c.line, c.msg)
	}
}

// TestClassMappingsKubernetesTakes: node selector keys Kubernetes takes load, short prefixes
// (a DNS subdomain of one or two characters) and names without a prefix included.
func TestClassMappingsKubernetesTakes(t *testing.T) {
	for _, sel := range []string{`{ai/pool: train}`, `{a/pool: train}`, `{pool: train, kubernetes.io/arch: amd64}`, `{gpu.acme/class: ""}`} {
		if _, err := Load([]byte(exampleWith(t, `node_selector: {gpu.acme/class: train}`, `node_selector: `+sel)), "p.yaml"); err != nil {
			t.Errorf("node_selector: %s: %v", sel, err)
		}
	}
}

// TestStorageGrantsThatCannotMountAreRefused: a team's storage path that no job script or
// manifest can carry (a space breaks #SBATCH --output, a colon a container's bind mount) or a
// PersistentVolumeClaim name Kubernetes does not take failed every lease of the team with "the
// workspace could not be started"; policy check refuses it on its line.
func TestStorageGrantsThatCannotMountAreRefused(t *testing.T) {
	for _, c := range []struct{ new, msg string }{
		{`storage: {path: "/projects/vision team", quota_gib: 4096}`, `team vision: storage path "/projects/vision team" has a character a job script or a mount cannot carry; use letters, digits and . _ - + /, e.g. path: /projects/vision`},
		{`storage: {path: "/projects/vision:ro", quota_gib: 4096}`, `team vision: storage path "/projects/vision:ro" has a character a job script or a mount cannot carry; use letters, digits and . _ - + /, e.g. path: /projects/vision`},
		{`storage: {path: /projects/vision, quota_gib: 4096, pvc: Vision_Data}`, `team vision: storage pvc "Vision_Data" is not a Kubernetes PersistentVolumeClaim name (lower case letters, digits, - and .); e.g. pvc: vision-data`},
	} {
		pe := refused(t, `storage: {path: /projects/vision, quota_gib: 4096}`, c.new)
		wantProblem(t, pe, 45, c.msg)
	}
	for _, ok := range []string{`storage: {path: /projects/vision+2/data_x.1, pvc: vision-data.v2}`, `storage: {path: /projects/Vision-A100}`} {
		if _, err := Load([]byte(exampleWith(t, `storage: {path: /projects/vision, quota_gib: 4096}`, ok)), "p.yaml"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestClassTolerations: a class whose nodes another cluster taints (dedicated=gpu:NoSchedule,
// amd.com/gpu:NoSchedule) lists the tolerations its pods need; one Kubernetes would not take is
// refused on its line.
func TestClassTolerations(t *testing.T) {
	const old = `node_selector: {gpu.acme/class: train}`
	p, err := Load([]byte(exampleWith(t, old, old+`, tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}, {key: amd.com/gpu, operator: Exists}]`)), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := p.Class("train")
	want := []Toleration{{Key: "dedicated", Operator: "Equal", Value: "gpu", Effect: "NoSchedule"}, {Key: "amd.com/gpu", Operator: "Exists"}}
	if len(c.Kubernetes.Tolerations) != 2 || c.Kubernetes.Tolerations[0] != want[0] || c.Kubernetes.Tolerations[1] != want[1] {
		t.Errorf("tolerations %+v, want %+v", c.Kubernetes.Tolerations, want)
	}
	for _, c := range []struct{ tol, msg string }{
		{`{key: "gpu pool", operator: Exists}`, `class train: kubernetes.tolerations: key "gpu pool" is not a Kubernetes taint key; e.g. tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]`},
		{`{key: dedicated, operator: In, value: gpu}`, `class train: kubernetes.tolerations: operator "In" must be Equal or Exists; e.g. tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]`},
		{`{key: dedicated, operator: Exists, value: gpu}`, `class train: kubernetes.tolerations: operator Exists takes no value (gpu); e.g. tolerations: [{key: dedicated, operator: Exists}]`},
		{`{key: dedicated, value: "g p u"}`, `class train: kubernetes.tolerations: value "g p u" is not a Kubernetes label value; e.g. tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]`},
		{`{key: dedicated, value: gpu, effect: NoSchedul}`, `class train: kubernetes.tolerations: effect "NoSchedul" must be NoSchedule, PreferNoSchedule or NoExecute (or none, for all three); e.g. tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]`},
		{`{value: gpu}`, `class train: kubernetes.tolerations: a toleration without a key must be operator: Exists (it tolerates every taint); e.g. tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]`},
	} {
		pe := refused(t, old, old+`, tolerations: [`+c.tol+`]`)
		wantProblem(t, pe, 33, c.msg)
	}
}
