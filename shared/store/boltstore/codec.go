package boltstore

import (
	"encoding/binary"
	"errors"

	"github.com/storeadmin/adminapi/shared/store"
)

// The item codec: length-prefixed strings and varints in a fixed order.
// Hand-written because it runs on every read and encoding/json would
// base64 the Data bytes.

var errCorrupt = errors.New("boltstore: corrupt item")

const codecVersion = 1

func encode(it *store.Item) []byte {
	n := 16 + len(it.PK) + len(it.SK) + len(it.GSI1PK) + len(it.GSI1SK) + len(it.GSI2PK) + len(it.GSI2SK) + len(it.Data) + 24*len(it.Nums) + 40
	b := make([]byte, 0, n)
	b = append(b, codecVersion)
	for _, s := range [...]string{it.PK, it.SK, it.GSI1PK, it.GSI1SK, it.GSI2PK, it.GSI2SK} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendVarint(b, it.Version)
	b = binary.AppendVarint(b, it.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(len(it.Nums)))
	for name, v := range it.Nums {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(it.Data)))
	b = append(b, it.Data...)
	if len(it.Stamp) > 0 { // after Data: an item without one reads as before
		b = binary.AppendUvarint(b, uint64(len(it.Stamp)))
		b = append(b, it.Stamp...)
	}
	return b
}

// decode copies everything out of b: bolt's memory is only valid inside the transaction.
func decode(b []byte) (store.Item, error) {
	var it store.Item
	if len(b) == 0 || b[0] != codecVersion {
		return it, errCorrupt
	}
	b = b[1:]
	str := func() (string, bool) {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return "", false
		}
		s := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return s, true
	}
	num := func() (int64, bool) {
		v, w := binary.Varint(b)
		if w <= 0 {
			return 0, false
		}
		b = b[w:]
		return v, true
	}
	ok := true
	for _, dst := range [...]*string{&it.PK, &it.SK, &it.GSI1PK, &it.GSI1SK, &it.GSI2PK, &it.GSI2SK} {
		var good bool
		*dst, good = str()
		ok = ok && good
	}
	var good bool
	it.Version, good = num()
	ok = ok && good
	it.ExpiresAt, good = num()
	ok = ok && good
	if !ok {
		return it, errCorrupt
	}
	count, w := binary.Uvarint(b)
	if w <= 0 || count > uint64(len(b)) {
		return it, errCorrupt
	}
	b = b[w:]
	if count > 0 {
		it.Nums = make(map[string]int64, count)
		for range count {
			name, good := str()
			v, good2 := num()
			if !good || !good2 {
				return it, errCorrupt
			}
			it.Nums[name] = v
		}
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return it, errCorrupt
	}
	it.Data = append([]byte(nil), b[w:w+int(n)]...)
	b = b[w+int(n):]
	if len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) != n {
			return it, errCorrupt
		}
		it.Stamp = append([]byte(nil), b[w:]...)
	}
	return it, nil
}
