// Command hello is the cold-start baseline of infra/coldstart: a Lambda
// bootstrap that creates the SDK clients every function creates (the
// DynamoDB client, from the default config) and answers each API Gateway
// request 200 with a small JSON body, doing nothing else.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	_ = dynamodb.NewFromConfig(cfg)
	lambda.Start(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: `{"hello":"world"}`,
			Headers: map[string]string{"Content-Type": "application/json"}}, nil
	})
}
