package templates_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/acme/quartermaster/internal/templates"
)

// kubeObject is one decoded document of a manifest.
type kubeObject struct {
	kind string
	obj  any // *corev1.Pod, *batchv1.Job or *corev1.Service
}

// decodeStrict splits a multi-document manifest and decodes each document strictly into its
// Kubernetes API type by kind: an unknown or duplicated field, or a value of the wrong type, fails.
func decodeStrict(manifest string) ([]kubeObject, error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var out []kubeObject
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		var obj any
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 Pod":
			obj = &corev1.Pod{}
		case "batch/v1 Job":
			obj = &batchv1.Job{}
		case "v1 Service":
			obj = &corev1.Service{}
		default:
			return nil, fmt.Errorf("unexpected document %s %s", meta.APIVersion, meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: %w", meta.Kind, err)
		}
		out = append(out, kubeObject{meta.Kind, obj})
	}
	return out, nil
}

// kubeScripts are the container scripts (bash -c ARG) in a manifest.
func kubeScripts(t testing.TB, manifest string) []string {
	t.Helper()
	objs, err := decodeStrict(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		if spec := podSpec(o); spec != nil {
			for _, c := range spec.Containers {
				out = append(out, c.Args...)
			}
		}
	}
	return out
}

func podSpec(o kubeObject) *corev1.PodSpec {
	switch v := o.obj.(type) {
	case *corev1.Pod:
		return &v.Spec
	case *batchv1.Job:
		return &v.Spec.Template.Spec
	}
	return nil
}

// TestManifestsDecodeStrictly decodes every rendered manifest into the Kubernetes API types and
// checks what the lease promises: namespace, labels, GPU limits, node selector, the team's PVC,
// the deadline.
func TestManifestsDecodeStrictly(t *testing.T) {
	for _, rc := range cases(t) {
		t.Run(rc.name, func(t *testing.T) {
			out := render(t, rc)
			objs, err := decodeStrict(out.KubernetesYAML)
			if err != nil {
				t.Fatalf("strict decode: %v\n%s", err, out.KubernetesYAML)
			}
			var workloads, services int
			for _, o := range objs {
				checkMeta(t, rc, o)
				switch v := o.obj.(type) {
				case *corev1.Pod:
					workloads++
					t.Error("a template renders a bare Pod, whose deadline cannot be raised when its lease is extended")
				case *batchv1.Job:
					workloads++
					checkDeadline(t, v.Spec.ActiveDeadlineSeconds, rc)
					if d := v.Spec.Template.Spec.ActiveDeadlineSeconds; d != nil {
						t.Errorf("the Job's pods have a deadline of their own (%d s), which an extension cannot raise", *d)
					}
					want := int32(1)
					if out.Tasks > 0 {
						want = int32(out.Tasks)
					} else if out.Nodes > 1 {
						want = int32(out.Nodes)
					}
					if got := ptrOr(v.Spec.Completions, 1); got != want {
						t.Errorf("Job completions %d, want %d", got, want)
					}
					if (want > 1) != (v.Spec.CompletionMode != nil && *v.Spec.CompletionMode == batchv1.IndexedCompletion) {
						t.Error("a Job of several pods must be Indexed (and only then)")
					}
					if l := v.Spec.Template.Labels; l["quartermaster.io/lease"] != rc.in.Lease || l["quartermaster.io/team"] != rc.in.Team || l["quartermaster.io/class"] != rc.in.Class {
						t.Errorf("pod template labels %v", l)
					}
				case *corev1.Service:
					services++
					if v.Spec.Selector["quartermaster.io/lease"] != rc.in.Lease {
						t.Errorf("Service selects %v", v.Spec.Selector)
					}
				}
				if spec := podSpec(o); spec != nil {
					checkPodSpec(t, rc, out, spec)
				}
			}
			if workloads != 1 {
				t.Errorf("%d Pods/Jobs, want 1", workloads)
			}
			wantSvc := rc.tmpl.Connect != nil || (out.Nodes > 1 && out.Tasks == 0)
			if (services == 1) != wantSvc || services > 1 {
				t.Errorf("%d Services, want one: %v", services, wantSvc)
			}
		})
	}
}

