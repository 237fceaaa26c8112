package theme

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Buckets are the first segment an asset key may have (schema Asset names layout,
// templates, assets and config; themes also carry the others).
var Buckets = []string{"layout", "templates", "snippets", "assets", "config", "sections", "locales"}

// Limits of asset keys and contents.
const (
	MaxKeyLength = 255
	// MaxAssetSize bounds one asset's content.
	MaxAssetSize = 10 << 20
	// ChunkSize is the content bytes of one chunk item: Base64 in JSON
	// keeps it under 350 KB, inside DynamoDB's 400 KB item limit.
	ChunkSize = 256 << 10
	// InlineChunks is how many chunks go in the transaction that writes
	// the asset item itself (2 MiB, 2.7 MB encoded: DynamoDB caps a
	// transaction at 4 MB); larger contents are written beforehand in
	// batches of as many.
	InlineChunks = 8
)

// MainLayout is the layout every theme needs; it cannot be deleted.
const MainLayout = "layout/theme.liquid"

// Asset is the metadata of an asset, as stored and listed.
type Asset struct {
	Key         string     `json:"key"`
	ThemeID     int64      `json:"theme_id"`
	ContentType string     `json:"content_type"`
	Size        int64      `json:"size"`
	CreatedAt   admin.Time `json:"created_at"`
	UpdatedAt   admin.Time `json:"updated_at"`
}

// AssetRecord is the stored asset: metadata, a checksum of the content
// (the public route's ETag) and the pointer to the content's blob.
type AssetRecord struct {
	Asset
	Checksum string `json:"checksum"`
	Blob     string `json:"blob"`
	Chunks   int    `json:"chunks"`
}

// ValidKey reports why key is not a usable asset key ("" when it is):
// <bucket>/<name> with a known bucket, forward slashes only, no empty, "."
// or ".." segment, no leading slash, no control characters.
func ValidKey(key string) string {
	switch {
	case key == "":
		return admin.MsgBlank
	case len(key) > MaxKeyLength:
		return admin.TooLong(MaxKeyLength)
	case !utf8.ValidString(key) || strings.ContainsAny(key, "\\") || strings.HasPrefix(key, "/"):
		return admin.MsgInvalid
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return admin.MsgInvalid
		}
	}
	segs := strings.Split(key, "/")
	if len(segs) < 2 || !knownBucket(segs[0]) {
		return "must be <bucket>/<name> with a bucket of " + strings.Join(Buckets, ", ")
	}
	for _, s := range segs[1:] {
		if s == "" || s == "." || s == ".." || strings.TrimSpace(s) != s {
			return admin.MsgInvalid
		}
	}
	return ""
}

func knownBucket(b string) bool {
	for _, k := range Buckets {
		if b == k {
			return true
		}
	}
	return false
}

// Public reports whether an asset is served without a token (the assets/ bucket).
func Public(key string) bool { return strings.HasPrefix(key, "assets/") }

// contentTypes maps extensions to MIME types; the table is the service's
// own, so the answer does not depend on the host's mime files.
var contentTypes = map[string]string{
	".liquid": "text/x-liquid", ".css": "text/css", ".scss": "text/x-scss", ".js": "application/javascript",
	".mjs": "application/javascript", ".json": "application/json", ".html": "text/html", ".htm": "text/html",
	".txt": "text/plain", ".xml": "application/xml", ".svg": "image/svg+xml", ".png": "image/png",
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".ico": "image/x-icon", ".avif": "image/avif", ".woff": "font/woff", ".woff2": "font/woff2",
	".ttf": "font/ttf", ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject", ".map": "application/json",
	".pdf": "application/pdf", ".mp4": "video/mp4", ".webm": "video/webm",
}

// ContentType is the MIME type of a key, from its extension.
func ContentType(key string) string {
	if ct, ok := contentTypes[strings.ToLower(path.Ext(key))]; ok {
		return ct
	}
	return "application/octet-stream"
}

// Textual reports whether a content type is text, answered as `value`.
func Textual(ct string) bool {
	return strings.HasPrefix(ct, "text/") || ct == "application/javascript" || ct == "application/json" ||
		ct == "application/xml" || ct == "image/svg+xml"
}

// layoutTags are the two tags a layout must output, compiled on first use
// rather than at every cold start.
var layoutTags = sync.OnceValue(func() [2]*regexp.Regexp {
	return [2]*regexp.Regexp{
		regexp.MustCompile(`\{\{-?\s*content_for_header\s*-?\}\}`),
		regexp.MustCompile(`\{\{-?\s*content_for_layout\s*-?\}\}`),
	}
})

// MsgLayout is the 422 message of a layout missing its required tags.
const MsgLayout = "must contain {{ content_for_header }} and {{ content_for_layout }}"

