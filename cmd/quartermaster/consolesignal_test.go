package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// quartermaster console stops on SIGTERM, on SIGINT and on SIGHUP (its terminal closed) even while
// its input stays open: it closes its database and exits 0 on SIGTERM, 130 on SIGINT, as a
// shell's Ctrl-C would have it, and 129 on SIGHUP. The
// database it leaves is whole: a console started on it again answers, and the lease made
// before the signal is there.
func TestConsoleStopsOnASignalWithItsInputOpen(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := quartermasterBinary(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 0}, {syscall.SIGINT, 130}, {syscall.SIGHUP, 129}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
			cmd := exec.Command(bin, "console", "--db", db)
			cmd.Env = append(os.Environ(), "QM_POLICY=", "QM_DATABASE_URL=", "QM_DATABASE_URL_FILE=", "QM_DATA_DIR="+t.TempDir())
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Once the lease is granted the console reads its input, its input still open.
			if _, err := in.Write([]byte("alice@acme.example: /gpu request 1 interactive for 2h\n")); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			deadline := time.After(30 * time.Second)
		wait:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatal("the console ended before the signal")
					}
					if strings.Contains(l, "L-1 is active") {
						break wait
					}
				case <-deadline:
					t.Fatal("the console did not grant the lease")
				}
			}
			go func() {
				for range lines {
				}
			}()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != tc.code {
					t.Errorf("after %s the console exited %d (%v); want %d", tc.sig, code, err, tc.code)
				}
			case <-deadline:
				t.Fatalf("the console still runs after %s, its input open", tc.sig)
			}
			again := exec.Command(bin, "console", "--db", db)
			again.Env = cmd.Env
			again.Stdin = strings.NewReader("alice@acme.example: /gpu list\n")
			b, err := again.CombinedOutput()
			if err != nil || !strings.Contains(string(b), "L-1") {
				t.Errorf("the console on the database left after %s: %v\n%s", tc.sig, err, b)
			}
		})
	}
}
