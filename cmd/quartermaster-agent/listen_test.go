package main

import "testing"

// QM_AGENT_LISTEN set but empty turns the /metrics listener off, as --listen "" does and as the
// docs say; unset, it is :9400.
func TestListenFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		set   bool
		value string
		want  string
	}{
		{false, "", ":9400"},
		{true, "", ""},
		{true, "127.0.0.1:9500", "127.0.0.1:9500"},
	} {
		if tc.set {
			t.Setenv("QM_AGENT_LISTEN", tc.value)
		}
		fs, s := flagSet("run")
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		if s.listen != tc.want {
			t.Errorf("QM_AGENT_LISTEN set %v to %q: listen %q, want %q", tc.set, tc.value, s.listen, tc.want)
		}
	}
}
