package templates

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	qmtemplates "github.com/acme/quartermaster/templates"
)

// FuzzLoad: no template definition file, however broken, makes the loader panic; a refusal is a
// *LoadError that names the file, and a definition that loads is listed under its name.
func FuzzLoad(f *testing.F) {
	f.Add(goodDefinition)
	names, err := fs.Glob(qmtemplates.FS, "*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range names {
		data, err := fs.ReadFile(qmtemplates.FS, n)
		if err != nil {
			f.Fatal(err)
		}
		// Each embedded definition, as the file the fuzzer writes: hello.yaml.
		f.Add(strings.Replace(string(data), "name: "+strings.TrimSuffix(n, ".yaml")+"\n", "name: hello\n", 1))
	}
	f.Add("name: hello\nversion: 1\nparameters:\n  - name: x\n - name: y\n")
	f.Add("name: hello\nparameters: [~, {name: a, type: enum}]\nrun: '{{.P.a}}'\n")
	f.Add("- 1\n")
	f.Add("")
	m := fstest.MapFS{}
	for _, file := range []string{layoutSlurm, layoutKubernetes, defaultsFile} {
		data, err := fs.ReadFile(qmtemplates.FS, file)
		if err != nil {
			f.Fatal(err)
		}
		m[file] = &fstest.MapFile{Data: data}
	}
	f.Fuzz(func(t *testing.T, body string) {
		fsys := fstest.MapFS{"hello.yaml": &fstest.MapFile{Data: []byte(body)}}
		for k, v := range m {
			fsys[k] = v
		}
		c, err := Load(fsys)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || le.File != "hello.yaml" || le.Msg == "" {
				t.Fatalf("refused with %v (%T): not a problem of hello.yaml", err, err)
			}
			return
		}
		if tp, err := c.Get("hello"); err != nil || tp.Name != "hello" || len(c.List()) != 1 {
			t.Fatalf("loaded, but not as hello: %v", c.List())
		}
	})
}