func checkMeta(t *testing.T, rc renderCase, o kubeObject) {
	t.Helper()
	var name, ns string
	var labels map[string]string
	switch v := o.obj.(type) {
	case *corev1.Pod:
		name, ns, labels = v.Name, v.Namespace, v.Labels
	case *batchv1.Job:
		name, ns, labels = v.Name, v.Namespace, v.Labels
	case *corev1.Service:
		name, ns, labels = v.Name, v.Namespace, v.Labels
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		t.Errorf("%s name %q: %v", o.kind, name, errs)
	}
	if ns != "qm-"+rc.in.Team {
		t.Errorf("%s namespace %q, want qm-%s", o.kind, ns, rc.in.Team)
	}
	if labels["quartermaster.io/lease"] != rc.in.Lease || labels["quartermaster.io/team"] != rc.in.Team {
		t.Errorf("%s labels %v", o.kind, labels)
	}
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Errorf("label key %q: %v", k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label %s=%q: %v", k, v, errs)
		}
	}
}

func checkDeadline(t *testing.T, got *int64, rc renderCase) {
	t.Helper()
	if got == nil || *got != int64(rc.in.Duration.Seconds()) {
		t.Errorf("activeDeadlineSeconds %v, want %d", got, int64(rc.in.Duration.Seconds()))
	}
}

func checkPodSpec(t *testing.T, rc renderCase, out templates.Rendered, spec *corev1.PodSpec) {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	gpu := corev1.ResourceName(templates.DefaultGPUResource)
	q, ok := c.Resources.Limits[gpu]
	if rc.tmpl.CPUOnly() {
		if ok {
			t.Error("a CPU-only template asks for GPUs")
		}
	} else if !ok || q.Cmp(resource.MustParse(fmt.Sprint(out.GPUsPerNode))) != 0 {
		t.Errorf("GPU limit %v, want %d", c.Resources.Limits, out.GPUsPerNode)
	}
	for k, v := range rc.in.Kubernetes.NodeSelector {
		if spec.NodeSelector[k] != v {
			t.Errorf("nodeSelector %v lacks %s=%s", spec.NodeSelector, k, v)
		}
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", spec.RestartPolicy)
	}
	var pvc bool
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			if v.PersistentVolumeClaim.ClaimName != templates.DefaultPVC {
				t.Errorf("claim %q", v.PersistentVolumeClaim.ClaimName)
			}
			pvc = true
		}
	}
	if !pvc {
		t.Error("the team's PVC is not mounted")
	}
	var mounted bool
	for _, m := range c.VolumeMounts {
		if m.MountPath == rc.in.Storage.Path {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("team storage not mounted at %s", rc.in.Storage.Path)
	}
	if c.Image != out.Image {
		t.Errorf("image %q, want %q", c.Image, out.Image)
	}
}

func ptrOr(p *int32, d int32) int32 {
	if p == nil {
		return d
	}
	return *p
}