// CheckContent returns why content cannot be stored under key ("" when it
// can): a .liquid layout must output the header and the page.
func CheckContent(key string, content []byte) string {
	if len(content) > MaxAssetSize {
		return fmt.Sprintf("is too large (maximum is %d MB)", MaxAssetSize>>20)
	}
	if strings.HasPrefix(key, "layout/") && strings.HasSuffix(key, ".liquid") &&
		(!layoutTags()[0].Match(content) || !layoutTags()[1].Match(content)) {
		return MsgLayout
	}
	return ""
}

// BlobPartition holds the chunks of one blob of a theme's asset.
func BlobPartition(themeID int64, blob string) string {
	return fmt.Sprintf("assetblob#%d#%s", themeID, blob)
}

type chunk struct {
	B []byte `json:"b"` // Base64 in JSON
}

func newBlobID() string {
	var b [10]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func chunkSK(i int) string { return fmt.Sprintf("%05d", i) }

// chunkOps are the IfAbsent puts of content's chunks under blob.
func chunkOps(themeID int64, blob string, content []byte) []store.Op {
	var ops []store.Op
	for i := 0; i*ChunkSize < len(content); i++ {
		part := content[i*ChunkSize : min(len(content), (i+1)*ChunkSize)]
		ops = append(ops, store.Put(store.Item{PK: BlobPartition(themeID, blob), SK: chunkSK(i), Version: 1,
			Data: records.Encode(chunk{part})}, store.IfAbsent, 0))
	}
	return ops
}

func blobDeletes(themeID int64, blob string, chunks int) []store.Op {
	ops := make([]store.Op, 0, chunks)
	for i := range chunks {
		ops = append(ops, store.Delete(store.Key{PK: BlobPartition(themeID, blob), SK: chunkSK(i)}, store.Always, 0))
	}
	return ops
}

// NewRecord is the record of content stored under key of a theme, with a
// fresh blob (not yet written).
func NewRecord(themeID int64, key string, content []byte, now admin.Time) AssetRecord {
	sum := sha256.Sum256(content)
	return AssetRecord{
		Asset: Asset{Key: key, ThemeID: themeID, ContentType: ContentType(key), Size: int64(len(content)),
			CreatedAt: now, UpdatedAt: now},
		Checksum: hex.EncodeToString(sum[:16]),
		Blob:     newBlobID(),
		Chunks:   (len(content) + ChunkSize - 1) / ChunkSize,
	}
}

// CreateOps are the writes of a new asset whose content fits one
// transaction (the seed's and a new theme's starter files).
func CreateOps(rec *AssetRecord, content []byte) []store.Op {
	k := AssetKey(rec.ThemeID, rec.Key)
	ops := []store.Op{store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(rec)}, store.IfAbsent, 0)}
	return append(ops, chunkOps(rec.ThemeID, rec.Blob, content)...)
}

// Put stores content under key of a theme, creating or replacing the asset
// atomically for readers: the chunks are written under a new blob first
// (in the asset's own transaction when they fit, else in batches before
// it), then one small transaction points the asset item at the new blob,
// conditioned on the version read; the old blob is deleted afterwards.
// A reader that read the old pointer and finds its chunks gone reads the
// item again (Read). guard, when given, is checked in the pointer's
// transaction (the theme still exists and accepts writes). clk dates the
// asset.
func Put(ctx context.Context, st store.Store, clk clock.Clock, themeID int64, key string, content []byte, guard ...store.Op) (AssetRecord, error) {
	now := admin.At(clk.Now())
	rec := NewRecord(themeID, key, content, now)
	chunks := chunkOps(themeID, rec.Blob, content)
	large := len(chunks) > InlineChunks
	if large {
		for i := 0; i < len(chunks); i += InlineChunks {
			if err := st.Transact(ctx, chunks[i:min(len(chunks), i+InlineChunks)]...); err != nil {
				dropBlob(ctx, st, themeID, rec.Blob, rec.Chunks)
				return rec, err
			}
		}
	}
	var old *AssetRecord
	k := AssetKey(themeID, key)
	err := records.Retry(ctx, func() (bool, error) {
		old = nil
		var ops []store.Op
		it, err := st.Get(ctx, k)
		switch {
		case errors.Is(err, store.ErrNotFound):
			rec.CreatedAt = now
			ops = append(ops, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(&rec)}, store.IfAbsent, 0))
		case err != nil:
			return false, err
		default:
			var prev AssetRecord
			if err := records.Decode(&it, &prev); err != nil {
				return false, err
			}
			old = &prev
			rec.CreatedAt = prev.CreatedAt
			ops = append(ops, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: it.Version + 1, Data: records.Encode(&rec)}, store.IfVersion, it.Version))
		}
		ops = append(ops, guard...)
		if !large {
			ops = append(ops, chunks...)
		}
		err = st.Transact(ctx, ops...)
		return store.FailedOn(err, k), err
	})
	if err != nil {
		if large {
			dropBlob(ctx, st, themeID, rec.Blob, rec.Chunks)
		}
		return rec, err
	}
	if old != nil {
		dropBlob(ctx, st, themeID, old.Blob, old.Chunks)
	}
	return rec, nil
}

