package deploy

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/template"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join(root, "deploy", "helm", "quartermaster")

// renderHelm renders the chart with helm template and the given values file.
func renderHelm(t *testing.T, helm, valuesFile string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm, "template", "qm", chartDir, "--namespace", "gpu", "-f", valuesFile)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%v: %s", err, errb.String())
	}
	return out.String(), nil
}

// renderGo renders the chart's templates with Go's text/template and the handful of Helm
// functions the chart uses (include, default, quote, toYaml, nindent, trunc, trimSuffix, contains,
// fail, sha256sum, .Files.Get), for machines without helm. When helm is there, the test checks
// that both agree.
func renderGo(t *testing.T, valuesFile string) (string, error) {
	t.Helper()
	values := readYAML(t, filepath.Join(chartDir, "values.yaml"))
	merge(values, readYAML(t, valuesFile))
	chart := readYAML(t, filepath.Join(chartDir, "Chart.yaml"))
	data := map[string]any{
		"Values":  values,
		"Release": map[string]any{"Name": "qm", "Namespace": "gpu", "Service": "Helm"},
		"Chart":   map[string]any{"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"]},
		"Files":   chartFiles(chartDir),
	}
	root := template.New("chart")
	funcs := template.FuncMap{
		"include": func(name string, d any) (string, error) {
			var b bytes.Buffer
			err := root.ExecuteTemplate(&b, name, d)
			return b.String(), err
		},
		"default": func(def any, v ...any) any {
			if len(v) == 0 || v[0] == nil || v[0] == "" || v[0] == false {
				return def
			}
			return v[0]
		},
		"quote": func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
		"toYaml": func(v any) (string, error) {
			b, err := yaml.Marshal(v)
			return strings.TrimSuffix(string(b), "\n"), err
		},
		"nindent":    func(n int, s string) string { return "\n" + indent(n, s) },
		"trunc":      func(n int, s string) string { return s[:min(n, len(s))] },
		"trimSuffix": func(suf, s string) string { return strings.TrimSuffix(s, suf) },
		"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
		"fail":       func(msg string) (string, error) { return "", fmt.Errorf("%s", msg) },
		"sha256sum":  func(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) },
	}
	root.Funcs(funcs)
	files, _ := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	sort.Strings(files)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := root.New(filepath.Base(f)).Parse(string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.HasSuffix(f, ".yaml") {
			names = append(names, filepath.Base(f))
		}
	}
	var out strings.Builder
	for _, n := range names {
		var b bytes.Buffer
		if err := root.ExecuteTemplate(&b, n, data); err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "---\n# Source: quartermaster/templates/%s\n%s\n", n, strings.ReplaceAll(b.String(), "<no value>", ""))
	}
	return out.String(), nil
}

// chartFiles is a chart's .Files: Get is a file of the chart as text, "" when there is none.
type chartFiles string

func (dir chartFiles) Get(name string) string {
	b, err := os.ReadFile(filepath.Join(string(dir), filepath.FromSlash(name)))
	if err != nil {
		return ""
	}
	return string(b)
}

func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// merge lays b over a, as helm -f does.
func merge(a, b map[string]any) {
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := a[k].(map[string]any); ok {
				merge(am, bm)
				continue
			}
		}
		a[k] = v
	}
}

// objects are the rendered documents, by kind, each decoded strictly: a field Kubernetes does not
// know is an error, as the API server would refuse it.
type objects struct {
	deployment     *appsv1.Deployment
	service        *corev1.Service
	configMap      *corev1.ConfigMap
	serviceAccount *corev1.ServiceAccount
	clusterRole    *rbacv1.ClusterRole
	binding        *rbacv1.ClusterRoleBinding
	serviceMonitor map[string]any
	prometheusRule map[string]any
	kinds          []string
}

