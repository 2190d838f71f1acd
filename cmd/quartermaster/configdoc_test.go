package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/acme/quartermaster/docs"
)

// repoRoot is the module's root, two levels above this package.
const repoRoot = "../.."

// setting is one environment variable or flag the code reads, and where.
type setting struct {
	name string // QM_POLICY, or --policy
	at   string // file:line
}

// envCallRE names the functions that read an environment variable by name: os.Getenv,
// os.LookupEnv, syscall.Getenv, config.Secret (which also reads NAME_FILE), and helpers named like
// envOr, boolEnv or getEnvDefault. Setenv and Unsetenv write, and are not readings.
var envCallRE = regexp.MustCompile(`^(Getenv|LookupEnv|Secret|SecretFrom|[a-z]*[Ee]nv[A-Z]?[A-Za-z]*|[a-zA-Z]*Env)$`)

// secretReaders read NAME and NAME_FILE (package config).
var secretReaders = map[string]bool{"Secret": true, "SecretFrom": true}

var envWriters = map[string]bool{"Setenv": true, "Unsetenv": true, "Clearenv": true, "Environ": true, "ExpandEnv": true}

// flagMethods are flag.FlagSet's (and package flag's) definers, with the index of the name argument.
var flagMethods = map[string]int{
	"String": 0, "Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0, "Duration": 0,
	"Func": 0, "BoolFunc": 0,
	"StringVar": 1, "BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "Float64Var": 1,
	"DurationVar": 1, "TextVar": 1, "Var": 1,
}

var flagNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// goSources lists the module's non-test Go files, skipping hidden and data directories.
func goSources(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != repoRoot && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "data" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// scanned is what the scanner found in the code.
type scanned struct {
	env, flags []setting
	problems   []string
}

// scanCode finds every environment variable and flag the code reads. A variable named by a
// constant is resolved through the module's string constants; one the scanner cannot name (a loop
// over a list) is resolved to the upper-case string literals of the function around the call, and
// failing that reported, so that nothing escapes the table by being indirect.
func scanCode(t *testing.T) scanned {
	t.Helper()
	out, err := scanSources(goSources(t))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scanSources(paths []string) (scanned, error) {
	fset := token.NewFileSet()
	type parsed struct {
		path string
		f    *ast.File
	}
	var all []parsed
	consts := map[string][]string{} // NAME -> values; package-qualified too ("config.LogFormatEnv")
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return scanned{}, fmt.Errorf("parse %s: %w", path, err)
		}
		all = append(all, parsed{path, f})
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := stringLit(vs.Values[i]); ok {
							consts[n.Name] = append(consts[n.Name], s)
							consts[f.Name.Name+"."+n.Name] = append(consts[f.Name.Name+"."+n.Name], s)
						}
					}
				}
			}
		}
	}
	var out scanned
	for _, p := range all {
		importsFlag := false
		for _, im := range p.f.Imports {
			if im.Path.Value == `"flag"` {
				importsFlag = true
			}
		}
		var fn *ast.FuncDecl
		ast.Inspect(p.f, func(n ast.Node) bool {
			if d, ok := n.(*ast.FuncDecl); ok {
				fn = d
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := calleeName(call.Fun)
			at := fmt.Sprintf("%s:%d", strings.TrimPrefix(p.path, repoRoot+"/"), fset.Position(call.Pos()).Line)
			if idx, ok := flagMethods[name]; ok && importsFlag && len(call.Args) > idx+1 {
				if s, ok := stringLit(call.Args[idx]); ok && flagNameRE.MatchString(s) {
					out.flags = append(out.flags, setting{"--" + s, at})
				}
				return true
			}
			if !envCallRE.MatchString(name) || envWriters[name] || len(call.Args) == 0 {
				return true
			}
			if secretReaders[name] && !isSelectorOf(call.Fun, "config") {
				return true
			}
			names, ok := resolveString(call.Args[0], consts)
			if !ok && fn != nil && envCallRE.MatchString(fn.Name.Name) && isParam(fn, call.Args[0]) {
				// An env helper (envOr(key, def)) reading its own parameter: its callers name the
				// variable, and they are scanned.
				return true
			}
			if !ok {
				if fn != nil {
					names = upperLiterals(fn)
				}
				if len(names) == 0 {
					// A helper whose first argument is not a variable name (strings.Builder etc.)
					// matches the pattern by accident only when it takes no string at all.
					if looksLikeEnvHelper(name) {
						out.problems = append(out.problems, fmt.Sprintf("%s: %s reads a variable the scanner cannot name; pass it as a constant", at, name))
					}
					return true
				}
			}
			for _, v := range names {
				if !envName.MatchString(v) {
					continue
				}
				out.env = append(out.env, setting{v, at})
				if secretReaders[name] {
					out.env = append(out.env, setting{v + "_FILE", at})
				}
			}
			return true
		})
	}
	return out, nil
}

