package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Shopify's official Python client (ShopifyAPI, pinned in infra/sam.mk,
// in a venv of its own) drives every resource class it has for the twenty
// groups against the runner, over versioned paths with
// X-Shopify-Access-Token, on both stores: infra/shopify_client. make test
// sets SHOPIFY_CLIENT_PYTHON to that venv's python; without it the test is
// skipped, unless REQUIRE_EMULATORS asks for every check.
func TestShopifyPythonClient(t *testing.T) {
	python := os.Getenv("SHOPIFY_CLIENT_PYTHON")
	if python == "" {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal("SHOPIFY_CLIENT_PYTHON is not set (make shopify-client-venv, then its bin/python)")
		}
		t.Skip("SHOPIFY_CLIENT_PYTHON is not set: the Python client suite needs its venv (make test builds it)")
	}
	script, err := filepath.Abs(filepath.Join("..", "shopify_client", "test_shopify_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		// Unpaced: the client does not wait out a 429 (the call-limit
		// headers it reads are checked in shared/api).
		r := start(t, append(storeEnv, "RATE_LIMIT=off")...)
		cmd := exec.Command(python, script, r.url, demoToken)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(python), filepath.Base(script), err, out)
		}
		t.Logf("%s", out)
	})
}
