package console

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// realClock is a console on a real scheduler (Slurm, Kubernetes): time passes with :wait, and
// there is neither a simulated clock to move nor simulated telemetry to set.
func realClock(out *bytes.Buffer) *Console {
	return &Console{Handler: &recorder{}, Out: out, ExampleUser: "ines@alpine.example", ExampleClass: "l40s-shared",
		Controls: Controls{Now: time.Now, Wait: func(context.Context, time.Duration) error { return nil }}}
}

// On a real scheduler every refusal of a console control gives an example that this console
// takes: typed back, it is not refused again. :util there says that the GPUs' utilization comes
// from the node agents, and :advance with a bad duration gives :wait as its example, since
// :advance itself is refused on a real clock.
func TestRealClockConsoleRefusalsGiveExamplesItTakes(t *testing.T) {
	ctx := context.Background()
	for _, line := range []string{":util L-1 0", ":util L-1", ":util L-1 lots", ":advance soon", ":advance -2h", ":advance", ":advance 45m", ":wait soon", ":nope"} {
		var out bytes.Buffer
		c := realClock(&out)
		c.Line(ctx, line)
		got := strings.TrimSpace(out.String())
		_, ex, ok := strings.Cut(got, " Example: ")
		if !ok {
			t.Errorf("%s on a real scheduler: %q, want a refusal with an example", line, got)
			continue
		}
		if line == ":util L-1 0" && !strings.Contains(got, "node agent") {
			t.Errorf("%s on a real scheduler: %q, want it to say the GPUs' utilization comes from the node agents", line, got)
		}
		out.Reset()
		c.Line(ctx, ex)
		if again := strings.TrimSpace(out.String()); again != "" {
			t.Errorf("%s on a real scheduler gave the example %q, which is refused in turn: %q", line, ex, again)
		}
	}
}

// The greeting on a terminal names only controls this console takes: on a real scheduler,
// :wait and not :advance or :util.
func TestRealClockConsoleGreetingNamesItsControls(t *testing.T) {
	var out bytes.Buffer
	c := realClock(&out)
	c.Prompt = true
	_ = c.Run(context.Background(), strings.NewReader(""))
	greeting := strings.SplitN(out.String(), "\n", 2)[0]
	if strings.Contains(greeting, ":advance") || strings.Contains(greeting, ":util") || !strings.Contains(greeting, ":wait") {
		t.Errorf("greeting on a real scheduler: %q, want :wait and neither :advance nor :util", greeting)
	}
}
