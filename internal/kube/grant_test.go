package kube_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// probeTemplate has a free-text parameter, which the embedded templates constrain with patterns.
const probeTemplate = `name: probe
version: 1
title: Probe
description: Echoes a note, for tests.
tags: [test]
kind: batch
resources: {gpus: 1, max_gpus: 8, cpus_per_gpu: 1, memory_gib_per_gpu: 1}
example: note=hello
parameters:
  - name: note
    type: string
    default: none
    description: Free text.
run: |
  echo {{shq .P.note}}
`

// catalogEdited is the embedded catalog plus the probe template, with the Kubernetes layout
// changed by edit (old, new pairs).
func catalogEdited(t *testing.T, edit ...string) *templates.Catalog {
	t.Helper()
	m := fstest.MapFS{"probe.yaml": {Data: []byte(probeTemplate)}}
	err := fs.WalkDir(qmtemplates.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(qmtemplates.FS, p)
		if p == "layouts/kubernetes.yaml.tmpl" {
			s := string(b)
			for i := 0; i+1 < len(edit); i += 2 {
				if !strings.Contains(s, edit[i]) {
					t.Fatalf("the layout has no %q", edit[i])
				}
				s = strings.Replace(s, edit[i], edit[i+1], 1)
			}
			b = []byte(s)
		}
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := templates.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func backendWith(t *testing.T, p *policy.Policy, cs *fake.Clientset, cat *templates.Catalog) *kube.Backend {
	t.Helper()
	b, err := kube.New(kube.Config{Policy: p, Catalog: cat, Client: cs, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStorageOnlyOwnTeamKubernetes: a workspace of team vision gets vision's claim in vision's
// namespace and nothing else (its dataset as a sub-path of that claim), team language its own;
// a parameter with "..", an absolute path or language's storage in free text, and a template
// that would mount a host path, another claim, or live in another namespace, are all refused
// before anything is created.
func TestStorageOnlyOwnTeamKubernetes(t *testing.T) {
	ctx := context.Background()
	p := examplePolicy(t)
	p.Teams[1].Storage.PVC = "language-data"
	cs := fake.NewClientset(pvc("qm-vision", "team-storage"), pvc("qm-language", "language-data"))
	b := backendWith(t, p, cs, catalogEdited(t))

	ws := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour,
		Template: "jupyter-dataset", Params: map[string]string{"dataset": "datasets/coco"}}
	if _, err := b.Start(ctx, ws); err != nil {
		t.Fatal(err)
	}
	wsJob, err := cs.BatchV1().Jobs("qm-vision").Get(ctx, "qm-l-1-jupyter-dataset", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onlyOwnStorage(t, wsJob.Spec.Template.Spec, "team-storage", "/projects/vision")
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range wsJob.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m
	}
	if m := mounts["/dataset"]; m.Name != "team-storage" || m.SubPath != "datasets/coco" || !m.ReadOnly {
		t.Errorf("the dataset is not vision's datasets/coco, read-only: %+v", m)
	}

	lang := &qm.Lease{ID: 2, User: "lee@acme.example", Team: "language", Class: "train", GPUs: 1, Duration: time.Hour, Template: "probe"}
	if _, err := b.Start(ctx, lang); err != nil {
		t.Fatal(err)
	}
	job, err := cs.BatchV1().Jobs("qm-language").Get(ctx, "qm-l-2-probe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onlyOwnStorage(t, job.Spec.Template.Spec, "language-data", "/projects/language")

	count := func() int {
		pods, _ := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		jobs, _ := cs.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		svcs, _ := cs.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		return len(pods.Items) + len(jobs.Items) + len(svcs.Items)
	}
	before := count()
	id := qm.LeaseID(100)
	refused := func(b *kube.Backend, what, tmpl string, params map[string]string, want string) {
		t.Helper()
		id++
		l := &qm.Lease{ID: id, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour, Template: tmpl, Params: params}
		if _, err := b.Start(ctx, l); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	refused(b, "dot-dot", "jupyter-dataset", map[string]string{"dataset": "../language/corpus"}, `without ".."`)
	refused(b, "absolute path", "jupyter-dataset", map[string]string{"dataset": "/projects/language/corpus"}, "must be inside the team storage /projects/vision")
	refused(b, "free text", "probe", map[string]string{"note": "/projects/language/corpus"}, "points into team language's storage")
	refused(b, "free text with ..", "probe", map[string]string{"note": "x/../../language"}, `climbs out of a directory with ".."`)
	refused(backendWith(t, p, cs, catalogEdited(t, "emptyDir: {medium: Memory, sizeLimit: {{json (printf \"%dGi\" .ShmGiB)}}}", "hostPath: {path: /projects}")),
		"host path", "probe", nil, "nor scratch space")
	refused(backendWith(t, p, cs, catalogEdited(t, "persistentVolumeClaim: {claimName: {{json .Storage.PVC}}}", `persistentVolumeClaim: {claimName: "language-data"}`)),
		"another claim", "probe", nil, "mounts PersistentVolumeClaim language-data for team vision")
	refused(backendWith(t, p, cs, catalogEdited(t, "namespace: {{json .Kubernetes.Namespace}}", `namespace: "qm-language"`)),
		"another namespace", "probe", nil, `in namespace "qm-language", not the team's qm-vision`)
	if n := count(); n != before {
		t.Errorf("refused starts created %d objects", n-before)
	}
}

// onlyOwnStorage: the pod mounts the claim and scratch space only, and works in the storage path.
func onlyOwnStorage(t *testing.T, spec corev1.PodSpec, claim, path string) {
	t.Helper()
	for _, v := range spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim:
		case v.EmptyDir != nil:
		default:
			t.Errorf("volume %s is not claim %s or scratch: %+v", v.Name, claim, v.VolumeSource)
		}
	}
	c := spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if c.WorkingDir != path || env["QM_DATA"] != path || !strings.HasPrefix(env["QM_JOB_DIR"], path+"/") {
		t.Errorf("works in %s with QM_DATA=%s QM_JOB_DIR=%s, want %s", c.WorkingDir, env["QM_DATA"], env["QM_JOB_DIR"], path)
	}
}
