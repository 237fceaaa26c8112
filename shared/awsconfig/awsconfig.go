// Package awsconfig loads the AWS configuration the service's clients use
// (DynamoDB, SQS), the same way for each: the SDK's default chain, or, for
// an emulator's endpoint, dummy credentials in us-east-1 unless the
// environment has some.
package awsconfig

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Load loads the default AWS configuration. With a non-empty endpoint
// (DynamoDB Local, ElasticMQ) and no credentials in the environment it
// uses dummy static credentials in us-east-1. Load once per process and
// client.
func Load(ctx context.Context, endpoint string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if endpoint != "" && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts,
			config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")),
			config.WithRegion("us-east-1"))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("load AWS config: %w", err)
	}
	if endpoint != "" && cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return cfg, nil
}
