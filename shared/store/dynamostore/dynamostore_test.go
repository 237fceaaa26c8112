package dynamostore_test

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
	"github.com/storeadmin/adminapi/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	dynamotest.Endpoint(t)
	storetest.Run(t, func(t *testing.T) store.Store { return dynamotest.Open(t) })
}
