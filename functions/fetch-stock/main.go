// Command fetch-stock is the hourly fetch_stock (the Fulfillment services
// operations): on an EventBridge schedule it asks every fulfillment
// service with inventory_management for the stock of all its SKUs
// (providers.FetchStock) and returns the run's summary.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/providers"
)

func main() {
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	api.SetupLogging(cfg)
	deps, err := api.Open(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(providers.ScheduleHandler(deps.Deps, providers.FetchStock))
}
