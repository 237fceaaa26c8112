package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/storeadmin/adminapi/shared/store"
)

// DynamoDB's moments of unavailability are 503s; a transaction DynamoDB
// refused for itself (an item too large) stays an error of the service.
func TestClassify(t *testing.T) {
	canceled := func(codes ...string) error {
		e := &types.TransactionCanceledException{}
		for _, c := range codes {
			e.CancellationReasons = append(e.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
		}
		return fmt.Errorf("dynamostore: transaction: %w", e)
	}
	for name, c := range map[string]struct {
		err         error
		unavailable bool
	}{
		"conflict":           {canceled("None", "TransactionConflict"), true},
		"throttled in a txn": {canceled("ThrottlingError", "None"), true},
		"item too large":     {canceled("None", "ValidationError"), false},
		"throughput":         {&types.ProvisionedThroughputExceededException{}, true},
		"deadline":           {context.DeadlineExceeded, true},
		"condition":          {&store.ConditionError{Key: store.Key{PK: "p", SK: "s"}}, false},
		"other":              {errors.New("boom"), false},
	} {
		if got := errors.Is(classify(c.err, true), store.ErrUnavailable); got != c.unavailable {
			t.Errorf("%s: unavailable %v, want %v", name, got, c.unavailable)
		}
	}
}

// A write whose outcome is unknown says so, for store.Retrying to resolve
// under its token; a refused one does not.
func TestClassifyUncertain(t *testing.T) {
	inProgress := &types.TransactionInProgressException{}
	for name, c := range map[string]struct {
		err       error
		uncertain bool
	}{
		"in progress": {inProgress, true},
		"deadline":    {context.DeadlineExceeded, true},
		"connection":  {&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		"conflict":    {&types.TransactionConflictException{}, false},
		"throttled":   {&types.ProvisionedThroughputExceededException{}, false},
	} {
		var u *store.UnavailableError
		if !errors.As(classify(c.err, true), &u) || u.MayHaveCommitted != c.uncertain {
			t.Errorf("%s: %v, want unavailable, may have committed %v", name, classify(c.err, true), c.uncertain)
		}
	}
}
