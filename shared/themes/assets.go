package themes

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

// MsgOneSource is the 422 of an asset PUT without exactly one source.
const MsgOneSource = "must have exactly one of value, attachment, src or source_key"

// writable returns the theme, refusing writes while it is processing.
func (s Service) writable(ctx context.Context, id int64) (theme.Record, error) {
	rec, _, err := s.get(ctx, id)
	if err != nil {
		return rec, err
	}
	if rec.Processing {
		return rec, admin.Invalid("base", MsgThemeBusy)
	}
	return rec, nil
}

// Assets lists a theme's assets, metadata only, in key order. base is the
// service's address, for public_url.
func (s Service) Assets(ctx context.Context, themeID int64, base string) ([]AssetAnswer, error) {
	if _, _, err := s.get(ctx, themeID); err != nil {
		return nil, err
	}
	recs, err := theme.List(ctx, s.Store, themeID)
	if err != nil {
		return nil, err
	}
	out := make([]AssetAnswer, len(recs))
	for i := range recs {
		out[i] = answer(&recs[i], base)
	}
	return out, nil
}

// Asset reads one asset with its content: `value` for text in UTF-8,
// `attachment` (Base64) for anything else.
func (s Service) Asset(ctx context.Context, themeID int64, key, base string) (AssetAnswer, error) {
	if _, _, err := s.get(ctx, themeID); err != nil {
		return AssetAnswer{}, err
	}
	if theme.ValidKey(key) != "" {
		return AssetAnswer{}, admin.NotFound
	}
	rec, content, err := theme.Read(ctx, s.Store, themeID, key)
	if err != nil {
		return AssetAnswer{}, err
	}
	a := answer(&rec, base)
	if theme.Textual(rec.ContentType) && utf8.Valid(content) {
		v := string(content)
		a.Value = &v
	} else {
		v := base64.StdEncoding.EncodeToString(content)
		a.Attachment = &v
	}
	return a, nil
}

// PutAsset creates or replaces an asset from one source and answers its
// metadata.
func (s Service) PutAsset(ctx context.Context, themeID int64, in *AssetInput, base string) (AssetAnswer, error) {
	if _, err := s.writable(ctx, themeID); err != nil {
		return AssetAnswer{}, err
	}
	var v admin.Validation
	key := ""
	if in.Key != nil {
		key = *in.Key
	}
	if msg := theme.ValidKey(key); msg != "" {
		v.Add("key", msg)
	}
	n := 0
	for _, p := range []*string{in.Value, in.Attachment, in.Src, in.SourceKey} {
		if p != nil {
			n++
		}
	}
	if n != 1 {
		v.Add("asset", MsgOneSource)
	}
	if err := v.Err(); err != nil {
		return AssetAnswer{}, err
	}
	var content []byte
	switch {
	case in.Value != nil:
		content = []byte(*in.Value)
	case in.Attachment != nil:
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(*in.Attachment))
		if err != nil {
			return AssetAnswer{}, admin.Invalid("attachment", "is not valid Base64")
		}
		content = b
	case in.Src != nil:
		src := strings.TrimSpace(*in.Src)
		if !httpURL(src) || len(src) > MaxURL {
			return AssetAnswer{}, admin.Invalid("src", admin.MsgInvalid)
		}
		if s.Outbound.Refuses(src) {
			return AssetAnswer{}, admin.Invalid("src", outbound.MsgRefused)
		}
		b, err := s.Outbound.Get(ctx, src, theme.MaxAssetSize)
		if err != nil {
			return AssetAnswer{}, admin.Invalid("src", outbound.Reason(err))
		}
		content = b
	default:
		if theme.ValidKey(*in.SourceKey) != "" {
			return AssetAnswer{}, admin.Invalid("source_key", admin.MsgInvalid)
		}
		_, b, err := theme.Read(ctx, s.Store, themeID, *in.SourceKey)
		if errors.Is(err, admin.NotFound) {
			return AssetAnswer{}, admin.Invalid("source_key", "does not exist")
		}
		if err != nil {
			return AssetAnswer{}, err
		}
		content = b
	}
	if msg := theme.CheckContent(key, content); msg != "" {
		return AssetAnswer{}, admin.Invalid("asset", msg)
	}
	rec, err := theme.Put(ctx, s.Store, s.Clock, themeID, key, content, store.Check(theme.Key(themeID), store.IfPresent, 0))
	if store.FailedOn(err, theme.Key(themeID)) {
		return AssetAnswer{}, admin.NotFound // the theme was deleted meanwhile
	}
	if err != nil {
		return AssetAnswer{}, err
	}
	return answer(&rec, base), nil
}

// DeleteAsset removes an asset; the main layout cannot be deleted (403).
func (s Service) DeleteAsset(ctx context.Context, themeID int64, key string) error {
	if _, err := s.writable(ctx, themeID); err != nil {
		return err
	}
	if theme.ValidKey(key) != "" {
		return admin.NotFound
	}
	if key == theme.MainLayout {
		return &admin.Error{Code: admin.EFORBIDDEN}
	}
	return theme.Delete(ctx, s.Store, themeID, key)
}

// PublicFile returns an assets/ file of a theme for the token-less route.
func (s Service) PublicFile(ctx context.Context, themeID int64, name string) (theme.AssetRecord, []byte, error) {
	key := "assets/" + name
	if theme.ValidKey(key) != "" {
		return theme.AssetRecord{}, nil, admin.NotFound
	}
	return theme.Read(ctx, s.Store, themeID, key)
}