func decode(t *testing.T, rendered string) objects {
	t.Helper()
	var o objects
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(rendered, -1) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("a rendered document is not YAML: %v\n%s", err, doc)
		}
		if meta.Kind == "" {
			continue
		}
		o.kinds = append(o.kinds, meta.Kind)
		var into any
		switch meta.Kind {
		case "Deployment":
			o.deployment = &appsv1.Deployment{}
			into = o.deployment
		case "Service":
			o.service = &corev1.Service{}
			into = o.service
		case "ConfigMap":
			o.configMap = &corev1.ConfigMap{}
			into = o.configMap
		case "ServiceAccount":
			o.serviceAccount = &corev1.ServiceAccount{}
			into = o.serviceAccount
		case "ClusterRole":
			o.clusterRole = &rbacv1.ClusterRole{}
			into = o.clusterRole
		case "ClusterRoleBinding":
			o.binding = &rbacv1.ClusterRoleBinding{}
			into = o.binding
		case "ServiceMonitor":
			o.serviceMonitor = map[string]any{}
			into = &o.serviceMonitor
		case "PrometheusRule":
			o.prometheusRule = map[string]any{}
			into = &o.prometheusRule
		default:
			t.Fatalf("the chart renders a %s the test does not know", meta.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s: %v\n%s", meta.Kind, err, doc)
		}
	}
	sort.Strings(o.kinds)
	return o
}

