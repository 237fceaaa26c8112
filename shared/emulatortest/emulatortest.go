// Package emulatortest holds what the test helpers of every AWS emulator
// share: finding the emulator, and naming a fresh resource per test.
//
// An emulator's endpoint comes from an environment variable (make test sets
// it). Without it tests are skipped, unless REQUIRE_EMULATORS=1, in which
// case they fail: CI never skips silently.
package emulatortest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// Endpoint returns the endpoint in env, or skips the test (fails it under
// REQUIRE_EMULATORS=1) when unset. script starts the emulator by hand.
func Endpoint(t testing.TB, env, script string) string {
	t.Helper()
	ep := os.Getenv(env)
	if ep == "" {
		if os.Getenv("REQUIRE_EMULATORS") == "1" {
			t.Fatalf("%s is unset and REQUIRE_EMULATORS=1 (start one: %s start)", env, script)
		}
		t.Skipf("%s is unset (start one: %s start)", env, script)
	}
	return ep
}

// Name is a fresh name for a test's table or queue: "t_", the end of the
// test's name in letters, digits, '_' and '-', and a random suffix, within
// maxLen characters.
func Name(t testing.TB, maxLen int) string {
	var b [6]byte
	rand.Read(b[:])
	suffix := "_" + hex.EncodeToString(b[:])
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, t.Name())
	if room := maxLen - len("t_") - len(suffix); len(name) > room {
		name = name[len(name)-room:]
	}
	return "t_" + name + suffix
}
