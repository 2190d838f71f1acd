package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/acme/quartermaster/internal/policy"
)

func init() {
	register("policy", "policy check FILE: validate a policy file and explain every error with its line", runPolicy)
}

func runPolicy(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) != 2 || args[0] != "check" {
		return errUsage{"usage: quartermaster policy check FILE (example: quartermaster policy check docs/quartermaster.example.yaml)"}
	}
	p, err := policy.LoadFile(args[1])
	if err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) {
			fmt.Fprintln(stderr, pe.Error())
			return fmt.Errorf("%s is not valid", args[1])
		}
		return err
	}
	fmt.Fprintf(stdout, "%s is valid: %d classes, %d teams, %d exception rules, backend %s.\n", args[1], len(p.Classes), len(p.Teams), len(p.Exceptions), p.Backend)
	return nil
}
