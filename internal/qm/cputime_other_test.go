//go:build !linux

package qm

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
