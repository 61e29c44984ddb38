package publish

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// PublicKeyPEM encodes a public key as PKIX PEM.
func PublicKeyPEM(pub ed25519.PublicKey) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// ParsePublicKey accepts a PKIX PEM public key, a PKCS #8 PEM private key
// (its public half), or the raw 32 bytes as hex or base64.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(b); blk != nil {
		switch blk.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("publish: public key: %w", err)
			}
			if pub, ok := k.(ed25519.PublicKey); ok {
				return pub, nil
			}
			return nil, fmt.Errorf("publish: public key is a %T, not Ed25519", k)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("publish: private key: %w", err)
			}
			if priv, ok := k.(ed25519.PrivateKey); ok {
				return priv.Public().(ed25519.PublicKey), nil
			}
			return nil, fmt.Errorf("publish: private key is a %T, not Ed25519", k)
		}
		return nil, fmt.Errorf("publish: PEM block %q is not a key", blk.Type)
	}
	s := strings.TrimSpace(string(b))
	if raw, err := hex.DecodeString(s); err == nil && len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	if raw, err := base64.StdEncoding.DecodeString(s); err == nil && len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	return nil, errors.New("publish: not an Ed25519 public key (PEM, or 32 bytes as hex or base64)")
}
