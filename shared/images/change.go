package images

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Change is what an update's `image` field says: absent (Given false),
// null (Remove: the image goes), or a new image.
type Change struct {
	Given  bool
	Remove bool
	In     Input
}

// ParseChange reads the raw `image` value of an input, adding any
// problem to v under "image".
func ParseChange(raw json.RawMessage, v *admin.Validation) Change {
	var c Change
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return c
	}
	c.Given = true
	switch {
	case s == "null":
		c.Remove = true
	case s[0] != '{':
		v.Add("image", "must be an object")
	case json.Unmarshal([]byte(s), &c.In) != nil:
		v.Add("image", admin.MsgInvalid)
	}
	return c
}

// keeps reports whether the change sends back the current image as it was
// returned: kept as is, not downloaded again.
func (c *Change) keeps(cur *Image) bool {
	return !c.Remove && (c.In.Attachment == nil || *c.In.Attachment == "") &&
		c.In.Src != nil && cur != nil && *c.In.Src == cur.Src
}

// Updater applies one record's image change inside an optimistic update
// loop: the new image is resolved (downloaded, decoded) once, however many
// times the loop runs.
type Updater struct {
	Client *outbound.Client
	Clock  clock.Clock // the new image's created_at
	IDs    *ids.Generator
	Shop   *admin.Shop
	Change Change

	resolved bool
	img      *Image
	file     int64
	ops      []store.Op
}

// Apply moves the record's image (*img, stored in file *file) to the change
// and returns the writes: the new image's chunks, the old one's deletion.
func (u *Updater) Apply(ctx context.Context, st store.Store, img **Image, file *int64) ([]store.Op, error) {
	c := &u.Change
	if !c.Given || c.keeps(*img) {
		return nil, nil
	}
	if !c.Remove && !u.resolved {
		u.file = u.IDs.Next()
		var err error
		if u.img, u.ops, err = Resolve(ctx, u.Client, u.Clock, u.Shop, u.file, &c.In); err != nil {
			return nil, err
		}
		u.resolved = true
	}
	ops, err := DeleteFileOps(ctx, st, *file)
	if err != nil {
		return nil, err
	}
	*img, *file = nil, 0
	if !c.Remove {
		*img = u.img
		ops = append(ops, u.ops...)
		if len(u.ops) > 0 {
			*file = u.file
		}
	}
	return ops, nil
}

// DeleteFileOps are the writes deleting a stored file (one Query of its
// chunks); none for file 0.
func DeleteFileOps(ctx context.Context, st store.Store, file int64) ([]store.Op, error) {
	if file == 0 {
		return nil, nil
	}
	var ops []store.Op
	err := records.Each(ctx, st, store.Query{PK: FilePartition(file)}, func(it *store.Item) error {
		ops = append(ops, store.Delete(it.Key(), store.Always, 0))
		return nil
	})
	return ops, err
}
