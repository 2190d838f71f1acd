//go:build !linux

package predict

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