func writeValues(t *testing.T, v string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHelmChart renders the chart (with helm when it is installed: lint and template; with Go's
// text/template otherwise, and with both when it can, which must agree) and checks what an
// operator relies on: replicas, the probes on /healthz and /readyz, secrets only as files named by
// *_FILE variables, a non-root pod, the policy mounted where QM_POLICY points, the ServiceMonitor
// and the PrometheusRule (with the rules of deploy/prometheus/quartermaster.rules.yml) only when
// asked for, and a refusal without a policy.
func TestHelmChart(t *testing.T) {
	helm, _ := exec.LookPath("helm")
	if helm == "" {
		t.Log("helm is not installed: rendering with Go's text/template only (helm lint and helm template not run)")
	} else {
		out, err := exec.Command(helm, "lint", chartDir, "--set", "policy.content=organization: X").CombinedOutput()
		if err != nil {
			t.Fatalf("helm lint: %v\n%s", err, out)
		}
	}
	render := func(values string) (string, error) {
		f := writeValues(t, values)
		goOut, goErr := renderGo(t, f)
		if helm == "" {
			return goOut, goErr
		}
		helmOut, helmErr := renderHelm(t, helm, f)
		if (goErr == nil) != (helmErr == nil) {
			t.Fatalf("helm and the Go rendering disagree: helm %v, Go %v", helmErr, goErr)
		}
		if helmErr == nil && !reflect.DeepEqual(decode(t, helmOut), decode(t, goOut)) {
			t.Fatalf("helm and the Go rendering disagree:\n--- helm\n%s\n--- Go\n%s", helmOut, goOut)
		}
		return helmOut, helmErr
	}

	out, err := render("policy:\n  content: |\n    organization: Orbit Labs\n    backend: kubernetes\nreplicaCount: 3\n")
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, out)
	if want := []string{"ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "Service", "ServiceAccount"}; !reflect.DeepEqual(o.kinds, want) {
		t.Errorf("rendered %v, want %v", o.kinds, want)
	}
	d := o.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %+v readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("the pod may run as root")
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("%s takes a secret into the environment; secrets go in files", e.Name)
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for name, key := range map[string]string{"QM_DATABASE_URL_FILE": "database-url", "SLACK_BOT_TOKEN_FILE": "slack-bot-token", "SLACK_SIGNING_SECRET_FILE": "slack-signing-secret"} {
		if env[name] != mounts["secrets"]+"/"+key {
			t.Errorf("%s=%q, want the secret file %s/%s", name, env[name], mounts["secrets"], key)
		}
	}
	if _, ok := env["SLACK_APP_TOKEN_FILE"]; ok {
		t.Error("SLACK_APP_TOKEN_FILE is set though its key is empty")
	}
	if env["QM_POLICY"] != mounts["policy"]+"/quartermaster.yaml" || o.configMap == nil || !strings.Contains(o.configMap.Data["quartermaster.yaml"], "Orbit Labs") {
		t.Errorf("QM_POLICY=%q, policy mounted at %q, ConfigMap %v", env["QM_POLICY"], mounts["policy"], o.configMap)
	}
	var secretVol *corev1.SecretVolumeSource
	for _, v := range pod.Volumes {
		if v.Name == "secrets" {
			secretVol = v.Secret
		}
	}
	if secretVol == nil || secretVol.SecretName != "quartermaster" {
		t.Errorf("the secrets volume is %+v, want the Secret quartermaster", secretVol)
	}
	for k, v := range o.service.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
	documented := string(mustRead(t, filepath.Join(root, "docs", "configuration.md")))
	for name := range env {
		if !strings.Contains(documented, "`"+name+"`") {
			t.Errorf("the chart sets %s, which docs/configuration.md does not list", name)
		}
	}

	out, err = render("policy:\n  existingConfigMap: gpu-rules\nserviceMonitor:\n  enabled: true\n  labels: {release: prom}\nprometheusRule:\n  enabled: true\n  labels: {release: prom}\nsecrets:\n  keys: {slackAppToken: slack-app-token}\n")
	if err != nil {
		t.Fatal(err)
	}
	o = decode(t, out)
	if o.configMap != nil {
		t.Error("a ConfigMap is made though the policy's exists")
	}
	sm := o.serviceMonitor
	if sm == nil {
		t.Fatal("no ServiceMonitor with serviceMonitor.enabled")
	}
	ep := sm["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	if ep["path"] != "/metrics" || ep["port"] != "http" || sm["metadata"].(map[string]any)["labels"].(map[string]any)["release"] != "prom" {
		t.Errorf("ServiceMonitor %v", sm)
	}
	pr := o.prometheusRule
	if pr == nil {
		t.Fatal("no PrometheusRule with prometheusRule.enabled")
	}
	if pr["apiVersion"] != "monitoring.coreos.com/v1" || pr["metadata"].(map[string]any)["labels"].(map[string]any)["release"] != "prom" {
		t.Errorf("PrometheusRule %v", pr["metadata"])
	}
	if shipped := readYAML(t, filepath.Join(root, "deploy", "prometheus", "quartermaster.rules.yml")); !reflect.DeepEqual(pr["spec"], shipped) {
		t.Errorf("the PrometheusRule's rules are not those of deploy/prometheus/quartermaster.rules.yml:\n%v\nwant\n%v", pr["spec"], shipped)
	}
	for _, v := range o.deployment.Spec.Template.Spec.Volumes {
		if v.Name == "policy" && v.ConfigMap.Name != "gpu-rules" {
			t.Errorf("the policy comes from %s, not gpu-rules", v.ConfigMap.Name)
		}
	}

	if _, err := render("replicaCount: 1\n"); err == nil || !strings.Contains(err.Error(), "serve refuses to start without a policy") {
		t.Errorf("no policy: %v", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHelmChartCarriesEverySecretServeReads: every secret serve takes from a file (the …_FILE
// variables docs/configuration.md lists for serve: the database URL, Slack's, Discord's and single
// sign-on's) can be given to the chart as a key of its Secret, and then reaches the pod as that
// variable naming the mounted file, so no deployment needs a token in a plain environment value.
func TestHelmChartCarriesEverySecretServeReads(t *testing.T) {
	var want []string
	for _, line := range strings.Split(string(mustRead(t, filepath.Join(root, "docs", "configuration.md"))), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !regexp.MustCompile(`\bserve\b`).MatchString(cells[4]) {
			continue
		}
		for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]*_FILE)`").FindAllStringSubmatch(cells[1], -1) {
			want = append(want, m[1])
		}
	}
	if len(want) < 5 {
		t.Fatalf("found only %v as serve's secret files in docs/configuration.md", want)
	}
	values := readYAML(t, filepath.Join(chartDir, "values.yaml"))
	keys := values["secrets"].(map[string]any)["keys"].(map[string]any)
	var set strings.Builder
	set.WriteString("policy:\n  content: 'organization: Orbit Labs'\nsecrets:\n  keys:\n")
	for k := range keys {
		fmt.Fprintf(&set, "    %s: key-%s\n", k, strings.ToLower(k))
	}
	out, err := renderGo(t, writeValues(t, set.String()))
	if err != nil {
		t.Fatal(err)
	}
	c := decode(t, out).deployment.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	for _, name := range want {
		if v := env[name]; !strings.HasPrefix(v, "/etc/quartermaster/secrets/key-") {
			t.Errorf("with every key of secrets.keys set, the pod has %s=%q; want it to name a file of the mounted Secret (values.yaml has no key for it)", name, v)
		}
	}
}

// TestAChangedPolicyRollsThePods: serve reads its policy at start only, so a `helm upgrade` that
// changes policy.content must change the pod template (a checksum of the policy), which rolls the
// pods one by one; otherwise the ConfigMap changes, no pod restarts, and each pod takes the new
// policy whenever it happens to restart, so replicas run different rules. The same policy rolls
// nothing.
func TestAChangedPolicyRollsThePods(t *testing.T) {
	podTemplate := func(policy string) map[string]string {
		t.Helper()
		out, err := renderGo(t, writeValues(t, "policy:\n  content: |\n    "+policy+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, out).deployment.Spec.Template.Annotations
	}
	before, same, after := podTemplate("organization: Orbit Labs"), podTemplate("organization: Orbit Labs"), podTemplate("organization: Orbit Labs GmbH")
	if reflect.DeepEqual(before, after) {
		t.Errorf("a changed policy leaves the pod template as it was (annotations %v), so no pod restarts to read it", before)
	}
	if !reflect.DeepEqual(before, same) {
		t.Errorf("the same policy changes the pod template: %v, then %v", before, same)
	}
}

// TestTheChartRefusesToRunWithoutADatabase: the pods' only writable place is an emptyDir, so
// without a database URL every replica would keep its own SQLite file there, lost at each restart
// and seen by no other replica; the chart refuses to render, saying which value to set.
func TestTheChartRefusesToRunWithoutADatabase(t *testing.T) {
	_, err := renderGo(t, writeValues(t, "policy:\n  content: 'organization: Orbit Labs'\nsecrets:\n  keys:\n    databaseURL: ''\n"))
	if err == nil || !strings.Contains(err.Error(), "secrets.keys.databaseURL") {
		t.Errorf("rendered without a database URL: %v; want a refusal naming secrets.keys.databaseURL", err)
	}
}

// kubeCallRE finds the Kubernetes backend's API calls through the typed clientset:
// b.c.CoreV1().Nodes().List, b.c.BatchV1().Jobs(ns).Update, b.c.CoreV1().Pods(ns).GetLogs.
var kubeCallRE = regexp.MustCompile(`\.(CoreV1|BatchV1)\(\)\.([A-Za-z]+)\([^)]*\)\.([A-Za-z]+)\(`)

// TestTheChartGrantsEveryCallTheKubernetesBackendMakes: with rbac.create, the ClusterRole allows
// every call internal/kube makes (found in its code, so a new call fails this test until the chart
// grants it). A call the role lacks is refused as forbidden on a real cluster: without nodes list
// no inventory is ever read (placement, capacity and whole-node leases know no node, and every
// reconcile pass logs the refusal), without pods/log a failed workload's last lines are never shown.
func TestTheChartGrantsEveryCallTheKubernetesBackendMakes(t *testing.T) {
	type grant struct{ group, resource, verb string }
	need := map[grant][]string{}
	files, _ := filepath.Glob(filepath.Join(root, "internal", "kube", "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for i, line := range strings.Split(string(mustRead(t, f)), "\n") {
			for _, m := range kubeCallRE.FindAllStringSubmatch(line, -1) {
				g := grant{resource: strings.ToLower(m[2]), verb: strings.ToLower(m[3])}
				if m[1] == "BatchV1" {
					g.group = "batch"
				}
				switch m[3] {
				case "GetLogs":
					g.resource, g.verb = g.resource+"/log", "get"
				case "DeleteCollection":
					g.verb = "deletecollection"
				}
				need[g] = append(need[g], fmt.Sprintf("%s:%d", strings.TrimPrefix(f, root+"/"), i+1))
			}
		}
	}
	if len(need) < 10 {
		t.Fatalf("found only %d calls in internal/kube; has the scan stopped seeing the code?", len(need))
	}
	out, err := renderGo(t, writeValues(t, "policy:\n  content: |\n    organization: Orbit Labs\n    backend: kubernetes\n"))
	if err != nil {
		t.Fatal(err)
	}
	role := decode(t, out).clusterRole
	if role == nil {
		t.Fatal("no ClusterRole with rbac.create")
	}
	allowed := func(g grant) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, g.group) && slices.Contains(r.Resources, g.resource) && (slices.Contains(r.Verbs, g.verb) || slices.Contains(r.Verbs, "*")) {
				return true
			}
		}
		return false
	}
	var missing []string
	for g, at := range need {
		if !allowed(g) {
			group := g.group
			if group == "" {
				group = `""`
			}
			missing = append(missing, fmt.Sprintf("%s %s (group %s), called at %s", g.verb, g.resource, group, strings.Join(at, ", ")))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("the chart's ClusterRole does not allow %s", m)
	}
}

// TestTheChartShipsTheAlertRulesOfDeployPrometheus: the alerting rules an operator loads from
// deploy/prometheus (rule_files) and those the chart deploys as a PrometheusRule are one file, so
// a rule changed in one place is changed in the other.
func TestTheChartShipsTheAlertRulesOfDeployPrometheus(t *testing.T) {
	shipped := mustRead(t, filepath.Join(root, "deploy", "prometheus", "quartermaster.rules.yml"))
	inChart := mustRead(t, filepath.Join(chartDir, "files", "quartermaster.rules.yml"))
	if !bytes.Equal(shipped, inChart) {
		t.Error("deploy/prometheus/quartermaster.rules.yml and the chart's files/quartermaster.rules.yml differ; keep one file (deploy/prometheus's is a link to the chart's)")
	}
}

// TestTheChartRunsWithoutSlackAsTheDocsInstallIt: docs/operations.md installs the chart without
// Slack by setting the Slack keys empty (a key the Secret lacks would stop every pod at start);
// with them so, the pod is given no Slack setting, so serve starts with Slack off, and still its
// database and its image as set.
func TestTheChartRunsWithoutSlackAsTheDocsInstallIt(t *testing.T) {
	ops := string(mustRead(t, filepath.Join(root, "docs", "operations.md")))
	for _, set := range []string{"--set secrets.keys.slackBotToken= --set secrets.keys.slackSigningSecret=", "--set image.repository=registry.example.com/quartermaster --set image.tag=v1.2.0"} {
		if !strings.Contains(ops, set) {
			t.Errorf("docs/operations.md no longer installs the chart with %s", set)
		}
	}
	out, err := renderGo(t, writeValues(t, "policy:\n  content: 'organization: Marlin Labs'\nsecrets:\n  keys:\n    slackBotToken: ''\n    slackSigningSecret: ''\nimage:\n  repository: registry.example.com/quartermaster\n  tag: v1.2.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := decode(t, out).deployment.Spec.Template.Spec.Containers[0]
	if c.Image != "registry.example.com/quartermaster:v1.2.0" {
		t.Errorf("the pod runs %s, want the image set", c.Image)
	}
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
		if strings.HasPrefix(e.Name, "SLACK_") {
			t.Errorf("without the Slack keys the pod still has %s=%s, a file the Secret does not hold", e.Name, e.Value)
		}
	}
	if !slices.Contains(names, "QM_DATABASE_URL_FILE") {
		t.Errorf("the pod has no QM_DATABASE_URL_FILE: %v", names)
	}
}
