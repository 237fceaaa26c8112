// Command import loads a seed file into the configured store, usually
// DynamoDB (STORE=dynamodb TABLE_NAME=...). Loading is idempotent.
//
//	go run ./infra/import [-create-table] seed.json
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
)

func main() {
	createTable := flag.Bool("create-table", false, "create the DynamoDB table first (emulators; in AWS the template creates it)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: import [-create-table] <seed file>")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *createTable); err != nil {
		log.Fatal(err)
	}
}

func run(path string, createTable bool) error {
	ctx := context.Background()
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if _, err := seed.Parse(data); err != nil { // fail before connecting to anything
		return err
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
	st, err := api.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	_, sum, err := seed.Load(ctx, st, data)
	if err != nil {
		return err
	}
	fmt.Printf("imported %s: %d items written, %d already present\n", path, sum.Written, sum.Skipped)
	return nil
}
