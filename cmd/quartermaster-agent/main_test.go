package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/nvml"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// needFake skips a test that runs the agent on a fake machine in a build without one (no cgo).
func needFake(t *testing.T) {
	t.Helper()
	if _, err := nvml.NewFake("dgxa100", "x", nil); err != nil {
		t.Skipf("no fake in this build: %v", err)
	}
}

// Bad flags and scripts get one sentence and an example, and exit 2.
func TestBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"metrics", "--fake", "dgx1"},
		{"metrics", "--fake", "dgxa100", "--fake-util", "0 150"},
		{"metrics", "--fake-util", "0 50"},
		{"metrics", "--fake", "dgxa100", "--fake-util", "1 0 mig=4g.20gb,4g.20gb"},
		{"metrics", "--labels", "camel", "--fake", "dgxa100"},
		{"run", "--fake", "dgxa100", "--interval", "10ms"},
		{"run", "--fake", "dgxa100", "--service", "", "--listen", ""},
		{"gres-conf", "--fake", "dgxa100", "--type", "A 100"},
	} {
		code, _, stderr := runCmd(args...)
		if code == 0 || !strings.HasPrefix(stderr, "quartermaster-agent: ") || strings.Contains(stderr, "panic") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// The one-shot commands on a fake machine.
func TestOneShotCommandsOnFake(t *testing.T) {
	if _, err := nvml.NewFake("dgxa100", "x", nil); err != nil {
		t.Skipf("no fake in this build: %v", err)
	}
	code, out, stderr := runCmd("metrics", "--fake", "dgxa100", "--node", "dgx-07", "--fake-util", "0 85 mem=20480; * 0")
	if code != 0 || !strings.Contains(out, `DCGM_FI_DEV_GPU_UTIL{Hostname="dgx-07"`) || !strings.Contains(out, `device="nvidia0",gpu="0",hpc_job="",modelName="Mock NVIDIA A100-SXM4-40GB",pci_bus_id="0000:07:00.0",pod_uid=""} 85`) {
		t.Errorf("metrics: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ = runCmd("topology", "--fake", "dgxh100")
	if code != 0 || !strings.HasPrefix(out, "\tGPU0\tGPU1") || !strings.Contains(out, "GPU4\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\t56-111,168-223\t1\n") {
		t.Errorf("topology: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd("gres-conf", "--fake", "dgxh100", "--node", "dgx-07", "--with-nodename")
	if code != 0 || !strings.Contains(out, "NodeName=dgx-07 Name=gpu Type=h100 File=/dev/nvidia7 Cores=56-111 Links=18,18,18,18,18,18,18,-1\n") ||
		!strings.Contains(out, ": 8 x Mock NVIDIA H100 80GB HBM3.\n") {
		t.Errorf("gres-conf: exit %d\n%s", code, out)
	}
}

// A demo of MIG: a fake GPU in MIG mode from --fake-util's mig=, shown in /metrics as
// dcgm-exporter shows MIG instances.
func TestFakeMIGMetrics(t *testing.T) {
	needFake(t)
	code, out, stderr := runCmd("metrics", "--fake", "dgxh100", "--node", "dgx-07", "--fake-util", "1 40 mig=3g.40gb,1g.10gb pids=4242; * 0")
	if code != 0 || !strings.Contains(out, `DCGM_FI_DEV_FB_FREE{GPU_I_ID="1",GPU_I_PROFILE="3g.40gb",Hostname="dgx-07",`) ||
		!strings.Contains(out, `DCGM_FI_DEV_FB_USED{GPU_I_ID="2",GPU_I_PROFILE="1g.10gb",Hostname="dgx-07",`) || strings.Count(out, "GPU_I_ID=") != 4 {
		t.Errorf("metrics: exit %d\n%s\n%s", code, out, stderr)
	}
}

// Without a GPU or driver the agent says so in one sentence and exits non-zero. (Skipped on a
// machine that has an NVIDIA driver.)
func TestNoGPUOneSentence(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has an NVIDIA driver")
	}
	for _, cmd := range []string{"metrics", "topology", "gres-conf"} {
		code, out, stderr := runCmd(cmd)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 1 || out != "" || len(lines) != 1 || !strings.Contains(stderr, "GPU") {
			t.Errorf("%s without a GPU: exit %d, stdout %q, stderr %q", cmd, code, out, stderr)
		}
	}
	code, _, stderr := runCmd("run", "--listen", "127.0.0.1:0")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("run without a GPU: exit %d, stderr %q", code, stderr)
	}
}

// A --service that is not an http:// or https:// URL is refused at start, in one sentence whose
// example is the command as typed with a URL that is one, before any report is made (it would only
// be dropped every interval).
func TestServiceURLRefused(t *testing.T) {
	t.Setenv("QM_AGENT_TOKEN", "qma_x")
	// The example is the URL meant where one can be told: the scheme added to a host and port
	// (http:// for a port other than 443), the query taken off.
	meant := map[string]string{"127.0.0.1:18080": "http://127.0.0.1:18080", "localhost:8080": "http://localhost:8080",
		"qm.example.com": "https://qm.example.com", "ftp://qm.example.com": "https://qm.example.com", "https://": "https://qm.example.com",
		"https://qm.example.com/?x=1": "https://qm.example.com/"}
	for _, service := range []string{"127.0.0.1:18080", "localhost:8080", "qm.example.com", "ftp://qm.example.com", "https://", "https://qm.example.com/?x=1"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var out, errb bytes.Buffer
		code := run(ctx, []string{"run", "--fake", "dgxa100", "--listen", "", "--interval", "1s", "--service", service}, &out, &errb)
		cancel()
		first, _, _ := strings.Cut(errb.String(), "\n")
		if code != 2 || !strings.HasPrefix(first, "quartermaster-agent: --service "+strconv.Quote(service)) || first+"\n" != errb.String() ||
			!strings.HasSuffix(first, "; e.g. quartermaster-agent run --fake dgxa100 --listen '' --interval 1s --service "+meant[service]) {
			t.Errorf("--service %q: exit %d, stderr %q", service, code, errb.String())
		}
	}
}

// The token comes from QM_AGENT_TOKEN_FILE (its trailing newline dropped) or QM_AGENT_TOKEN;
// setting both is refused in one sentence, as for every secret.
func TestTokenFromEnvironment(t *testing.T) {
	needFake(t)
	got := make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		_, _ = io.WriteString(w, `{"accepted":true}`)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(file, []byte("qma_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--fake", "dgxa100", "--listen", "", "--service", srv.URL}
	runFor := func() (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		var out, errb bytes.Buffer
		return run(ctx, args, &out, &errb), errb.String()
	}

	t.Setenv("QM_AGENT_TOKEN", "qma_env")
	t.Setenv("QM_AGENT_TOKEN_FILE", file)
	code, stderr := runFor()
	if code != 1 || stderr != "quartermaster-agent: both QM_AGENT_TOKEN and QM_AGENT_TOKEN_FILE are set; keep one (the file is safer), e.g. unset QM_AGENT_TOKEN and keep QM_AGENT_TOKEN_FILE="+file+"\n" {
		t.Errorf("both set: exit %d, stderr %q", code, stderr)
	}
	for _, c := range []struct{ token, file, want string }{{"", file, "Bearer qma_file"}, {"qma_env", "", "Bearer qma_env"}} {
		t.Setenv("QM_AGENT_TOKEN", c.token)
		t.Setenv("QM_AGENT_TOKEN_FILE", c.file)
		if code, stderr := runFor(); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		select {
		case auth := <-got:
			if auth != c.want {
				t.Errorf("QM_AGENT_TOKEN %q, QM_AGENT_TOKEN_FILE %q: the report carried %q, want %q", c.token, c.file, auth, c.want)
			}
		default:
			t.Errorf("QM_AGENT_TOKEN %q, QM_AGENT_TOKEN_FILE %q: no report reached the service", c.token, c.file)
		}
		for len(got) > 0 {
			<-got
		}
	}
}

// A --window under 1 and a fake GPU script naming a GPU the fake lacks are refused in one
// sentence, and the example the sentence gives works.
func TestOutOfRangeRefused(t *testing.T) {
	needFake(t)
	script := filepath.Join(t.TempDir(), "util.txt")
	if err := os.WriteFile(script, []byte("0 85\n9 50\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--window", "0"}, "--window 0 is out of range"},
		{[]string{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--window", "-1"}, "--window -1 is out of range"},
		{[]string{"metrics", "--fake", "dgxa100", "--fake-util", "9 50"}, "--fake-util names GPU 9, but the fake dgxa100 has 8 GPUs (0-7)"},
		{[]string{"metrics", "--fake", "dgxh100", "--fake-util", "0 50; 6-8 10"}, "--fake-util names GPU 8, but the fake dgxh100 has 8 GPUs (0-7)"},
		{[]string{"metrics", "--fake", "dgxa100", "--fake-script", script}, "the fake GPU script " + script + " names GPU 9, but the fake dgxa100 has 8 GPUs (0-7)"},
	} {
		code, stderr := runWithin(c.args, 2*time.Second)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.HasPrefix(first, "quartermaster-agent: "+c.want) || strings.Contains(strings.ReplaceAll(first, "e.g. ", ""), ". ") {
			t.Errorf("%q: exit %d, stderr %q", c.args, code, stderr)
			continue
		}
		_, example, ok := strings.Cut(first, "e.g. quartermaster-agent ")
		if !ok {
			t.Errorf("%q: %q does not end with the command put right", c.args, first)
			continue
		}
		args := splitShell(example)
		if code, stderr := runWithin(args, time.Second); code != 0 {
			t.Errorf("the example %q does not work: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// runWithin runs the agent until it exits or d passes.
func runWithin(args []string, d time.Duration) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errb bytes.Buffer
	return run(ctx, args, &out, &errb), errb.String()
}

// --help (and -h, and help) prints the usage on standard output and exits 0: the commands, the
// command's flags and the environment variables; a usage error is one sentence, as quartermaster's,
// with no usage after it.
func TestHelp(t *testing.T) {
	code, out, stderr := runCmd("--help")
	if code != 0 || stderr != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"usage: quartermaster-agent [COMMAND] [flags]", "\n  run ", "\n  metrics ", "\n  gres-conf ", "\n  topology ",
		"\n  -service string", "\n  -token-file string", "\n  -window int", "\n  -fake string",
		"QM_NODE", "QM_SERVICE_URL", "QM_AGENT_TOKEN ", "QM_AGENT_TOKEN_FILE", "QM_AGENT_LISTEN", "QM_AGENT_FAKE", "\nexamples:"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Usage of") || strings.Contains(out, "`") {
		t.Errorf("--help prints flag's own usage or a backtick:\n%s", out)
	}
	for _, args := range [][]string{{"-h"}, {"run", "--help"}, {"help"}} {
		if code, o, e := runCmd(args...); code != 0 || o != out || e != "" {
			t.Errorf("%q: exit %d, stderr %q, and a usage unlike --help's:\n%s", args, code, e, o)
		}
	}
	code, gres, _ := runCmd("gres-conf", "--help")
	if code != 0 || !strings.Contains(gres, "\n  -with-nodename") || !strings.Contains(gres, "QM_AGENT_FAKE") || strings.Contains(gres, "\n  -service") || strings.Contains(gres, "QM_SERVICE_URL") {
		t.Errorf("gres-conf --help: exit %d\n%s", code, gres)
	}
	if code, o, _ := runCmd("help", "gres-conf"); code != 0 || o != gres {
		t.Errorf("help gres-conf: exit %d, a usage unlike gres-conf --help's:\n%s", code, o)
	}
	code, _, stderr = runCmd("--bogus")
	if code != 2 || stderr != "quartermaster-agent: there is no flag --bogus; `quartermaster-agent run --help` lists the flags of run, e.g. quartermaster-agent run\n" {
		t.Errorf("an unknown flag: exit %d, stderr\n%s", code, stderr)
	}
	code, _, stderr = runCmd("frobnicate")
	if code != 2 || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "usage:") {
		t.Errorf("an unknown command: exit %d, stderr\n%s", code, stderr)
	}
}

// An --interval without a unit, and a --token-file that is empty, are refused in one sentence that
// says what is wrong with what was given, not a bare "parse error" or "no token" next to the very
// flag that was passed.
func TestIntervalWithoutUnitAndEmptyTokenFile(t *testing.T) {
	needFake(t)
	code, stderr := runWithin([]string{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--interval", "10"}, 2*time.Second)
	first, _, _ := strings.Cut(stderr, "\n")
	if code != 2 || !strings.Contains(first, `--interval "10" is not a duration`) || !strings.HasSuffix(first, "e.g. quartermaster-agent run --fake dgxa100 --listen 127.0.0.1:0 --interval 10s") {
		t.Errorf("--interval 10: exit %d, stderr %q", code, stderr)
	}
	empty := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr = runWithin([]string{"run", "--fake", "dgxa100", "--listen", "", "--service", "https://qm.example.com", "--token-file", empty}, 2*time.Second)
	if code != 1 || stderr != "quartermaster-agent: the token file "+empty+" is empty; put the token `quartermaster agent-token create NODE` prints in it\n" {
		t.Errorf("an empty --token-file: exit %d, stderr %q", code, stderr)
	}
}

// A MIG profile the fake's GPUs do not have (an H100's 1g.20gb on the A100-40GB of dgxa100, an
// A100-40GB's 1g.5gb on an H100) is refused at start, in one sentence that lists the fake's
// profiles and gives a line that works, rather than shown under a profile name and memory no such
// GPU has; a --fake-script changed to one keeps the last good script.
func TestFakeMIGProfileTheGPULacksRefused(t *testing.T) {
	needFake(t)
	for _, c := range []struct{ fake, util, profile, example string }{
		{"dgxa100", "1 0 mig=1g.20gb; * 0", "1g.20gb", "1g.5gb"},
		{"dgxa100", "1 0 mig=7g.80gb", "7g.80gb", "1g.5gb"},
		{"dgxh100", "2 0 mig=1g.5gb", "1g.5gb", "1g.10gb"},
	} {
		code, out, stderr := runCmd("metrics", "--fake", c.fake, "--fake-util", c.util)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || out != "" || !strings.Contains(first, strconv.Quote(c.profile)) || !strings.Contains(first, c.example+",") ||
			!strings.Contains(first, "e.g. quartermaster-agent metrics --fake "+c.fake+" --fake-util '1 0 mig=") {
			t.Errorf("--fake %s --fake-util %q: exit %d, stdout %d bytes, stderr %q", c.fake, c.util, code, len(out), first)
		}
	}
	// The profiles the fakes do have pass.
	for fake, util := range map[string]string{
		"dgxa100": "1 0 mig=4g.20gb,3g.20gb; 2 0 mig=2g.10gb,1g.10gb,1g.5gb,1g.5gb,1g.5gb; 3 0 mig=7g.40gb",
		"dgxh100": "1 0 mig=4g.40gb,3g.40gb; 2 0 mig=2g.20gb,1g.20gb,1g.10gb,1g.10gb,1g.10gb; 3 0 mig=7g.80gb",
	} {
		if code, _, stderr := runCmd("metrics", "--fake", fake, "--fake-util", util); code != 0 {
			t.Errorf("--fake %s --fake-util %q: exit %d, %s", fake, util, code, stderr)
		}
	}

	dir := t.TempDir()
	script := filepath.Join(dir, "util.txt")
	if err := os.WriteFile(script, []byte("1 0 mig=1g.5gb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd("metrics", "--fake", "dgxh100", "--fake-script", script)
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || !strings.Contains(first, `"1g.5gb"`) || !strings.Contains(first, script) {
		t.Errorf("--fake-script with 1g.5gb on dgxh100: exit %d, stderr %q", code, first)
	}
}

// A node's token rotated while the agent runs (agent-token revoke and create, the new token put
// in the Secret the DaemonSet's QM_AGENT_TOKEN_FILE names) is picked up once the service refuses
// the old one: the reports kept meanwhile reach the service, from the first, without a restart.
func TestRotatedTokenFileIsReadAgain(t *testing.T) {
	needFake(t)
	var mu sync.Mutex
	var took []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rep struct {
			Seq int `json:"seq"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &rep)
		if r.Header.Get("Authorization") != "Bearer qma_new" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"this token is unknown or revoked"}`)
			return
		}
		mu.Lock()
		took = append(took, strconv.Itoa(rep.Seq))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"accepted":true}`)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "gpu-01")
	if err := os.WriteFile(file, []byte("qma_old\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QM_AGENT_TOKEN", "")
	t.Setenv("QM_AGENT_TOKEN_FILE", file)
	go func() {
		time.Sleep(400 * time.Millisecond)
		_ = os.Remove(file) // a Secret volume swaps the file, it does not write into it
		_ = os.WriteFile(file, []byte("qma_new\n"), 0o440)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"run", "--fake", "dgxa100", "--node", "gpu-01", "--listen", "", "--interval", "10s", "--service", srv.URL}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(took, []string{"1"}) {
		t.Errorf("the service took reports %v, want the first, kept while the token was refused\n%s", took, errb.String())
	}
}

// A file or address the agent cannot use is refused in one sentence that names the flag and
// gives one that works, not in the bare words of the call that failed.
func TestUnusableFileOrAddressNamesItsFlag(t *testing.T) {
	needFake(t)
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		args     []string
		flag, eg string
	}{
		{[]string{"run", "--fake", "dgxa100", "--listen", "", "--service", "https://qm.example.com", "--token-file", missing}, "--token-file", "e.g. quartermaster-agent run --fake dgxa100 --listen '' --service https://qm.example.com --token-file /etc/quartermaster/agent.token"},
		{[]string{"metrics", "--fake", "dgxa100", "--fake-script", missing}, "--fake-script", "e.g. "},
		{[]string{"run", "--fake", "dgxa100", "--listen", "9400"}, "--listen", "e.g. quartermaster-agent run --fake dgxa100 --listen :9400"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var out, errb bytes.Buffer
		code := run(ctx, c.args, &out, &errb)
		cancel()
		var first string
		for _, l := range strings.Split(errb.String(), "\n") {
			if strings.HasPrefix(l, "quartermaster-agent: ") {
				first = l
				break
			}
		}
		if code == 0 || !strings.Contains(first, c.flag+" ") || !strings.Contains(first, c.eg) {
			t.Errorf("%v: exit %d, stderr %q; want a sentence naming %s with %q", c.args, code, errb.String(), c.flag, c.eg)
		}
	}
}

// --service without a token is a usage error (exit 2) found before the GPUs are opened: one
// sentence naming the node's `agent-token create` and the flag to pass it with, the command as
// typed with it as the example, and no usage after it, nor a log line of
// a machine opened first (on a fake, "running on a fake machine"; without a GPU, "no NVIDIA
// driver", which would hide what is really missing).
func TestServiceWithoutTokenIsAUsageError(t *testing.T) {
	t.Setenv("QM_AGENT_TOKEN", "")
	t.Setenv("QM_AGENT_TOKEN_FILE", "")
	runs := [][]string{{"run", "--node", "gpu-07", "--listen", "", "--service", "https://qm.example.com"}}
	if _, err := nvml.NewFake("dgxa100", "x", nil); err == nil {
		runs = append(runs, []string{"run", "--node", "gpu-07", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--service", "https://qm.example.com"})
	}
	for _, args := range runs {
		code, stderr := runWithin(args, 2*time.Second)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || first != "quartermaster-agent: --service is set but no token; create one with `quartermaster agent-token create gpu-07` and pass it with --token-file (or QM_AGENT_TOKEN_FILE), e.g. "+
			commandLine("run", append(args[1:], "--token-file", "/etc/quartermaster/agent.token")) || first+"\n" != stderr {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// A --token-file the agent cannot read says what to do about it, as an unreadable
// QM_AGENT_TOKEN_FILE does: one that is missing, where the token goes; a directory, the file in it.
func TestAnUnreadableTokenFileSaysWhatToDo(t *testing.T) {
	needFake(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "agent.token")
	for _, c := range []struct {
		path string
		want []string
	}{
		{missing, []string{"--token-file names " + missing + ", which does not exist", "quartermaster agent-token create NODE", "e.g. quartermaster-agent run", " --token-file /etc/quartermaster/agent.token"}},
		{dir, []string{"--token-file names " + dir + ", which is a directory", "name the file in it that holds the token"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var out, errb bytes.Buffer
		code := run(ctx, []string{"run", "--fake", "dgxa100", "--listen", "", "--service", "https://qm.example.com", "--token-file", c.path}, &out, &errb)
		cancel()
		for _, w := range c.want {
			if code == 0 || !strings.Contains(errb.String(), w) {
				t.Errorf("--token-file %s: exit %d, %q does not say %q", c.path, code, errb.String(), w)
			}
		}
	}
}