// dropBlob deletes a blob nobody points at any more; a failure leaves
// unreachable chunks behind (logged), never a broken asset.
func dropBlob(ctx context.Context, st store.Store, themeID int64, blob string, chunks int) {
	if chunks == 0 {
		return
	}
	if err := records.TransactBatches(ctx, st, blobDeletes(themeID, blob, chunks)); err != nil {
		slog.WarnContext(ctx, "asset blob left behind", "theme_id", themeID, "blob", blob, "error", err.Error())
	}
}

// Get reads an asset's metadata.
func Get(ctx context.Context, st store.Store, themeID int64, key string) (AssetRecord, store.Item, error) {
	var rec AssetRecord
	it, err := records.Get(ctx, st, AssetKey(themeID, key), &rec)
	return rec, it, err
}

// Read returns an asset with its content. The content is the whole of one
// blob: when the chunks of the blob it read the pointer to are gone (a
// replacement flipped the pointer and deleted them meanwhile), it reads
// the pointer again.
func Read(ctx context.Context, st store.Store, themeID int64, key string) (AssetRecord, []byte, error) {
	for attempt := 1; ; attempt++ {
		rec, _, err := Get(ctx, st, themeID, key)
		if err != nil {
			return rec, nil, err
		}
		content, ok, err := readBlob(ctx, st, &rec)
		if err != nil || ok {
			return rec, content, err
		}
		if attempt >= records.Attempts {
			return rec, nil, fmt.Errorf("theme: asset %d/%s: blob %s incomplete", themeID, key, rec.Blob)
		}
		if err := records.Wait(ctx, attempt); err != nil {
			return rec, nil, err
		}
	}
}

func readBlob(ctx context.Context, st store.Store, rec *AssetRecord) ([]byte, bool, error) {
	content := make([]byte, 0, rec.Size)
	n := 0
	err := records.Each(ctx, st, store.Query{PK: BlobPartition(rec.ThemeID, rec.Blob)}, func(it *store.Item) error {
		var c chunk
		if err := json.Unmarshal(it.Data, &c); err != nil {
			return err
		}
		if it.SK != chunkSK(n) {
			return records.ErrStop
		}
		content = append(content, c.B...)
		n++
		return nil
	})
	if err != nil && err != records.ErrStop {
		return nil, false, err
	}
	if n != rec.Chunks || int64(len(content)) != rec.Size {
		return nil, false, nil
	}
	return content, true, nil
}

// Delete removes an asset (conditioned on the version read), then its blob.
func Delete(ctx context.Context, st store.Store, themeID int64, key string, guard ...store.Op) error {
	var rec AssetRecord
	err := records.Retry(ctx, func() (bool, error) {
		var it store.Item
		var err error
		rec, it, err = Get(ctx, st, themeID, key)
		if err != nil {
			return false, err
		}
		ops := append([]store.Op{store.Delete(it.Key(), store.IfVersion, it.Version)}, guard...)
		err = st.Transact(ctx, ops...)
		return store.FailedOn(err, it.Key()), err
	})
	if err != nil {
		return err
	}
	dropBlob(ctx, st, themeID, rec.Blob, rec.Chunks)
	return nil
}

// List reads a theme's asset metadata in key order.
func List(ctx context.Context, st store.Store, themeID int64) ([]AssetRecord, error) {
	var out []AssetRecord
	err := records.Each(ctx, st, store.Query{PK: AssetPartition(themeID)}, func(it *store.Item) error {
		var rec AssetRecord
		if err := records.Decode(it, &rec); err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

// DeleteAll removes every asset of a theme and their blobs (after the
// theme's delete, or a failed import); each delete is idempotent.
func DeleteAll(ctx context.Context, st store.Store, themeID int64) error {
	recs, err := List(ctx, st, themeID)
	if err != nil {
		return err
	}
	var ops []store.Op
	for _, r := range recs {
		ops = append(ops, store.Delete(AssetKey(themeID, r.Key), store.Always, 0))
		ops = append(ops, blobDeletes(themeID, r.Blob, r.Chunks)...)
	}
	return records.TransactBatches(ctx, st, ops)
}
