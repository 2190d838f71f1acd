package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	qmtemplates "github.com/acme/quartermaster/templates"

	"github.com/acme/quartermaster/internal/templates"
)

// templates render of a template whose required parameters are left out names every one of
// them, with an example that gives them all and renders when typed back.
func TestTemplatesRenderWithoutRequiredParametersGivesAnExampleThatRenders(t *testing.T) {
	t.Parallel() // TestMain unsets QM_POLICY and the other settings of a shell
	const file = "../../docs/quartermaster.example.yaml"
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range cat.List() {
		var required []string
		for _, p := range tp.Parameters {
			if p.Required {
				required = append(required, p.Name)
			}
		}
		if len(required) == 0 {
			continue
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"templates", "render", tp.Name, "--policy", file}, nil, &out, &errb)
		msg := errb.String()
		i := strings.Index(msg, "e.g. quartermaster templates render "+tp.Name)
		if code == 0 || i < 0 {
			t.Errorf("render %s: exit %d, %q; want a refusal with an example", tp.Name, code, msg)
			continue
		}
		line := strings.TrimSpace(strings.SplitN(msg[i+len("e.g. "):], "\n", 2)[0])
		for _, name := range required {
			if !strings.Contains(line, " "+name+"=") {
				t.Errorf("render %s: the example %q leaves out required %s", tp.Name, line, name)
			}
			if !strings.Contains(msg[:i], name) {
				t.Errorf("render %s: the refusal %q does not name missing %s", tp.Name, msg[:i], name)
			}
		}
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), append(strings.Fields(line)[1:], "--policy", file), nil, &out, &errb); code != 0 {
			t.Errorf("render %s: the example %q does not render: exit %d, %s", tp.Name, line, code, errb.String())
		}
	}
}

// A parameter render refuses gets an example that keeps the other parameters given, and so
// renders when typed back, where the template has other required parameters.
func TestTemplatesRenderRefusalKeepsTheOtherParameters(t *testing.T) {
	t.Parallel()
	const file = "../../docs/quartermaster.example.yaml"
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range cat.List() {
		var paths, required []string
		for _, p := range tp.Parameters {
			if p.Required {
				required = append(required, p.Name)
				if p.Type == templates.TypePath {
					paths = append(paths, p.Name)
				}
			}
		}
		if len(required) < 2 || len(paths) == 0 {
			continue
		}
		ex := tp.ExampleParams()
		args := []string{"templates", "render", tp.Name, "--policy", file}
		for _, name := range required {
			v := ex[name]
			if name == paths[0] {
				v = "/etc/outside" // outside the team storage
			}
			args = append(args, name+"="+v)
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), args, nil, &out, &errb)
		msg := errb.String()
		i := strings.Index(msg, "e.g. quartermaster templates render "+tp.Name)
		if code == 0 || i < 0 {
			t.Errorf("%v: exit %d, %q; want a refusal with an example", args, code, msg)
			continue
		}
		line := strings.TrimSpace(strings.SplitN(msg[i+len("e.g. "):], "\n", 2)[0])
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), append(strings.Fields(line)[1:], "--policy", file), nil, &out, &errb); code != 0 {
			t.Errorf("%v: the example %q does not render: exit %d, %s", args, line, code, errb.String())
		}
	}
}