// isParam reports whether e is one of fn's parameters.
func isParam(fn *ast.FuncDecl, e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if !ok || fn.Type.Params == nil {
		return false
	}
	for _, f := range fn.Type.Params.List {
		for _, n := range f.Names {
			if n.Name == id.Name {
				return true
			}
		}
	}
	return false
}

func looksLikeEnvHelper(name string) bool {
	return name == "Getenv" || name == "LookupEnv" || name == "Secret"
}

func calleeName(e ast.Expr) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func isSelectorOf(e ast.Expr, pkg string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == pkg
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// resolveString names the strings an expression can be: a literal, a constant, or a concatenation.
func resolveString(e ast.Expr, consts map[string][]string) ([]string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		s, ok := stringLit(x)
		return []string{s}, ok
	case *ast.Ident:
		v, ok := consts[x.Name]
		return v, ok
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			v, ok := consts[id.Name+"."+x.Sel.Name]
			return v, ok
		}
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return nil, false
		}
		l, ok1 := resolveString(x.X, consts)
		r, ok2 := resolveString(x.Y, consts)
		if !ok1 || !ok2 {
			return nil, false
		}
		var out []string
		for _, a := range l {
			for _, b := range r {
				out = append(out, a+b)
			}
		}
		return out, true
	case *ast.ParenExpr:
		return resolveString(x.X, consts)
	}
	return nil, false
}

// upperLiterals are the string literals in a function that look like environment variables.
func upperLiterals(fn *ast.FuncDecl) []string {
	var out []string
	ast.Inspect(fn, func(n ast.Node) bool {
		if s, ok := stringLit(asExpr(n)); ok && envName.MatchString(s) {
			out = append(out, s)
		}
		return true
	})
	return out
}

func asExpr(n ast.Node) ast.Expr {
	e, _ := n.(ast.Expr)
	return e
}

