package kube_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// taintPolicy is a cluster whose GPU nodes all carry one label and whose H100 nodes are kept for
// training by a taint: class infer runs on any GPU node that does not keep it off, class train
// tolerates the training taint, and class gaudi asks for another vendor's resource.
const taintPolicy = `organization: Nordlicht
currency: NOK
timezone: Europe/Oslo
backend: kubernetes
classes:
  - name: infer
    description: Any GPU node that takes inference
    sku: L40S
    gpu_memory_gib: 48
    price_per_gpu_hour: 12
    isolation: shared
    max_gpus: 4
    max_duration: 8h
    idle_timeout: 1h
    idle_grace: 15m
    kubernetes: {resource: nvidia.com/gpu, node_selector: {nordlicht.no/gpu: "ja"}}
  - name: train
    description: H100 nodes kept for training
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 40
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
    idle_timeout: 2h
    idle_grace: 30m
    kubernetes:
      resource: nvidia.com/gpu
      node_selector: {nordlicht.no/gpu: "ja"}
      tolerations: [{key: nordlicht.no/reservert, value: trening, effect: NoSchedule}]
  - name: gaudi
    description: Gaudi accelerators
    sku: Gaudi2
    gpu_memory_gib: 96
    price_per_gpu_hour: 20
    isolation: shared
    max_gpus: 8
    max_duration: 24h
    idle_timeout: 1h
    idle_grace: 15m
    kubernetes: {resource: habana.ai/gaudi}
default_quota: {gpus: {infer: 2, train: 8, gaudi: 2}, gpu_hours_per_week: 100}
teams:
  - name: team-42
    idp_groups: [g42]
    budget_owners: [ingrid@nordlicht.example]
    storage: {path: /data/team-42}
`

// TestAClassIsOnlyOnNodesItsPodsTolerate: a node tainted NoSchedule or NoExecute for one class
// (nordlicht.no/reservert=trening) is not a node of a class whose pods do not tolerate the taint,
// even where its labels match that class's node selector: the Kubernetes scheduler never puts
// them there, so the service must not count its GPUs as the class's nor place the class's leases
// on it. The taint named after the GPU resource, which every GPU pod tolerates, keeps no class off.
func TestAClassIsOnlyOnNodesItsPodsTolerate(t *testing.T) {
	p, err := policy.Load([]byte(taintPolicy), "nordlicht.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l40s := kaskadeNode("l40s-01", "l40s", "nvidia.com/gpu", 4)
	l40s.Labels["nordlicht.no/gpu"] = "ja"
	l40s.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
	h100 := kaskadeNode("h100-07", "h100", "nvidia.com/gpu", 8)
	h100.Labels["nordlicht.no/gpu"] = "ja"
	h100.Spec.Taints = []corev1.Taint{{Key: "nordlicht.no/reservert", Value: "trening", Effect: corev1.TaintEffectNoSchedule},
		{Key: "nordlicht.no/vedlikehold", Effect: corev1.TaintEffectPreferNoSchedule}}
	gaudi := kaskadeNode("gaudi-01", "gaudi", "habana.ai/gaudi", 8)
	gaudi.Spec.Taints = []corev1.Taint{{Key: "habana.ai/gaudi", Effect: corev1.TaintEffectNoSchedule}}
	gaudiOther := kaskadeNode("gaudi-02", "gaudi", "habana.ai/gaudi", 8)
	gaudiOther.Spec.Taints = []corev1.Taint{{Key: "nordlicht.no/reservert", Value: "forskning", Effect: corev1.TaintEffectNoExecute}}
	got := kube.BuildInventory(p, []corev1.Node{*l40s, *h100, *gaudi, *gaudiOther}, nil, nil, kube.DefaultInstance)
	want := []qm.Node{
		{Name: "l40s-01", Class: "infer", GPUs: 4, GRES: "nvidia.com/gpu"},
		{Name: "h100-07", Class: "train", GPUs: 8, GRES: "nvidia.com/gpu"},
		{Name: "l40s-01", Class: "train", GPUs: 4, GRES: "nvidia.com/gpu"},
		{Name: "gaudi-01", Class: "gaudi", GPUs: 8, GRES: "habana.ai/gaudi"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inventory\n got %+v\nwant %+v", got, want)
	}
}
