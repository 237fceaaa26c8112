package themes

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

// Limits of a zip import.
const (
	MaxZip          = 50 << 20
	MaxEntries      = 2000
	MaxUncompressed = 200 << 20
	// MaxImportAttempts is how many times a job that fails for an internal
	// reason (the store) is tried before the theme is marked failed.
	MaxImportAttempts = 5
)

// DefaultDownloadTimeout bounds the zip download (besides the outbound
// client's own limits) unless Service.DownloadTimeout says otherwise.
const DefaultDownloadTimeout = 60 * time.Second

// importBuckets are the folders of a zip that are extracted; anything
// else in the zip is ignored.
var importBuckets = theme.Buckets

// refusal is an import that cannot succeed: its reason goes on the theme.
type refusal string

func (r refusal) Error() string { return string(r) }

// Import runs the import job of a theme: download the zip, extract its
// theme files, then make the theme previewable with its requested role. A
// refused zip leaves no asset behind and the reason on the theme. It
// returns an error only when trying again may help (the store failed).
func (s Service) Import(ctx context.Context, id int64) error {
	rec, _, err := s.get(ctx, id)
	if err != nil || !rec.Processing {
		if errors.Is(err, admin.NotFound) {
			return nil // deleted meanwhile
		}
		return err
	}
	if rec.Src != "" {
		err := s.extract(ctx, id, rec.Src)
		var r refusal
		if errors.As(err, &r) {
			if err := theme.DeleteAll(ctx, s.Store, id); err != nil {
				return err
			}
			if _, err := s.fail(ctx, id, string(r)); err != nil {
				return err
			}
			s.Metrics.ThemeImport(ctx, false)
			return nil
		}
		if err != nil {
			return err
		}
	}
	if err := s.finish(ctx, id); err != nil {
		return err
	}
	s.Metrics.ThemeImport(ctx, true)
	return nil
}

// HandleMessage runs the job of one queue message received for the
// attempt-th time; after MaxImportAttempts failed attempts the theme is
// marked failed and the message is settled.
func (s Service) HandleMessage(ctx context.Context, body []byte, attempt int) error {
	id, err := decodeMessage(body)
	if err != nil {
		slog.ErrorContext(ctx, "theme import message dropped", "error", err.Error())
		return nil
	}
	err = s.Import(ctx, id)
	if err != nil && attempt >= MaxImportAttempts {
		slog.ErrorContext(ctx, "theme import failed", "theme_id", id, "attempt", attempt, "error", err.Error())
		if err := theme.DeleteAll(ctx, s.Store, id); err != nil {
			return err
		}
		_, err := s.fail(ctx, id, "could not be imported: internal error")
		if errors.Is(err, admin.NotFound) {
			return nil
		}
		if err == nil {
			s.Metrics.ThemeImport(ctx, false)
		}
		return err
	}
	return err
}

