package commands

import (
	"strings"
	"testing"
)

// A template parameter's value that is right but for a quote not paired at one end of it (a
// pattern, a number, a choice: values that take no quote) is refused as that: the sentence names
// the value without the quote, says the quote is not closed (or never opened), and its example,
// typed back, is accepted with the value typed. Nowhere is the value quoted twice over ("").
func TestAParameterWrongOnlyForAStrayQuoteSaysSo(t *testing.T) {
	for _, tc := range []struct {
		policy, user, ask, param, value string
	}{
		{otherPolicy, "rita@borealis.example", `/gpu submit vllm-server model="acme/tiny`, "model", "acme/tiny"},
		{otherPolicy, "rita@borealis.example", `/gpu submit vllm-server model=acme/tiny'`, "model", "acme/tiny"},
		{otherPolicy, "rita@borealis.example", `/gpu submit vllm-server model=“acme/tiny dtype=float16`, "model", "acme/tiny"},
		{otherPolicy, "rita@borealis.example", `/gpu submit vllm-server max_model_len="1024`, "max_model_len", "1024"},
		{otherPolicy, "rita@borealis.example", `/gpu submit vllm-server dtype='bfloat16`, "dtype", "bfloat16"},
		{noRulesPolicy, "amy@tiny.example", `/gpu submit vllm-server class=l4 model="org/m-1`, "model", "org/m-1"},
		{noRulesPolicy, "amy@tiny.example", `/gpu request 2 l4 for 1h template vllm-server model="org/m-1 dtype=float16`, "model", "org/m-1"},
	} {
		t.Run(tc.ask, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			r := h.say(tc.user, tc.ask)
			ex := exampleIn(t, r)
			msg := strings.TrimSuffix(r.Text, " Example: "+ex)
			if !strings.Contains(msg, " "+tc.value+" ") || !strings.Contains(msg, "not closed") && !strings.Contains(msg, "never opened") {
				t.Errorf("%s: %q; want it to say the quote around %s is what is wrong", tc.ask, msg, tc.value)
			}
			for _, odd := range []string{`""`, `"'`, `'"`} {
				if strings.Contains(msg, odd) {
					t.Errorf("%s: %q quotes the value oddly (%s)", tc.ask, msg, odd)
				}
			}
			again := h.say(tc.user, ex)
			if again.Error {
				t.Fatalf("%s: the example %q is refused: %s", tc.ask, ex, again.Text)
			}
			if l := h.lease(leaseIn(t, again.Text)); l.Params[tc.param] != tc.value {
				t.Errorf("%s: the example %q sets %s=%q; want %q", tc.ask, ex, tc.param, l.Params[tc.param], tc.value)
			}
		})
	}
}

// A parameter's value that is wrong with a quote inside it is named in quotes that are not its
// own, so that it reads as one value; one wrong without its stray quote too is refused for
// that (a number out of range, not no number).
func TestAWrongParameterValueWithAQuoteReadsAsOneValue(t *testing.T) {
	h := templatesOn(t, otherPolicy)
	const rita = "rita@borealis.example"
	for ask, shown := range map[string]string{
		`/gpu submit vllm-server model=acme/ti"ny`:    `“acme/ti"ny”`,
		`/gpu submit vllm-server model="acme/"tiny`:   `“acme/"tiny”`, // the stray quote at its start aside
		`/gpu submit vllm-server max_model_len=1"024`: `“1"024”`,
		`/gpu submit vllm-server model=acme/t'iny`:    `"acme/t'iny"`,
	} {
		r := h.say(rita, ask)
		ex := exampleIn(t, r)
		if !strings.Contains(r.Text, ", not "+shown+".") && !strings.Contains(r.Text, ", not "+shown+":") || strings.Contains(r.Text, `""`) {
			t.Errorf("%s: %q; want the value shown as %s", ask, r.Text, shown)
		}
		if again := h.say(rita, ex); again.Error {
			t.Errorf("%s: the example %q is refused: %s", ask, ex, again.Text)
		}
	}
	r := h.say(rita, `/gpu submit vllm-server max_model_len="100`)
	if ex := exampleIn(t, r); !strings.Contains(r.Text, "out of range") || strings.Contains(r.Text, "whole number") {
		t.Errorf(`max_model_len="100: %q; want it refused as out of range`, r.Text)
	} else if again := h.say(rita, ex); again.Error {
		t.Errorf("the example %q is refused: %s", ex, again.Text)
	}
}
