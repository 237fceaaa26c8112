// Command graphql is the Lambda function of the graphql group: the GraphQL Admin API (shared/admingraphql).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqssend"
)

func main() {
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	api.SetupLogging(cfg)
	deps, err := api.OpenWith(context.Background(), cfg, sqssend.Open) // themeCreate queues its import
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(httpadapter.NewV2(api.Handler(deps, api.GraphQL)).ProxyWithContext)
}
