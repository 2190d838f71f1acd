//go:build faults

package faults_test

import (
	"testing"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// startPrivatePostgres is a PostgreSQL server of the test's own (storetest.StartServer), with a
// connect timeout long enough for a server that is slow to start on a busy machine.
func startPrivatePostgres(t *testing.T) *storetest.Server { return storetest.StartServer(t, 15) }
