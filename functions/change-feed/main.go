// Command change-feed reads the table's stream and fans each new
// notification out to the delivery queue, one message per subscribed webhook.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqssend"
)

func main() {
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	api.SetupLogging(cfg)
	deps, err := api.OpenWith(context.Background(), cfg, sqssend.Open)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(delivery.StreamHandler(deps.Deps))
}
