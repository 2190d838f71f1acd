package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// templates render refused for a parameter the template does not have, or a value it does not
// take, keeps the other parameters given in its example, as /gpu submit does, with any required
// one it lacks: typed back, it renders them.
func TestTemplatesRenderKeepsTheRightParameters(t *testing.T) {
	t.Parallel()
	const file = "../../docs/quartermaster.example.yaml"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cuda-smoke", "size=1024", "sise=9"}, "quartermaster templates render cuda-smoke --policy " + file + " size=1024"},
		{[]string{"hf-lora", "epochs=7", "lora_rank=0", "bogus=1"}, "quartermaster templates render hf-lora --policy " + file + " dataset="},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append(append([]string{"templates", "render"}, tc.args...), "--policy", file), nil, &out, &errb)
		msg := errb.String()
		i := strings.Index(msg, "e.g. ")
		if code == 0 || i < 0 {
			t.Errorf("render %v: exit %d, %q; want a refusal with an example", tc.args, code, msg)
			continue
		}
		ex := strings.TrimSpace(msg[i+len("e.g. "):])
		if !strings.HasPrefix(ex, tc.want) {
			t.Errorf("render %v: example %q, want it to start %q", tc.args, ex, tc.want)
			continue
		}
		if tc.args[0] == "hf-lora" && !strings.Contains(ex, "epochs=7") {
			t.Errorf("render %v: example %q drops epochs=7", tc.args, ex)
		}
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), append(strings.Fields(ex)[1:], "--policy", file), nil, &out, &errb); code != 0 {
			t.Errorf("the example %s does not render: exit %d: %s", ex, code, errb.String())
		}
	}
}
