package dynamostore

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/storeadmin/adminapi/shared/store"
)

// The Store methods hand DynamoDB's own failures (throttling, conflicts,
// server errors, timeouts, a lost connection) on as store.UnavailableError
// at once, saying whether a write may have been applied: store.Retrying,
// the one retry layer, decides what is tried again.

func (s *Store) Get(ctx context.Context, k store.Key) (store.Item, error) {
	it, err := s.get(ctx, k)
	return it, classify(err, false)
}

func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Item, string, error) {
	items, next, err := s.query(ctx, q)
	return items, next, classify(err, false)
}

func (s *Store) Count(ctx context.Context, q store.Query) (int, error) {
	n, err := s.count(ctx, q)
	return n, classify(err, false)
}

func (s *Store) Add(ctx context.Context, k store.Key, c store.Cond, deltas map[string]int64) (store.Item, error) {
	it, err := s.add(ctx, k, c, deltas)
	return it, classify(err, true)
}

// Transact applies ops once per request token (store.WithRequestToken): a
// transaction as DynamoDB's ClientRequestToken, a single-item write by
// the token it leaves on the item (single).
func (s *Store) Transact(ctx context.Context, ops ...store.Op) error {
	return classify(s.transactOps(ctx, ops...), true)
}

// serviceCodes are DynamoDB's error codes of a moment's unavailability.
var serviceCodes = map[string]string{
	"ProvisionedThroughputExceededException": "throttled",
	"ThrottlingException":                    "throttled",
	"RequestLimitExceeded":                   "throttled",
	"TransactionConflictException":           "conflict",
	"InternalServerError":                    "server error",
	"ServiceUnavailable":                     "server error",
}

// classify returns err as a store.UnavailableError when it is the
// service's unavailability, else unchanged.
func classify(err error, write bool) error {
	if err == nil || errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound) {
		return err
	}
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		// Failed conditions became ConditionErrors in transact; what is
		// left is the moment's (conflicts, throttling) or a fault of the
		// transaction itself (an item too large: a bug, so 500).
		for _, r := range canceled.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "", "None", "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded":
			default:
				return err
			}
		}
		return store.Unavailable("conflict", false, err)
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "TransactionInProgressException" {
		// An attempt under the same token is still being applied: its
		// outcome is not known yet.
		return store.Unavailable("conflict", write, err)
	}
	if errors.As(err, &api) {
		if reason, ok := serviceCodes[api.ErrorCode()]; ok {
			// A server error may come after the write was applied;
			// throttling and conflicts refuse it.
			return store.Unavailable(reason, write && reason == "server error", err)
		}
	}
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return store.Unavailable("server error", write, err)
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return store.Unavailable("timeout", write, err)
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) {
		// The SDK's retryer used to take these; the request may have
		// reached DynamoDB.
		return store.Unavailable("network", write, err)
	}
	return err
}
