package oidc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"
)

// sealInfo names what the sealing key is for; a new version of the format gets a new key.
const sealInfo = "quartermaster sso tokens v1"

// sealer encrypts the provider's tokens before they are stored (AES-256-GCM, with a key derived
// from the client secret by HKDF-SHA256), so a copy of the database alone cannot use them.
type sealer struct{ aead cipher.AEAD }

func newSealer(clientSecret string) (*sealer, error) {
	key, err := hkdf.Key(sha256.New, []byte(clientSecret), nil, sealInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("oidc: sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("oidc: sealing key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("oidc: sealing key: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// sealedTokens is what is kept of the provider's tokens.
type sealedTokens struct {
	Refresh string    `json:"r,omitempty"`
	Access  string    `json:"a,omitempty"`
	Expiry  time.Time `json:"e,omitzero"`
}

// seal encrypts what a re-check needs of t; nil when there is nothing worth keeping.
func (s *sealer) seal(t *oauth2.Token) ([]byte, error) {
	if s == nil || t == nil || (t.RefreshToken == "" && t.AccessToken == "") {
		return nil, nil
	}
	plain, err := json.Marshal(sealedTokens{Refresh: t.RefreshToken, Access: t.AccessToken, Expiry: t.Expiry.UTC()})
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("oidc: random: %w", err)
	}
	return s.aead.Seal(nonce, nonce, plain, []byte(sealInfo)), nil
}

// errUnsealable is a sealed value this key cannot open (the client secret changed, or the bytes
// were altered).
var errUnsealable = errors.New("oidc: the stored tokens cannot be opened with the current client secret")

// open decrypts what seal made.
func (s *sealer) open(b []byte) (*oauth2.Token, error) {
	if s == nil || len(b) == 0 {
		return nil, nil
	}
	n := s.aead.NonceSize()
	if len(b) < n {
		return nil, errUnsealable
	}
	plain, err := s.aead.Open(nil, b[:n], b[n:], []byte(sealInfo))
	if err != nil {
		return nil, errUnsealable
	}
	var st sealedTokens
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, errUnsealable
	}
	return &oauth2.Token{RefreshToken: st.Refresh, AccessToken: st.Access, Expiry: st.Expiry}, nil
}