// scriptEnvRE finds the knobs of the shell scripts: ${NAME:-default}, ${NAME-default}, ${NAME:=…}.
var scriptEnvRE = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*[A-Z0-9]):?[-=]`)

// makeVarRE finds the Makefile's overridable variables: NAME ?= value.
var makeVarRE = regexp.MustCompile(`(?m)^(?:export\s+)?([A-Z][A-Z0-9_]*)\s*\?=`)

// dockerArgRE finds the Dockerfile's build arguments: ARG NAME[=default].
var dockerArgRE = regexp.MustCompile(`^ARG ([A-Z][A-Z0-9_]*)`)

// scanScripts finds the environment variables the scripts, CI and Makefile take, and the
// Dockerfile's build arguments.
func scanScripts(t *testing.T) []setting {
	t.Helper()
	var out []setting
	var files []string
	for _, pat := range []string{"scripts/*.sh", ".ci/*", "Makefile", "deploy/*/*.sh", "Dockerfile"} {
		m, _ := filepath.Glob(filepath.Join(repoRoot, pat))
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(f, repoRoot+"/")
		re := scriptEnvRE
		switch filepath.Base(f) {
		case "Makefile":
			re = makeVarRE
		case "Dockerfile":
			re = dockerArgRE
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				out = append(out, setting{m[1], fmt.Sprintf("%s:%d", rel, i+1)})
			}
		}
	}
	return out
}

// documented is every name in the configuration table.
func documented(t *testing.T) (env, flags map[string]bool) {
	t.Helper()
	rows := confRows(docs.Configuration)
	if len(rows) < 10 {
		t.Fatalf("docs/configuration.md has %d rows in its table; is the table there, under a header whose first cell is name?", len(rows))
	}
	env, flags = map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		for _, e := range r.env {
			env[e] = true
		}
		for _, f := range r.flags {
			flags["--"+f] = true
		}
		if r.what == "" || r.where == "" {
			t.Errorf("docs/configuration.md: the row of %v%v says nothing in 'what it does' or 'where'", r.env, r.flags)
		}
	}
	return env, flags
}

// TestConfigurationDocumentsEverySetting: every environment variable and flag the code (and the
// scripts) read is in the one table of docs/configuration.md. The scan finds os.Getenv, os.LookupEnv,
// config.Secret (NAME and NAME_FILE), env helpers, and flag definitions, so a variable added
// anywhere in the module later fails this test until it is documented.
func TestConfigurationDocumentsEverySetting(t *testing.T) {
	t.Parallel()
	env, flags := documented(t)
	code := scanCode(t)
	for _, p := range code.problems {
		t.Error(p)
	}
	if len(code.env) < 15 || len(code.flags) < 15 {
		t.Fatalf("the scan found only %d variables and %d flags; it has stopped seeing the code", len(code.env), len(code.flags))
	}
	missing := map[string][]string{}
	for _, s := range append(code.env, scanScripts(t)...) {
		if !env[s.name] {
			missing[s.name] = append(missing[s.name], s.at)
		}
	}
	for _, s := range code.flags {
		if !flags[s.name] {
			missing[s.name] = append(missing[s.name], s.at)
		}
	}
	var names []string
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Errorf("%s is read at %s but is not in the table of docs/configuration.md", n, strings.Join(missing[n], ", "))
	}
}

// secretRE are the names that hold secrets.
var secretRE = regexp.MustCompile(`(TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|DATABASE_URL|_DSN)$`)

// TestSecretsComeFromFilesToo: every secret the service reads (a token, a secret, a password, a
// database URL) is read through config.Secret, so NAME_FILE works for it, and both are documented.
func TestSecretsComeFromFilesToo(t *testing.T) {
	t.Parallel()
	code := scanCode(t)
	viaSecret := map[string]bool{}
	for _, s := range code.env {
		if strings.HasSuffix(s.name, "_FILE") {
			viaSecret[strings.TrimSuffix(s.name, "_FILE")] = true
		}
	}
	env, _ := documented(t)
	for _, s := range code.env {
		if !secretRE.MatchString(s.name) || strings.HasPrefix(s.at, "internal/store/storetest/") || s.name == "QM_TEST_POSTGRES_DSN" {
			continue
		}
		if !viaSecret[s.name] {
			t.Errorf("%s (read at %s) holds a secret but is not read with config.Secret, so %s_FILE does not work", s.name, s.at, s.name)
		}
		if !env[s.name+"_FILE"] {
			t.Errorf("%s_FILE is not in docs/configuration.md", s.name)
		}
	}
}

// TestScannerSeesIndirectReads: the scanner resolves a constant, a concatenation and a loop over
// literals, so the table cannot be dodged by writing a read another way.
func TestScannerSeesIndirectReads(t *testing.T) {
	t.Parallel()
	src := `package x
