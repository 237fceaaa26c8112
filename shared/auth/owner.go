package auth

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// The shop owner's secret, which the authorization page asks for in AWS
// (shared/oauth), is configured only as a PBKDF2-HMAC-SHA256 hash:
// "pbkdf2-sha256$<iterations>$<salt>$<key>", salt and key in unpadded
// base64. `go run ./infra/ownersecret` makes one.
const (
	ownerHashScheme = "pbkdf2-sha256"
	// OwnerIterations is OWASP's 2023 advice for PBKDF2-HMAC-SHA256.
	OwnerIterations = 600_000
	// MinOwnerSecret is the shortest secret HashOwnerSecret takes.
	MinOwnerSecret = 12
)

// HashOwnerSecret returns the configured form of secret, under a fresh salt.
func HashOwnerSecret(secret string) (string, error) { return hashOwnerSecret(secret, OwnerIterations) }

func hashOwnerSecret(secret string, iterations int) (string, error) {
	if len(secret) < MinOwnerSecret {
		return "", errors.New("auth: the owner's secret must have at least " + strconv.Itoa(MinOwnerSecret) + " characters")
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, secret, salt, iterations, 32)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return strings.Join([]string{ownerHashScheme, strconv.Itoa(iterations), enc.EncodeToString(salt), enc.EncodeToString(key)}, "$"), nil
}

// CheckOwnerHash says what is wrong with a configured owner hash.
func CheckOwnerHash(hash string) error {
	_, _, _, err := parseOwnerHash(hash)
	return err
}

func parseOwnerHash(hash string) (iter int, salt, key []byte, err error) {
	parts := strings.Split(hash, "$")
	bad := errors.New("auth: an owner secret hash is pbkdf2-sha256$<iterations>$<salt>$<key> (go run ./infra/ownersecret)")
	if len(parts) != 4 || parts[0] != ownerHashScheme {
		return 0, nil, nil, bad
	}
	enc := base64.RawStdEncoding
	iter, err1 := strconv.Atoi(parts[1])
	salt, err2 := enc.DecodeString(parts[2])
	key, err3 := enc.DecodeString(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || iter < 1 || iter > 10_000_000 || len(salt) < 8 || len(key) < 16 {
		return 0, nil, nil, bad
	}
	return iter, salt, key, nil
}

// OwnerSecretMatches reports whether secret is the one hash was made from.
func OwnerSecretMatches(hash, secret string) bool {
	iter, salt, key, err := parseOwnerHash(hash)
	if err != nil || secret == "" || len(secret) > 1024 {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, secret, salt, iter, len(key))
	return err == nil && subtle.ConstantTimeCompare(got, key) == 1
}
