// Command import loads a seed file into the configured store, usually
// DynamoDB (STORE=dynamodb TABLE_NAME=...). Loading is idempotent.
// With -reindex it then brings the store's index keys and entries up to
// this version (api.Reindex; once per version): run it, with the API
// stopped, after deploying a version that raised api.IndexVersion. With
// -redrive it derives the changes the change feed parked (api.Redrive);
// with -repair it rebuilds every type's entries and counts (api.Repair,
// API stopped): docs/operations.md, Parked changes.
//
//	go run ./infra/import [-create-table] [-reindex] [-redrive] [-repair] [seed.json]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
)

func main() {
	createTable := flag.Bool("create-table", false, "create the DynamoDB table first (emulators; in AWS the template creates it)")
	reindex := flag.Bool("reindex", false, "then rebuild the index keys and entries an earlier version did not write (API stopped)")
	redrive := flag.Bool("redrive", false, "then derive the changes the change feed parked")
	repair := flag.Bool("repair", false, "then rebuild every type's index entries and counts from its records (API stopped, feed caught up)")
	flag.Parse()
	if flag.NArg() > 1 || flag.NArg() == 0 && !*reindex && !*redrive && !*repair {
		fmt.Fprintln(os.Stderr, "usage: import [-create-table] [-reindex] [-redrive] [-repair] [seed file]")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *createTable, *reindex, *redrive, *repair); err != nil {
		log.Fatal(err)
	}
}

func run(path string, createTable, reindex, redrive, repair bool) error {
	ctx := context.Background()
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	var data []byte
	if path != "" {
		if data, err = os.ReadFile(path); err != nil {
			return err
		}
		if _, err := seed.Parse(data); err != nil { // fail before connecting to anything
			return err
		}
	}
	if createTable && cfg.Store == "dynamodb" {
		client, err := dynamostore.NewClient(ctx, cfg.Endpoint)
		if err != nil {
			return err
		}
		if err := dynamostore.CreateTable(ctx, client, cfg.TableName); err != nil {
			return err
		}
	}
	raw, err := api.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer raw.Close()
	// Through the one retry layer requests use: a throttled write or a
	// dropped connection is tried again (under its request token), not fatal.
	st := store.Retrying(raw)
	if data != nil {
		_, sum, err := seed.Load(ctx, st, clock.System{}, data) // in AWS the service's clock is the machine's
		if err != nil {
			return err
		}
		fmt.Printf("imported %s: %d items written, %d already present\n", path, sum.Written, sum.Skipped)
	}
	if reindex {
		rebuilt, err := api.Reindex(ctx, st)
		if err != nil {
			return err
		}
		fmt.Printf("index version %d: rebuilt %t\n", api.IndexVersion, rebuilt)
	}
	if redrive {
		n, err := api.Redrive(ctx, st, clock.System{}.Now())
		fmt.Printf("redrove %d parked changes\n", n)
		if err != nil {
			return err
		}
	}
	if repair {
		if err := api.Repair(ctx, st); err != nil {
			return err
		}
		fmt.Println("repaired every type's entries and counts")
	}
	return nil
}
