// Command shopify-paths is the Lambda function of the paths Shopify's
// clients call (/admin/api/{version}/<path>.json and /admin/<path>.json):
// every group in one handler (api.Lazy builds a group on its first request), which
// rewrites each path to its route's.
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
	deps, err := api.OpenWith(context.Background(), cfg, sqssend.Open)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(httpadapter.NewV2(api.Lazy(deps, api.PathGroups...)).ProxyWithContext)
}
