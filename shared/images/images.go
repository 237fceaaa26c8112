// Package images resolves the image input of articles and collections: an
// `attachment` (Base64) or a `src` the service downloads through the
// outbound client. Either way the bytes must decode as an image, whose
// dimensions are returned.
//
// Attached bytes are kept in the table as file#<id> chunk items written in
// the resource's transaction, and the image is addressed at the shop's
// files path; a downloaded image keeps its source URL.
package images

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	_ "image/gif" // registered decoders: the formats storefronts accept
	_ "image/jpeg"
	_ "image/png"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/store"
)

// Image is the stored and returned image.
type Image struct {
	Src       string     `json:"src"`
	Width     int        `json:"width"`
	Height    int        `json:"height"`
	CreatedAt admin.Time `json:"created_at"`
}

// Input is the image as a client sends it.
type Input struct {
	Attachment *string `json:"attachment"`
	Src        *string `json:"src"`
	Filename   *string `json:"filename"`
}

// Limits: downloads up to MaxDownload; attachments must fit a DynamoDB
// transaction (4 MB) beside their resource.
const (
	MaxDownload   = 20 << 20
	MaxAttachment = 5 << 19   // 2.5 MB: its Base64 chunks and the resource fit a 4 MB transaction
	chunkSize     = 256 << 10 // Base64 in the item: 342 KB, under DynamoDB's 400 KB item limit
	// MaxBody is the request body limit of routes accepting an attachment.
	MaxBody = MaxAttachment*4/3 + 64<<10
)

// Resolve turns an input into an image and the writes that store its bytes
// (none for a downloaded image). id names the stored file. A failure is a
// 422 on field `image` saying why.
func Resolve(ctx context.Context, client *outbound.Client, clk clock.Clock, shop *admin.Shop, id int64, in *Input) (*Image, []store.Op, error) {
	var data []byte
	src := ""
	switch {
	case in.Attachment != nil && *in.Attachment != "":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(*in.Attachment))
		if err != nil {
			return nil, nil, admin.Invalid("image", "attachment is not valid Base64")
		}
		if len(b) > MaxAttachment {
			return nil, nil, admin.Invalid("image", "attachment is too large (maximum is 2.5 MB)")
		}
		data = b
	case in.Src != nil && *in.Src != "":
		b, err := client.Get(ctx, *in.Src, MaxDownload)
		if err != nil {
			return nil, nil, admin.Invalid("image", outbound.Reason(err))
		}
		data, src = b, *in.Src
	default:
		return nil, nil, admin.Invalid("image", "needs an attachment or a src")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, nil, admin.Invalid("image", "is not a valid image (PNG, JPEG or GIF)")
	}
	img := &Image{Width: cfg.Width, Height: cfg.Height, CreatedAt: admin.At(clk.Now()), Src: src}
	if src != "" {
		return img, nil, nil
	}
	name := "image." + format
	if in.Filename != nil && safeName(*in.Filename) {
		name = *in.Filename
	}
	img.Src = "https://" + shop.Domain + "/files/" + strconv.FormatInt(id, 10) + "/" + name
	var ops []store.Op
	for i := 0; i*chunkSize < len(data); i++ {
		chunk := data[i*chunkSize : min(len(data), (i+1)*chunkSize)]
		ops = append(ops, store.Put(store.Item{
			PK: FilePartition(id), SK: strconv.Itoa(i), Version: 1,
			Data: []byte(strconv.Quote(base64.StdEncoding.EncodeToString(chunk))),
		}, store.Always, 0))
	}
	return img, ops, nil
}

// FilePartition holds the chunks of a stored file.
func FilePartition(id int64) string { return "file#" + strconv.FormatInt(id, 10) }

func safeName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
