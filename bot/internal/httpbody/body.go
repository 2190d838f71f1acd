// Package httpbody answers chat platforms' deliveries whose body the adapters could not read.
package httpbody

import (
	"errors"
	"fmt"
	"net/http"
)

// Refuse answers a request whose body could not be read: 413 when it is over the limit its
// http.MaxBytesReader set, else 400 (the client went away or sent a broken body).
func Refuse(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(w, fmt.Sprintf("the request body is larger than %d bytes.", tooBig.Limit), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "the request body could not be read.", http.StatusBadRequest)
}