// TestStrictDecodeRejectsUnknownFields shows the check above has teeth.
func TestStrictDecodeRejectsUnknownFields(t *testing.T) {
	tp, _ := catalog(t).Get("jupyterlab")
	out, err := tp.Render(templates.ExampleInput(tp, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(out.KubernetesYAML, "      restartPolicy: Never\n", "      restartPolicy: Never\n      restartPolicyy: Always\n", 1)
	if broken == out.KubernetesYAML {
		t.Fatal("no restartPolicy line to break")
	}
	if _, err := decodeStrict(broken); err == nil || !strings.Contains(err.Error(), "restartPolicyy") {
		t.Errorf("unknown field accepted: %v", err)
	}
}

// TestPolicyNamesRender renders every template for a team and a class named as the policy allows
// but as a DNS label may not be (an underscore: ml_research, a100_80g): both backends render, the
// objects decode and carry valid names and labels, and the team's namespace is a DNS label of its
// own, not the one of a team whose name differs only by - for _.
func TestPolicyNamesRender(t *testing.T) {
	namespaces := map[string]string{}
	for _, team := range []string{"ml_research", "ml-research", "data_eng_2", "x"} {
		for _, tp := range catalog(t).List() {
			in := templates.ExampleInput(tp, "", exampleParams(t, tp))
			in.Team, in.Class, in.Kubernetes.Namespace = team, "a100_80g", ""
			in.Kubernetes.NodeSelector = map[string]string{"gpu.example/class": "a100_80g"}
			out, err := tp.Render(in)
			if err != nil {
				t.Fatalf("%s for team %s: %v", tp.Name, team, err)
			}
			if errs := validation.IsDNS1123Label(out.Namespace); len(errs) > 0 {
				t.Errorf("%s for team %s: namespace %q: %v", tp.Name, team, out.Namespace, errs)
			}
			if ns, ok := namespaces[team]; ok && ns != out.Namespace {
				t.Errorf("team %s has namespaces %s and %s", team, ns, out.Namespace)
			}
			namespaces[team] = out.Namespace
			objs, err := decodeStrict(out.KubernetesYAML)
			if err != nil {
				t.Fatalf("%s for team %s: %v", tp.Name, team, err)
			}
			for _, o := range objs {
				var ns string
				var labels map[string]string
				switch v := o.obj.(type) {
				case *batchv1.Job:
					ns, labels = v.Namespace, v.Spec.Template.Labels
				case *corev1.Service:
					ns, labels = v.Namespace, v.Labels
				}
				if ns != out.Namespace {
					t.Errorf("%s for team %s: %s in namespace %q, want %q", tp.Name, team, o.kind, ns, out.Namespace)
				}
				if labels["quartermaster.io/team"] != team || labels["quartermaster.io/class"] != "a100_80g" {
					t.Errorf("%s for team %s: labels %v", tp.Name, team, labels)
				}
				for k, v := range labels {
					if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
						t.Errorf("label %s=%q: %v", k, v, errs)
					}
				}
			}
			if !strings.Contains(out.SlurmScript, "QM_TEAM="+team+" ") {
				t.Errorf("%s for team %s: the script does not name the team", tp.Name, team)
			}
		}
	}
	if namespaces["ml-research"] != "qm-ml-research" || namespaces["x"] != "qm-x" {
		t.Errorf("a team whose name is a DNS label does not keep qm-TEAM: %v", namespaces)
	}
	if namespaces["ml_research"] == namespaces["ml-research"] {
		t.Errorf("teams ml_research and ml-research share namespace %s, and with it their storage claim", namespaces["ml_research"])
	}
}

// TestAnyEmailAddressRenders: a user is whatever e-mail address the directory or the IdP gives,
// canonicalised to lower case: an apostrophe (o'brien@…), a plus, other characters an address may
// hold, letters of any script (an internationalised address, jürgen.müller@… or 用户@例子.广告),
// or a long address render for both backends, and the workload sees exactly that user in
// QM_USER; a line break or a space of any kind, or an invisible formatting character, which no
// address holds, is still refused.
func TestAnyEmailAddressRenders(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	tp, _ := catalog(t).Get("ssh-shell")
	long := "maria-fernanda.gonzalez-rodriguez.external+gpu-cluster@" + // 54 + 96 characters
		"computational-neuroscience.department-of-biomedical-engineering.research-hospital.example.edu"
	for _, user := range []string{"o'brien@acme.example", "jane.doe+gpu@acme.example", "a&b{c}|d~e#f$g!h@acme.example", "x=`y`@acme.example", long,
		"jürgen.müller@acme.example", "josé@münchen.example", "用户@例子.广告", "δοκιμή@παράδειγμα.δοκιμή", "अजय@डाटा.भारत"} {
		in := templates.ExampleInput(tp, "", nil)
		in.User = user
		out, err := tp.Render(in)
		if err != nil {
			t.Errorf("user %q: %v", user, err)
			continue
		}
		i := strings.Index(out.SlurmScript, "\nexport QM_LEASE=")
		line, _, _ := strings.Cut(out.SlurmScript[i+1:], "\n")
		got, err := exec.Command("bash", "-c", line+"\nprintf %s \"$QM_USER\"").Output()
		if err != nil || string(got) != user {
			t.Errorf("user %q: the Slurm script's QM_USER is %q (%v)", user, got, err)
		}
		objs, err := decodeStrict(out.KubernetesYAML)
		if err != nil {
			t.Fatalf("user %q: %v", user, err)
		}
		for _, o := range objs {
			if j, ok := o.obj.(*batchv1.Job); ok {
				if j.Annotations["quartermaster.io/user"] != user {
					t.Errorf("user %q: annotation %q", user, j.Annotations["quartermaster.io/user"])
				}
				for _, e := range j.Spec.Template.Spec.Containers[0].Env {
					if e.Name == "QM_USER" && e.Value != user {
						t.Errorf("user %q: QM_USER %q in the pod", user, e.Value)
					}
				}
			}
		}
		bashN(t, user, out.SlurmScript)
	}
	for _, user := range []string{"alice@acme.example\n#SBATCH --partition=other", "alice smith@acme.example", "", strings.Repeat("a", 250) + "@acme.example",
		"alice\u2028#SBATCH@acme.example", "alice\u00a0smith@acme.example", "alice\u202e@acme.example", "alice\u200b@acme.example"} {
		in := templates.ExampleInput(tp, "", nil)
		in.User = user
		if _, err := tp.Render(in); err == nil {
			t.Errorf("user %q rendered", user)
		}
	}
}
