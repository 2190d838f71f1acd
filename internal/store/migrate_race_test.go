package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store"
)

// openerEnv makes the test binary, run again, open one database and exit: 0 when Open succeeded,
// 1 with the error on stderr otherwise.
const openerEnv = "QM_TEST_OPEN_SQLITE"

func TestOpenHelperProcess(t *testing.T) {
	path := os.Getenv(openerEnv)
	if path == "" {
		t.Skip("run by TestTwoProcessesStartingOnANewSQLiteFileBothStart")
	}
	// Start together: wait for the go file the parent writes once every process runs.
	for {
		if _, err := os.Stat(path + ".go"); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if os.Getenv(openerEnv+"_STATUS") != "" { // as `quartermaster migrate status` does
		db, err := store.Connect(context.Background(), "sqlite:"+path, nil)
		if err == nil {
			_, err = db.Status(context.Background())
			_ = db.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "STATUS FAILED:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	db, err := store.Open(context.Background(), "sqlite:"+path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "OPEN FAILED:", err)
		os.Exit(1)
	}
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "CLOSE FAILED:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Several processes started at once on a SQLite file that does not exist yet (replicas, or serve
// and a migrate run or status) all start: one applies the migrations while the others wait, and
// none fails with "table … already exists" or "database is locked".
func TestTwoProcessesStartingOnANewSQLiteFileBothStart(t *testing.T) {
	const procs = 6
	for round := range 3 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("qm-%d.db", round))
		var wg sync.WaitGroup
		errs := make([]string, procs)
		cmds := make([]*exec.Cmd, procs)
		for i := range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpenHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), openerEnv+"="+path)
			if i%3 == 2 {
				cmd.Env = append(cmd.Env, openerEnv+"_STATUS=1")
			}
			cmds[i] = cmd
		}
		for i, cmd := range cmds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := cmd.CombinedOutput()
				if err != nil {
					errs[i] = fmt.Sprintf("%v: %s", err, out)
				}
			}()
		}
		time.Sleep(200 * time.Millisecond) // let every process reach the start line
		if err := os.WriteFile(path+".go", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("round %d, process %d did not start: %s", round, i, e)
			}
		}
		db, err := store.Connect(t.Context(), "sqlite:"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := db.Status(t.Context())
		_ = db.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range st {
			if !m.Applied {
				t.Errorf("round %d: migration %s not applied", round, m.Name)
			}
		}
	}
}
