package handles_test

import (
	"context"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/store"
)

// A record that cannot be built is refused for its own reason, at once:
// never "handle has already been taken", never retried as a lost race.
func TestBuildErrorIsNotATakenHandle(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			st := s.Open(t)
			why := admin.Invalid("base", "too many changes for one request")
			for _, explicit := range []string{"", "chosen"} {
				calls := 0
				_, _, err := handles.Create(context.Background(), st, ids.New(), "test", explicit, "A title",
					func(int64, string) ([]store.Op, error) { calls++; return nil, why })
				if err != why || calls != 1 {
					t.Errorf("handle %q: %v after %d builds, want the build's error after 1", explicit, err, calls)
				}
			}
		})
	}
}
