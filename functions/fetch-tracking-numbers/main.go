// Command fetch-tracking-numbers is the hourly fetch_tracking_numbers (the
// Fulfillment services operations): on an EventBridge schedule it asks
// every fulfillment service with tracking_support for the tracking numbers of its
// completed fulfillments that have none yet (providers.FetchTrackingNumbers) and
// returns the run's summary.
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
	lambda.Start(providers.ScheduleHandler(deps.Deps, providers.FetchTrackingNumbers))
}
