package discord

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

type nobody struct{}

func (nobody) Person(context.Context, string) (string, bool, error) { return "", false, nil }
func (nobody) UserID(context.Context, string) (string, bool, error) { return "", false, nil }

// FuzzInteraction: whatever an interaction's payload holds, reading it neither panics nor runs
// anything odd: it is refused as malformed, or it is read into a command line of the /gpu
// command, a problem with an example, a form to open or a value to suggest.
func FuzzInteraction(f *testing.F) {
	one := 1.0
	a, err := New(Config{BotToken: "t", Handler: bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply { return nil }), People: nobody{},
		Commands: []Command{
			{Name: "request", Example: "/gpu request 1", Options: []Option{{Name: "gpus", Type: OptionInteger, MinValue: &one}, {Name: "class", OneWord: true, Choices: []string{"a"}},
				{Name: "exclusive", Type: OptionBoolean}, {Name: "lease", Required: true, Autocomplete: "lease"}},
				Text: func(v map[string]string) string {
					return "/gpu request " + v["gpus"] + " " + v["class"] + " " + v["exclusive"] + " " + v["lease"]
				}},
		}})
	if err != nil {
		f.Fatal(err)
	}
	button, _ := a.buttonID("/gpu deny L-1")
	modal, _ := a.sign(modalPrefix, "/gpu deny L-1")
	for _, s := range []string{
		`{"id":"1","type":1}`,
		`{"id":"1","type":2,"member":{"user":{"id":"5"}},"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"gpus","type":4,"value":2},{"name":"lease","type":3,"value":"L-1"}]}]}}`,
		`{"id":"1","type":2,"user":{"id":"5"},"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"gpus","type":4,"value":"x"},null]}]}}`,
		`{"id":"1","type":4,"user":{"id":"5"},"data":{"name":"gpu","options":[{"name":"request","type":1,"options":[{"name":"lease","type":3,"value":"L","focused":true}]}]}}`,
		`{"id":"1","type":3,"user":{"id":"5"},"message":{"id":"2","components":[{"type":1,"components":[{"type":2,"custom_id":"x"}]}]},"data":{"custom_id":"` + button + `","component_type":2}}`,
		`{"id":"1","type":5,"user":{"id":"5"},"data":{"custom_id":"` + modal + `","components":[{"type":1,"components":[{"type":4,"custom_id":"reason","value":"no"}]}]}}`,
		`{"id":"1","type":5,"data":{"components":[{"type":17,"components":[{"type":9}]}]}}`,
		`{"type":2,"data":null}`, `{"type":3,"data":[]}`, `{"type":9}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		i, err := decodeInteraction(body)
		if err != nil {
			return
		}
		in := a.read(i)
		if in.text != "" && (in.problem != "" || !strings.HasPrefix(in.text, "/gpu ")) {
			t.Errorf("read %q (problem %q): not a /gpu command line", in.text, in.problem)
		}
		_ = a.render(bot.Reply{Text: in.text + in.problem + in.typed, Actions: []bot.Action{{Label: in.typed, Command: in.text}}})
	})
}

// TestOptionValueNeverTrustsItsType: each option type refuses the others' values.
func TestOptionValueNeverTrustsItsType(t *testing.T) {
	for _, tc := range []struct {
		typ  OptionType
		v    any
		want string
	}{
		{OptionInteger, 3.0, "3"}, {OptionInteger, "3", ""}, {OptionInteger, 1e300, ""}, {OptionInteger, nil, ""},
		{OptionBoolean, true, "true"}, {OptionBoolean, 1.0, ""}, {OptionString, " a\nb ", "a b"}, {OptionString, map[string]any{}, ""},
	} {
		got, problem := optionValue(&Option{Name: "x", Type: tc.typ}, tc.v)
		if got != tc.want || (tc.want == "") != (problem != "") {
			t.Errorf("%v as %d: %q, %q", tc.v, tc.typ, got, problem)
		}
	}
}
