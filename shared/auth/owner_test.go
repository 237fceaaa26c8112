package auth

import (
	"strings"
	"testing"
)

// The owner's secret is configured only as its hash: the hash verifies the
// secret alone, and a malformed one is refused before the service starts.
func TestOwnerSecret(t *testing.T) {
	// Few iterations: the race detector makes each of the default's slow.
	hash, err := hashOwnerSecret("correct horse battery", 1000)
	if err != nil || strings.Contains(hash, "correct") || CheckOwnerHash(hash) != nil {
		t.Fatalf("HashOwnerSecret = %q, %v", hash, err)
	}
	if !OwnerSecretMatches(hash, "correct horse battery") {
		t.Error("the secret does not match its hash")
	}
	for _, wrong := range []string{"", "correct horse batter", "correct horse battery ", strings.Repeat("x", 2000)} {
		if OwnerSecretMatches(hash, wrong) {
			t.Errorf("%q matches", wrong)
		}
	}
	if _, err := HashOwnerSecret("too short"); err == nil {
		t.Error("a short secret was hashed")
	}
	for _, bad := range []string{"", "plain", "pbkdf2-sha256$0$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", "md5$1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"pbkdf2-sha256$1000$!!$a2V5a2V5a2V5a2V5a2V5a2V5"} {
		if CheckOwnerHash(bad) == nil || OwnerSecretMatches(bad, "anything at all") {
			t.Errorf("hash %q accepted", bad)
		}
	}
}
