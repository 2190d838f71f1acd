package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// floorHandler does the least any endpoint must: read the body, check the signature (Slack's
// HMAC or Discord's Ed25519) and answer 200. The load sent to it is the floor the service's
// figures are set beside: what this machine's loopback, HTTP stack and signature checks cost.
func floorHandler(slackSecret []byte, discordKey ed25519.PublicKey) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/discord/interactions" {
			sig, err := hex.DecodeString(r.Header.Get("X-Signature-Ed25519"))
			if err != nil || !ed25519.Verify(discordKey, append([]byte(r.Header.Get("X-Signature-Timestamp")), body...), sig) {
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"type":5}`)
			return
		}
		m := hmac.New(sha256.New, slackSecret)
		fmt.Fprintf(m, "v0:%s:%s", r.Header.Get("X-Slack-Request-Timestamp"), body)
		want := "v0=" + hex.EncodeToString(m.Sum(nil))
		if !hmac.Equal([]byte(want), []byte(r.Header.Get("X-Slack-Signature"))) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// runFloorServer is `quartermaster-load floor`: the floor handler in a process of its own, as the
// service runs in one; it prints its address and serves until its input closes.
func runFloorServer(stdin io.Reader, stdout io.Writer) error {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 4096), 4096)
	if !sc.Scan() {
		return fmt.Errorf("floor: expected the Slack secret and the Discord public key on the first line of input")
	}
	fields := strings.Fields(sc.Text())
	if len(fields) != 2 {
		return fmt.Errorf("floor: expected two words on the first line of input, the Slack secret and the Discord public key in hex")
	}
	key, err := hex.DecodeString(fields[1])
	if err != nil || len(key) != ed25519.PublicKeySize {
		return fmt.Errorf("floor: %q is not an Ed25519 public key in hex", fields[1])
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: floorHandler([]byte(fields[0]), key), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintln(stdout, ln.Addr().String())
	for sc.Scan() {
	}
	return srv.Close()
}

// floorProcess is a running `quartermaster-load floor`.
type floorProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
}

func startFloor(ctx context.Context, s signer) (*floorProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "floor")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the floor server: %w", err)
	}
	fmt.Fprintf(in, "%s %s\n", s.slackSecret, hex.EncodeToString(s.discordKey.Public().(ed25519.PublicKey)))
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = in.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the floor server did not start: %w", err)
	}
	return &floorProcess{cmd: cmd, stdin: in, url: "http://" + strings.TrimSpace(line)}, nil
}

func (f *floorProcess) stop() {
	_ = f.stdin.Close()
	_ = f.cmd.Wait()
}
