package admingraphql

import (
	"context"

	"github.com/storeadmin/adminapi/shared/addresses"
)

// loader is what one request's fields share of their reads: made per
// request (Executor.Execute) and handed down the objects it resolves,
// never carried in the context. Fields resolve one after another, so it
// needs no lock.
type loader struct {
	s Service
	// addrs holds each customer's addresses and default, read once for
	// its addresses, addressesV2 and defaultAddress.
	addrs map[int64]customerAddresses
}

type customerAddresses struct {
	all []addresses.Address
	def *addresses.Address
}

func newLoader(s Service) *loader {
	return &loader{s: s, addrs: map[int64]customerAddresses{}}
}

// addresses are customer cid's addresses in id order and its default.
func (l *loader) addresses(ctx context.Context, cid int64) ([]addresses.Address, *addresses.Address, error) {
	if a, ok := l.addrs[cid]; ok {
		return a.all, a.def, nil
	}
	all, def, err := l.s.Addresses.OfCustomer(ctx, cid)
	if err != nil {
		return nil, nil, err
	}
	l.addrs[cid] = customerAddresses{all, def}
	return all, def, nil
}

// forget drops what was read of customer cid: a mutation changed it.
func (l *loader) forget(cid int64) { delete(l.addrs, cid) }
