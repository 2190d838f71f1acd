package slurm

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// What Slurm wrote to its standard error, clipped for a message, keeps whole letters: a job
// name in any language cut at the clip is not left with half a letter.
func TestSlurmErrorsAreClippedBetweenLetters(t *testing.T) {
	for _, stderr := range []string{"x" + strings.Repeat("é", 400), "xy" + strings.Repeat("名", 400), strings.Repeat("a", 299) + "🙂🙂"} {
		msg := (&commandError{err: errors.New("exit status 1"), stderr: "sbatch: error: " + stderr}).Error()
		if !utf8.ValidString(msg) || !strings.HasSuffix(msg, "…") || len(msg) > 400 {
			t.Errorf("%q", msg)
		}
	}
}
