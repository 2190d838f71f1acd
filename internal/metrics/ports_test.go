package metrics

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// everyPort is a backend with every optional port the service asks a backend for.
type everyPort struct{ fakeBackend }

func (everyPort) StartsInstantly() bool                                     { return false }
func (everyPort) Jobs(context.Context) ([]qm.Job, error)                    { return nil, nil }
func (everyPort) Cancel(context.Context, qm.Job) error                      { return nil }
func (everyPort) SetTimeLimit(context.Context, qm.Job, time.Duration) error { return nil }
func (everyPort) RefreshInventory(context.Context) error                    { return nil }
func (everyPort) NodesAway(string) string                                   { return "every node of class train is drained" }
func (everyPort) KnowsGPUIndexes(string) bool                               { return false }
func (everyPort) GoneWords(string) string                                   { return "its job is gone" }
func (everyPort) Sweep(context.Context, *qm.Lease) error                    { return nil }
func (everyPort) Leftovers() []qm.LeaseID                                   { return nil }
func (everyPort) SweepAdvice(qm.LeaseID, error) string                      { return "delete it by hand" }
func (everyPort) PodUIDs(context.Context, string) ([]string, error)         { return []string{"uid-1"}, nil }

// slurmLike has the ports a Slurm backend has: no instant start, and more than the ports the
// wrapper counts the calls of.
type slurmLike struct{ fakeRefreshingRetimer }

func (slurmLike) NodesAway(string) string                { return "every node of class train is drained" }
func (slurmLike) GoneWords(string) string                { return "job 7 is gone from Slurm" }
func (slurmLike) Sweep(context.Context, *qm.Lease) error { return nil }

// ports asks for each optional port of a backend by its name in internal/qm, as the service asks.
// Every port the service asks for is here (TestEveryPortTheServiceAsksForIsListed).
var ports = map[string]func(qm.Backend) bool{
	"InstantBackend":     has[qm.InstantBackend],
	"Watcher":            has[qm.Watcher],
	"Retimer":            has[qm.Retimer],
	"InventoryRefresher": has[qm.InventoryRefresher],
	"NodesAwayTeller":    has[qm.NodesAwayTeller],
	"GPUIndexKnower":     has[qm.GPUIndexKnower],
	"GoneNamer":          has[qm.GoneNamer],
	"Sweeper":            has[qm.Sweeper],
	"LeftoverFinder":     has[qm.LeftoverFinder],
	"SweepAdviser":       has[qm.SweepAdviser],
	// cmd/quartermaster's own: a Kubernetes backend's pods behind a lease, for the node agents.
	"podUIDer": has[interface {
		PodUIDs(ctx context.Context, ref string) ([]string, error)
	}],
}

func has[T any](b qm.Backend) bool {
	_, ok := qm.BackendAs[T](b)
	return ok
}

// TestNoPortIsLostToTheWrapper: wrapped to count its calls, a backend still has every optional
// port it has unwrapped (a drained exclusive class waits in the service's queue, a Kubernetes
// job's words and sweeps stay), and gains none it lacks.
func TestNoPortIsLostToTheWrapper(t *testing.T) {
	m := New(Build{})
	for _, b := range []qm.Backend{&everyPort{}, &slurmLike{}, &fakeBackend{}, &fakeWatcher{}, &fakeRefresher{}, &fakeInstant{}} {
		w := m.Backend("fake", b)
		for name, asks := range ports {
			if got, want := asks(w), asks(b); got != want {
				t.Errorf("%T wrapped: has %s %v, unwrapped %v", b, name, got, want)
			}
		}
	}
	w := m.Backend("slurm", &everyPort{})
	if n, _ := qm.BackendAs[qm.NodesAwayTeller](w); n.NodesAway("train") == "" {
		t.Error("wrapped, the backend no longer says why a class's nodes are away")
	}
	if k, _ := qm.BackendAs[qm.GPUIndexKnower](w); k.KnowsGPUIndexes("train") {
		t.Error("wrapped, a backend that does not know its GPU indexes says it does")
	}
	// Calls through the ports the wrapper counts are counted.
	ctx := context.Background()
	wt, _ := qm.BackendAs[qm.Watcher](w)
	_, _ = wt.Jobs(ctx)
	_ = wt.Cancel(ctx, qm.Job{})
	rt, _ := qm.BackendAs[qm.Retimer](w)
	_ = rt.SetTimeLimit(ctx, qm.Job{}, time.Hour)
	rf, _ := qm.BackendAs[qm.InventoryRefresher](w)
	_ = rf.RefreshInventory(ctx)
	ib, _ := qm.BackendAs[qm.InstantBackend](w)
	_, _ = ib.Start(ctx, &qm.Lease{})
	for _, op := range []string{"jobs", "cancel", "set_time_limit", "refresh_inventory", "start"} {
		if got := value(t, m, "quartermaster_backend_calls_total", "backend", "slurm", "op", op); got != 1 {
			t.Errorf("%s calls through the wrapped port: %v, want 1", op, got)
		}
	}
}

// TestEveryPortTheServiceAsksForIsListed reads internal/qm and cmd/quartermaster: every optional
// port asked of a backend is asked with qm.BackendAs (a type assertion on the backend, or on a
// port found, would see the wrapper, not the backend), and each is in ports, so that
// TestNoPortIsLostToTheWrapper checks it.
func TestEveryPortTheServiceAsksForIsListed(t *testing.T) {
	asked := map[string]bool{}
	for _, dir := range []string{"../qm", "../../cmd/quartermaster"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					return n.Name.Name != "BackendAs" // the one place that asks a backend itself
				case *ast.IndexExpr:
					if name := funcName(n.X); name == "BackendAs" {
						asked[typeName(n.Index)] = true
					}
				case *ast.TypeAssertExpr:
					if n.Type == nil {
						return true // a type switch's own
					}
					if sel, ok := n.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Backend" && typeName(n.Type) != "pinger" {
						// pinger apart: the wrapper answers Ping itself, counting it.
						t.Errorf("%s: the backend is asked for %s by a type assertion, which the wrapper answers no to; ask with qm.BackendAs",
							fset.Position(n.Pos()), typeName(n.Type))
					}
					if _, ok := n.X.(*ast.Ident); ok && dir == "../qm" {
						t.Errorf("%s: a value is asked for %s by a type assertion: where it is a backend's port, the wrapper's port answers no; ask the backend with BackendAs",
							fset.Position(n.Pos()), typeName(n.Type))
					}
				}
				return true
			})
		}
	}
	if len(asked) == 0 {
		t.Fatal("found no port asked for with BackendAs")
	}
	var missing []string
	for name := range asked {
		if ports[name] == nil {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the service asks backends for %s, which ports does not list: add each, and to everyPort", strings.Join(missing, ", "))
	}
}

func funcName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

func typeName(e ast.Expr) string {
	if name := funcName(e); name != "" {
		return name
	}
	return "an unnamed interface"
}
