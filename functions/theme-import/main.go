// Command theme-import runs the theme zip imports queued by theme creates
// (SQS ThemeImportQueue, batches with ReportBatchItemFailures).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue"
	"github.com/storeadmin/adminapi/shared/themes"
)

func main() {
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	api.SetupLogging(cfg)
	deps, err := api.OpenWith(context.Background(), cfg, sqsqueue.Open)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(themes.SQSHandler(deps.Deps))
}
