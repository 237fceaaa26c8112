package seed_test

import (
	"context"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
)

// A load only ever adds what was never there: after an app is uninstalled,
// a seeded variant deleted and the frontpage collection and the Rest of
// World country deleted, loading
// the same seed again (a restart of the local runner, infra/import run
// again) brings none of them back and writes nothing.
func TestReloadBringsNothingBack(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const variants = "/com/products/632910392/variants"
		const frontpage = "/com/custom_collections/1099511627775.json"
		e.Do("DELETE", variants+"/808950810.json", nil).Expect(t, 200)
		e.Do("DELETE", frontpage, nil).Expect(t, 200)
		const restOfWorld = "/com/countries/1099511627774.json"
		if c := e.Do("GET", restOfWorld, nil).Expect(t, 200).Object(t, "country"); c["code"] != "*" || c["name"] != "Rest of World" {
			t.Fatalf("Rest of World: %v", c)
		}
		e.Do("DELETE", restOfWorld, nil).Expect(t, 200)
		left := e.Do("GET", variants+"/count.json", nil).Expect(t, 200).JSON(t)["count"]
		collections := e.Do("GET", "/com/custom_collections/count.json", nil).Expect(t, 200).JSON(t)["count"]
		e.DoAs(apitest.ReadOnlyToken, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.DoAs(apitest.ReadOnlyToken, "GET", "/admin/webhooks.json", nil).Expect(t, 401)

		for range 2 {
			_, sum, err := seed.Load(context.Background(), e.Deps.Store, e.Deps.Clock, seed.Demo)
			if err != nil {
				t.Fatal(err)
			}
			e.DoAs(apitest.ReadOnlyToken, "GET", "/admin/webhooks.json", nil).Expect(t, 401)
			e.DoAs(apitest.ReadOnlyToken, "GET", "/web/pages.json", nil).Expect(t, 401)
			e.Do("GET", "/com/variants/808950810.json", nil).Expect(t, 404)
			if n := e.Do("GET", variants+"/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != left {
				t.Fatalf("%v variants after the reload, %v before", n, left)
			}
			if n := len(e.Do("GET", variants+".json", nil).Expect(t, 200).List(t, "variants")); float64(n) != left {
				t.Fatalf("%d variants listed after the reload, %v counted", n, left)
			}
			e.Do("GET", frontpage, nil).Expect(t, 404)
			e.Do("GET", restOfWorld, nil).Expect(t, 404)
			if n := e.Do("GET", "/com/countries/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 0.0 {
				t.Fatalf("%v countries after the reload", n)
			}
			if n := e.Do("GET", "/com/custom_collections/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != collections {
				t.Fatalf("%v collections after the reload, %v before", n, collections)
			}
			e.Do("GET", "/admin/webhooks.json", nil).Expect(t, 200) // the other app is untouched
			if sum.Written != 0 {
				t.Fatalf("the reload wrote %d records", sum.Written)
			}
		}
	}, api.Webhooks, api.Variants, api.Collections, api.Pages, api.Countries)
}

// A store loaded before markers were kept gets them on its next load, and
// even then an uninstalled app's token and a deleted seeded variant stay
// gone: the token goes only with its app record (which uninstall keeps),
// a variant only while its product's variant order is absent.
func TestReloadOfAStoreLoadedBeforeMarkers(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		markers, _, err := e.Deps.Store.Query(ctx, store.Query{PK: seed.MarkerPartition})
		if err != nil || len(markers) == 0 {
			t.Fatalf("no markers after a load (%v)", err)
		}
		for _, m := range markers {
			if err := e.Deps.Store.Transact(ctx, store.Delete(m.Key(), store.Always, 0)); err != nil {
				t.Fatal(err)
			}
		}
		e.Do("DELETE", "/com/products/632910392/variants/808950810.json", nil).Expect(t, 200)
		e.DoAs(apitest.ReadOnlyToken, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)

		_, sum, err := seed.Load(ctx, e.Deps.Store, e.Deps.Clock, seed.Demo)
		if err != nil {
			t.Fatal(err)
		}
		e.DoAs(apitest.ReadOnlyToken, "GET", "/admin/webhooks.json", nil).Expect(t, 401)
		e.Do("GET", "/com/variants/808950810.json", nil).Expect(t, 404)
		if sum.Written != 0 {
			t.Fatalf("the load wrote %d records", sum.Written)
		}
		again, _, err := e.Deps.Store.Query(ctx, store.Query{PK: seed.MarkerPartition})
		if err != nil || len(again) != len(markers) {
			t.Fatalf("%d markers after the load, %d before (%v)", len(again), len(markers), err)
		}
	}, api.Webhooks, api.Variants)
}

