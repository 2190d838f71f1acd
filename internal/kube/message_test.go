package kube

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// A workload writes its own termination message (/dev/termination-log): whatever it holds, the
// reason a failed lease gets from it is one line of valid UTF-8 text of at most about 200
// characters, with no control character (a NUL, a terminal escape) and no invisible formatting
// character (a right-to-left override), so it can be stored (PostgreSQL refuses a NUL and
// invalid UTF-8) and reads in chat as written.
func TestATerminationMessageBecomesOneLineOfPlainText(t *testing.T) {
	for _, msg := range []string{
		strings.Repeat("x", 199) + "é and more",
		"boom\x00after a NUL",
		"\x1b[31mred\x1b[0m text",
		"gpu \u202efdp.nosrep\u202c ok",
		"a\x07bell\x7fdel\u200bzero-width",
		strings.Repeat("日本語", 200),
		"\xff\xfe invalid bytes",
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: msg}}}}}}
		j := podJob(p)
		if j.State != qm.JobFailed {
			t.Fatalf("%q: state %s", msg, j.State)
		}
		if !utf8.ValidString(j.Reason) {
			t.Errorf("%q: reason is not valid UTF-8: %q", msg, j.Reason)
		}
		for _, r := range j.Reason {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Errorf("%q: reason keeps %U: %q", msg, r, j.Reason)
				break
			}
		}
		if n := utf8.RuneCountInString(j.Reason); n > 260 {
			t.Errorf("%q: reason is %d characters long", msg, n)
		}
		if !strings.HasPrefix(j.Reason, "exit code 1 (Kubernetes: Error: ") {
			t.Errorf("%q: reason %q", msg, j.Reason)
		}
	}
}