import ("os"; "flag")
const tokenEnv = "QM_X_TOKEN"
func a() { _ = os.Getenv(tokenEnv) }
func b() { _, _ = os.LookupEnv("QM_" + "Y") }
func c() { for _, k := range []string{"QM_Z1", "QM_Z2"} { _ = os.Getenv(k) } }
func d(fs *flag.FlagSet) { var s string; fs.StringVar(&s, "frob", "", "x"); _ = fs.Duration("wait-for", 0, "y") }
func e() string { return envOr("QM_W", "1") }
func envOr(k, d string) string { if v := os.Getenv(k); v != "" { return v }; return d }
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scanSources([]string{filepath.Join(dir, "x.go")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range append(sc.env, sc.flags...) {
		got = append(got, s.name)
	}
	sort.Strings(got)
	want := []string{"--frob", "--wait-for", "QM_W", "QM_X_TOKEN", "QM_Y", "QM_Z1", "QM_Z2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("scanner found %v, want %v", got, want)
	}
}

// A QM_ variable that is a typo of a setting (QM_DATABSE_URL_FILE) stops every command with the
// name it meant, instead of the setting silently taking its default, and without showing its
// value; one that resembles no setting is left alone.
func TestAMistypedSettingIsRefused(t *testing.T) {
	t.Setenv("QM_DATABSE_URL_FILE", "/etc/quartermaster/secrets/database-url")
	code, out, stderr := runQM("policy", "check", "../../docs/quartermaster.example.yaml")
	if code != 2 || out != "" || !strings.Contains(stderr, "QM_DATABSE_URL_FILE is set") ||
		!strings.Contains(stderr, "did you mean QM_DATABASE_URL_FILE?") || strings.Contains(stderr, "secrets/database-url") {
		t.Errorf("a mistyped setting: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// The example renames it: a secret's (its file's) by its variable, never shown; any other's
	// with the value that was set.
	if !strings.HasSuffix(strings.TrimSpace(stderr), `e.g. QM_DATABASE_URL_FILE="$QM_DATABSE_URL_FILE"`) {
		t.Errorf("a mistyped secret's setting: %q; want the example QM_DATABASE_URL_FILE=\"$QM_DATABSE_URL_FILE\"", stderr)
	}
	os.Unsetenv("QM_DATABSE_URL_FILE")
	for _, c := range []struct{ name, value, eg string }{
		{"QM_POLCY", "/srv/qm/kestrel.yaml", "e.g. QM_POLICY=/srv/qm/kestrel.yaml"},
		{"QM_BACKNED", "kubernetes", "e.g. QM_BACKEND=kubernetes"},
		{"QM_DATA_DRI", "/var/lib/qm data", "e.g. QM_DATA_DIR='/var/lib/qm data'"},
	} {
		t.Setenv(c.name, c.value)
		code, _, stderr := runQM("version")
		if msg := strings.TrimSpace(stderr); code != 2 || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, c.eg) {
			t.Errorf("%s=%s: exit %d, %q; want one sentence ending %s", c.name, c.value, code, msg, c.eg)
		}
		os.Unsetenv(c.name)
	}
	t.Setenv("QM_SOMETHING_ELSE_ENTIRELY", "1")
	code, out, stderr = runQM("policy", "check", "../../docs/quartermaster.example.yaml")
	if code != 0 || !strings.Contains(out, "is valid") || stderr != "" {
		t.Errorf("an unrelated QM_ variable: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// The variables a workspace's job is given (QM_LEASE, QM_NNODES, …) are not taken for mistyped
// settings, so quartermaster runs inside a job as anywhere else.
func TestAWorkspacesVariablesAreNoMistypedSettings(t *testing.T) {
	t.Parallel()
	exported := regexp.MustCompile(`\b(?:export |name: )(QM_[A-Z0-9_]+)|\b(QM_[A-Z0-9_]+)=`)
	seen := 0
	for _, dir := range []string{"templates"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range exported.FindAllStringSubmatch(string(b), -1) {
				name := m[1] + m[2]
				seen++
				if err := checkSettingNames([]string{name + "=x"}); err != nil {
					t.Errorf("%s sets %s, which quartermaster takes for a mistyped setting: %v", path, name, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("found no variable a workspace is given")
	}
}
