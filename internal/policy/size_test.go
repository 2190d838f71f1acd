package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A policy file is read up to MaxFileSize and no further: a file far larger than any policy (a
// log, a disk image, /dev/zero named by mistake) is refused in one sentence naming the file and
// the limit, rather than read whole into memory, or forever. Before, policy check on /dev/zero
// never ended, and a 200 MiB file took gigabytes to load.
func TestAPolicyFileLargerThanAnyPolicyIsRefused(t *testing.T) {
	good, err := os.ReadFile("../../commands/testdata/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "borealis.yaml")
	pad := strings.Repeat("# "+strings.Repeat("x", 1000)+"\n", MaxFileSize/1000)
	if err := os.WriteFile(big, append(good, pad...), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		files = append(files, "/dev/zero")
	}
	for _, f := range files {
		_, err := LoadFile(f)
		if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "larger than") || !strings.Contains(err.Error(), "MiB") {
			t.Errorf("LoadFile(%s): %v; want a refusal naming the file and the limit", f, err)
		}
	}
	// Just within the limit it loads.
	fits := filepath.Join(dir, "fits.yaml")
	if err := os.WriteFile(fits, append(good, pad[:MaxFileSize-len(good)-1]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(fits); err != nil {
		t.Errorf("a policy of %d bytes: %v", MaxFileSize-1, err)
	}
}