// A call plan must keep the bucket's span (bucket / leak) within what the
// limiter can hold; anything else stops the load with the app named.
func TestRatePlanBounds(t *testing.T) {
	for plan, ok := range map[string]bool{
		`{"bucket": 80, "leak_per_second": 4}`:        true,
		`{"bucket": 100000, "leak_per_second": 0.01}`: true,
		`{"bucket": 100000, "leak_per_second": 1e-9}`: false,
		`{"bucket": 0, "leak_per_second": 2}`:         false,
		`{"bucket": 40, "leak_per_second": 0}`:        false,
	} {
		_, err := seed.Parse([]byte(`{"shop": {"id": 1, "domain": "s.example.com"}, "apps": [{"id": 9, "name": "A",
			"access_token": "plan-token-abcdefghijkl", "scopes": [], "rate_limit": ` + plan + `}]}`))
		if (err == nil) != ok {
			t.Errorf("plan %s: error %v", plan, err)
		}
	}
}

// A customer field that would not read back (orders_count as a string, an
// address's id as text) is refused at import, naming it.
func TestMistypedCustomersAreRefused(t *testing.T) {
	for field, customer := range map[string]string{
		"orders_count": `{"id": 5, "orders_count": "12"}`,
		"created_at":   `{"id": 5, "created_at": "last tuesday"}`,
		"addresses":    `{"id": 5, "addresses": [{"id": "six"}]}`,
	} {
		_, err := seed.Parse([]byte(`{"shop": {"id": 1, "domain": "s.example.com"}, "customers": [`+customer+`]}`), api.SeedChecks...)
		if err == nil || !strings.Contains(err.Error(), "customers[0]") {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := seed.Parse([]byte(`{"shop": {"id": 1, "domain": "s.example.com"}, "customers": [{"id": 5, "orders_count": 12, "addresses": [{"id": 6, "country": "Canada"}]}]}`), api.SeedChecks...); err != nil {
		t.Fatal(err)
	}
}

// An app's OAuth fields: an app with an api_key (and no token) is known but
// not installed; each mistake stops the load naming the app and the field.
func TestAppOAuthFields(t *testing.T) {
	parse := func(apps string) error {
		_, err := seed.Parse([]byte(`{"shop": {"id": 1, "domain": "s.example.com"}, "apps": [` + apps + `]}`))
		return err
	}
	const known = `{"id": 9, "name": "A", "api_key": "key-a", "shared_secret": "secret-0123456789", "redirect_urls": ["https://a.example.com/cb"]}`
	if err := parse(known); err != nil {
		t.Fatal(err)
	}
	for apps, field := range map[string]string{
		`{"id": 9, "name": "A"}`: "access_token (installed) or api_key",
		`{"id": 9, "name": "A", "api_key": "k", "shared_secret": "secret-0123456789", "redirect_urls": ["https://a.example.com/"], "scopes": ["read_content"]}`: "scopes need an access_token",
		`{"id": 9, "name": "A", "api_key": "k", "shared_secret": "short", "redirect_urls": ["https://a.example.com/"]}`:                                         "shared_secret",
		`{"id": 9, "name": "A", "api_key": "k", "shared_secret": "secret-0123456789"}`:                                                                          "redirect_urls",
		`{"id": 9, "name": "A", "api_key": "k", "shared_secret": "secret-0123456789", "redirect_urls": ["ftp://a.example.com/"]}`:                               "redirect_urls[0]",
		`{"id": 9, "name": "A", "api_key": "a key", "shared_secret": "secret-0123456789", "redirect_urls": ["https://a.example.com/"]}`:                         "api_key",
		known + `, ` + strings.Replace(known, `"id": 9`, `"id": 10`, 1):                                                                                         "api_key is used by another app",
		`{"id": 9, "name": "A", "access_token": "token-0123456789abcdef", "redirect_urls": ["https://a.example.com/"]}`:                                         "redirect_urls need an api_key",
	} {
		if err := parse(apps); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %q", apps, err, field)
		}
	}
}
