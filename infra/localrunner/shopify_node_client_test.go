package main

import (
	"crypto/tls"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const readOnlyToken = "read-only-token-0123456789abcdef"

// Shopify's official Node library (@shopify/shopify-api, pinned in
// infra/shopify_node/package-lock.json, installed by make
// shopify-node) drives every REST resource class it ships for the
// service's groups, at its oldest and its newest version, against the
// runner on both stores: infra/shopify_node. The library speaks
// https only to a shop, so a TLS terminator stands in front of the runner,
// passing bytes and nothing else; its CA goes to node in
// NODE_EXTRA_CA_CERTS. make test sets SHOPIFY_NODE to the installed
// directory; without it the test is skipped, unless REQUIRE_EMULATORS asks
// for every check.
func TestShopifyNodeClient(t *testing.T) {
	dir := os.Getenv("SHOPIFY_NODE")
	if dir == "" {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal("SHOPIFY_NODE is not set (make shopify-node, then its directory)")
		}
		t.Skip("SHOPIFY_NODE is not set: the Node client suite needs its install (make test makes it)")
	}
	script, err := filepath.Abs(filepath.Join("..", "shopify_node", "test_shopify_node_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		// Unpaced: the library would wait out each 429.
		r := start(t, append(storeEnv, "RATE_LIMIT=off")...)
		target, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		addr, caFile := terminateTLS(t, target.Host)
		// node resolves a module's imports beside it: the script runs from
		// a directory whose node_modules is the install's.
		run := t.TempDir()
		if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(run, "node_modules")); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, filepath.Base(script)), src, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("node", filepath.Join(run, filepath.Base(script)), addr, demoToken, readOnlyToken)
		cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node %s: %v\n%s", filepath.Base(script), err, out)
		}
		t.Logf("%s(%.1f s)", out, time.Since(start).Seconds())
	})
}

// terminateTLS listens on a loopback port with a certificate of a CA made
// for the test and copies each connection's bytes to and from target: TLS
// termination and nothing else. It returns the listener's host:port and the
// file holding the CA's certificate.
func terminateTLS(t *testing.T, target string) (string, string) {
	t.Helper()
	caFile, keyFile := selfSigned(t, t.TempDir(), "127.0.0.1")
	cert, err := tls.LoadX509KeyPair(caFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{})
				go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite(); close(done) }()
				io.Copy(c, up)
				c.Close()
				<-done
			}()
		}
	}()
	return ln.Addr().String(), caFile
}

// shopify-api-node (the community client, pinned in infra/shopify_api_node;
// make test sets SHOPIFY_API_NODE to its install) drives the GraphQL Admin
// API against the runner on both stores: graphql() with and without
// variables, a bad query's error, and its retry of a THROTTLED query.
func TestShopifyAPINodeGraphQL(t *testing.T) {
	dir := os.Getenv("SHOPIFY_API_NODE")
	if dir == "" {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal("SHOPIFY_API_NODE is not set (make shopify-api-node, then its path)")
		}
		t.Skip("SHOPIFY_API_NODE is not set: make test installs shopify-api-node")
	}
	script, err := filepath.Abs(filepath.Join("..", "shopify_api_node", "test_graphql.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		r := start(t, append(storeEnv, "GRAPHQL_POINTS=60/10")...) // a small bucket: the script throttles itself
		target, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		addr, caFile := terminateTLS(t, target.Host)
		cmd := exec.Command("node", script, addr, demoToken)
		cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile, "NODE_PATH="+filepath.Join(dir, "node_modules"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node %s: %v\n%s", filepath.Base(script), err, out)
		}
		t.Logf("%s", out)
	})
}
