package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
)

// Smart collection membership heals with no client action after variant
// and rule changes made through 30% store faults and a kill -9 mid-run:
// the runner that starts again runs the membership jobs the killed one left
// (their markers committed with the changes), and every collection then
// holds exactly the products its rule matches, as the variants and rules
// read back say.
func TestMembershipHealsAfterFaultsAndKill9(t *testing.T) {
	const token = "membership-token-0123456789abcdef"
	const products, variantsEach = 6, 2
	seed := map[string]any{
		"shop": map[string]any{"id": 1, "name": "S", "domain": "s.example.com", "iana_timezone": "UTC"},
		"apps": []any{map[string]any{"id": 9, "name": "A", "access_token": token, "scopes": []string{"write_products"}}},
	}
	var variantIDs []int64
	var ps []any
	for p := range products {
		var vs []any
		for v := range variantsEach {
			id := int64(1000 + 10*p + v)
			variantIDs = append(variantIDs, id)
			vs = append(vs, map[string]any{"id": id, "title": fmt.Sprint("V", v), "option1": fmt.Sprint("V", v), "price": "100.00"})
		}
		ps = append(ps, map[string]any{"id": 100 + p, "title": fmt.Sprint("P", p), "variants": vs})
	}
	seed["products"] = ps
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	b, _ := json.Marshal(seed)
	if err := os.WriteFile(seedFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	env := []string{"DATA_DIR=" + data, "SEED_FILE=" + seedFile, "RATE_LIMIT=off"}
	r := start(t, append(env, "FAULT_RATE=0.3")...)
	collections := smartCollections(t, r, token)
	// Rounds of changes ended by a kill -9, until one leaves membership
	// stale: a change whose membership step failed or had not run, its
	// marker left for the jobs.
	changes, stale := 0, ""
	for round := 1; stale == ""; round++ {
		if round > 1 {
			r = start(t, append(env, "FAULT_RATE=0.3")...)
		}
		changes += changeUntilKilled(t, r, token, variantIDs, collections)
		if stale = staleAtKill(t, data, token, products, collections); stale == "" && round == 20 {
			t.Fatal("20 rounds of changes and kills left no membership stale: the test proves nothing")
		}
	}
	r = start(t, env...)
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if last = membershipMismatch(t, r, token, products, collections); last == "" {
			t.Logf("%d changes through 30%% faults and kills; at the last kill %s; after the restart membership matched every rule", changes, stale)
			return
		}
		time.Sleep(100 * time.Millisecond) // the restarted runner's jobs run on their own
	}
	t.Fatalf("membership did not heal within 30 s: %s", last)
}

// smartCollections creates collections of the products with a variant
// over a bar (the workers move the bars).
func smartCollections(t *testing.T, r *runner, token string) []int64 {
	var collections []int64
	for i := range 4 {
		body := fmt.Sprintf(`{"smart_collection":{"title":"Over %d","rules":[{"column":"variant_price","relation":"greater_than","condition":"%d"}]}}`, 50*(i+1), 50*(i+1))
		for {
			status, v := r.do(t, token, "POST", "/com/smart_collections.json", body)
			if status == 201 {
				collections = append(collections, int64(v["smart_collection"].(map[string]any)["id"].(float64)))
				break
			}
			if status != 503 {
				t.Fatalf("create a smart collection: %d %v", status, v)
			}
		}
	}
	return collections
}

// changeUntilKilled has four clients change variant prices and collection
// rules until 150 changes are answered, kills the runner (-9) while they
// go on, and returns how many were answered.
func changeUntilKilled(t *testing.T, r *runner, token string, variantIDs, collections []int64) int {
	var wg sync.WaitGroup
	changes := make(chan struct{}, 1<<16)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var status int
				if rand.IntN(10) == 0 {
					c := collections[rand.IntN(len(collections))]
					status, _ = r.try("PUT", fmt.Sprintf("/com/smart_collections/%d.json", c), token,
						fmt.Sprintf(`{"smart_collection":{"rules":[{"column":"variant_price","relation":"greater_than","condition":"%d"}]}}`, 25*rand.IntN(9)))
				} else {
					v := variantIDs[rand.IntN(len(variantIDs))]
					status, _ = r.try("PUT", fmt.Sprintf("/com/variants/%d.json", v), token,
						fmt.Sprintf(`{"variant":{"price":"%d.00"}}`, 10*rand.IntN(25)+w))
				}
				if status == 0 {
					return // the runner is gone
				}
				changes <- struct{}{}
			}
		}()
	}
	for len(changes) < 150 {
		time.Sleep(10 * time.Millisecond) // until enough changes went through: the kill lands mid-run
	}
	r.stop(t, syscall.SIGKILL)
	wg.Wait()
	return len(changes)
}

// staleAtKill describes a collection whose membership a killed runner left
// stale, read through the API's handler over its store with no job
// running, or "" when none is.
func staleAtKill(t *testing.T, data, token string, products int, collections []int64) string {
	deps, err := api.Open(context.Background(), config.Config{Store: "embedded", DataDir: data, RateLimit: "off", LogLevel: slog.LevelError})
	if err != nil {
		t.Fatal(err)
	}
	defer deps.Store.Close()
	srv := httptest.NewServer(api.Handler(deps, api.Groups...))
	defer srv.Close()
	return membershipMismatch(t, &runner{url: srv.URL}, token, products, collections)
}

// try sends one request; status 0 when the runner did not answer.
func (r *runner) try(method, path, token, body string) (int, error) {
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Service-Access-Token", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// membershipMismatch describes the first collection whose members differ
// from the products its rule matches, or "" when none does.
func membershipMismatch(t *testing.T, r *runner, token string, products int, collections []int64) string {
	t.Helper()
	maxPrice := map[int64]float64{}
	for p := range products {
		pid := int64(100 + p)
		status, v := r.do(t, token, "GET", fmt.Sprintf("/com/products/%d/variants.json", pid), "")
		if status != 200 {
			return fmt.Sprintf("variants of %d: %d", pid, status)
		}
		for _, vr := range v["variants"].([]any) {
			price, _ := strconv.ParseFloat(vr.(map[string]any)["price"].(string), 64)
			maxPrice[pid] = max(maxPrice[pid], price)
		}
	}
	for _, c := range collections {
		status, v := r.do(t, token, "GET", fmt.Sprintf("/com/smart_collections/%d.json", c), "")
		if status != 200 {
			return fmt.Sprintf("collection %d: %d", c, status)
		}
		sc := v["smart_collection"].(map[string]any)
		bar, _ := strconv.ParseFloat(sc["rules"].([]any)[0].(map[string]any)["condition"].(string), 64)
		var want, got []int64
		for pid, price := range maxPrice {
			if price > bar {
				want = append(want, pid)
			}
		}
		status, v = r.do(t, token, "GET", fmt.Sprintf("/com/collects.json?collection_id=%d&limit=250", c), "")
		if status != 200 {
			return fmt.Sprintf("collects of %d: %d", c, status)
		}
		for _, m := range v["collects"].([]any) {
			got = append(got, int64(m.(map[string]any)["product_id"].(float64)))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) || sc["products_count"] != float64(len(want)) {
			return fmt.Sprintf("collection %d (over %v): members %v, products_count %v, want %v", c, bar, got, sc["products_count"], want)
		}
	}
	return ""
}