// ConsumeImports runs the import jobs of ThemeImports until ctx ends: the local
// runner's theme-import function.
func (s Service) ConsumeImports(ctx context.Context) {
	q := s.ThemeImports
	for ctx.Err() == nil {
		msgs, err := q.Receive(ctx, 1, queue.MaxWait)
		if err != nil {
			if ctx.Err() == nil {
				slog.Error("theme import queue receive failed", "error", err.Error())
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		for _, m := range msgs {
			if err := s.HandleMessage(ctx, m.Body, m.Attempt); err != nil {
				slog.Warn("theme import will be retried", "attempt", m.Attempt, "error", err.Error())
				if err := q.Retry(ctx, m, 5*time.Second); err != nil {
					slog.Warn("theme import retry not scheduled: the queue redelivers it", "error", err.Error())
				}
				continue
			}
			if err := q.Ack(ctx, m); err != nil {
				slog.Warn("theme import not acknowledged: it may run again (imports are idempotent)", "error", err.Error())
			}
		}
	}
}

// extract downloads the zip and writes its theme files as assets.
func (s Service) extract(ctx context.Context, id int64, src string) error {
	timeout := s.DownloadTimeout
	if timeout == 0 {
		timeout = DefaultDownloadTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	body, err := s.Outbound.Get(dctx, src, MaxZip)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return refusal("src could not be downloaded: timed out")
		}
		return refusal("src " + outbound.Reason(err))
	}
	files, err := entries(body)
	if err != nil {
		return err
	}
	read := int64(0)
	guard := store.Check(theme.Key(id), store.IfPresent, 0)
	for _, f := range files {
		rc, err := f.file.Open()
		if err != nil {
			return refusal(fmt.Sprintf("zip entry %s cannot be read", f.file.Name))
		}
		budget := min(int64(theme.MaxAssetSize), MaxUncompressed-read)
		content, err := io.ReadAll(io.LimitReader(rc, budget+1))
		rc.Close()
		if err != nil {
			return refusal(fmt.Sprintf("zip entry %s cannot be read", f.file.Name))
		}
		if int64(len(content)) > budget {
			if budget < theme.MaxAssetSize {
				return refusal("zip is larger than 200 MB uncompressed")
			}
			return refusal(fmt.Sprintf("zip entry %s is larger than %d MB", f.file.Name, theme.MaxAssetSize>>20))
		}
		read += int64(len(content))
		if msg := theme.CheckContent(f.key, content); msg != "" {
			return refusal(f.key + " " + msg)
		}
		if _, err := theme.Put(ctx, s.Store, s.Clock, id, f.key, content, guard); err != nil {
			if store.FailedOn(err, guard.TargetKey()) {
				return nil // the theme was deleted: finish finds nothing
			}
			return err
		}
	}
	return nil
}

type entry struct {
	file *zip.File
	key  string
}

// entries checks a zip as a whole before anything is written: a zip, at
// most MaxEntries entries, no path leaving the theme (zip-slip), no
// symbolic link, at most MaxUncompressed bytes declared, and a main
// layout. It returns the entries to extract with their asset keys (a
// single top folder holding everything is dropped).
func entries(body []byte) ([]entry, error) {
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if errors.Is(err, zip.ErrInsecurePath) {
		return nil, refusal("zip has an entry with an unsafe path")
	}
	if err != nil {
		return nil, refusal("src is not a zip archive")
	}
	if len(zr.File) > MaxEntries {
		return nil, refusal(fmt.Sprintf("zip has more than %d entries", MaxEntries))
	}
	total := uint64(0)
	for _, f := range zr.File {
		if unsafePath(f.Name) {
			return nil, refusal(fmt.Sprintf("zip entry %q has an unsafe path", f.Name))
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			return nil, refusal(fmt.Sprintf("zip entry %q is a symbolic link", f.Name))
		}
		total += f.UncompressedSize64
		if total > MaxUncompressed {
			return nil, refusal("zip is larger than 200 MB uncompressed")
		}
	}
	root := commonRoot(zr.File)
	var out []entry
	layout := false
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasSuffix(f.Name, "/") {
			continue
		}
		key := strings.TrimPrefix(f.Name, root)
		bucket, _, _ := strings.Cut(key, "/")
		if !containsString(importBuckets, bucket) || strings.HasPrefix(key, "__MACOSX/") {
			continue
		}
		if msg := theme.ValidKey(key); msg != "" {
			return nil, refusal(fmt.Sprintf("zip entry %q is not a valid asset key", f.Name))
		}
		layout = layout || key == theme.MainLayout
		out = append(out, entry{f, key})
	}
	if !layout {
		return nil, refusal("zip has no " + theme.MainLayout)
	}
	return out, nil
}

// unsafePath reports a name that could leave the extraction folder.
func unsafePath(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") ||
		(len(name) > 1 && name[1] == ':') {
		return true
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// commonRoot is "<dir>/" when every entry is under one top folder that is
// not a bucket (zips made by compressing a theme's folder), else "".
func commonRoot(files []*zip.File) string {
	root := ""
	for _, f := range files {
		top, _, ok := strings.Cut(f.Name, "/")
		if !ok || containsString(importBuckets, top) || (root != "" && top != root) {
			return ""
		}
		root = top
	}
	if root == "" {
		return ""
	}
	return root + "/"
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
