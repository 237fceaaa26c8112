package admingraphql

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

// MaxThemeFiles is how many files one themeFilesUpsert, themeFilesCopy or
// themeFilesDelete takes, as Shopify's.
const MaxThemeFiles = 50

// themeObj is an OnlineStoreTheme.
type themeObj struct {
	t theme.Theme
	s Service
}

func (themeObj) TypeName() string { return "OnlineStoreTheme" }

func (o themeObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	t := o.t
	switch f.Name {
	case "id":
		return graphql.GID("OnlineStoreTheme", t.ID), nil
	case "name":
		return t.Name, nil
	case "role":
		return strings.ToUpper(t.Role), nil
	case "processing":
		return t.Processing, nil
	case "processingFailed":
		return t.ImportError != nil, nil
	case "themeStoreId":
		if t.ThemeStoreID == nil {
			return nil, nil
		}
		return *t.ThemeStoreID, nil
	case "createdAt":
		return t.CreatedAt.Time, nil
	case "updatedAt":
		return t.UpdatedAt.Time, nil
	case "files":
		return o.s.themeFiles(ctx, f, t.ID)
	}
	return nil, nil
}

// fileObj is an OnlineStoreThemeFile; its content is read once, when body
// or checksumMd5 asks for it.
type fileObj struct {
	a       themes.AssetAnswer
	s       Service
	content *themes.AssetAnswer
}

func (*fileObj) TypeName() string { return "OnlineStoreThemeFile" }

func (o *fileObj) read(ctx context.Context) (*themes.AssetAnswer, error) {
	if o.content == nil {
		a, err := o.s.Themes.Asset(ctx, o.a.ThemeID, o.a.Key, baseOf(ctx))
		if err != nil {
			return nil, err
		}
		o.content = &a
	}
	return o.content, nil
}

func (o *fileObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "filename":
		return o.a.Key, nil
	case "contentType":
		return o.a.ContentType, nil
	case "size":
		return o.a.Size, nil
	case "createdAt":
		return o.a.CreatedAt.Time, nil
	case "updatedAt":
		return o.a.UpdatedAt.Time, nil
	case "checksumMd5":
		a, err := o.read(ctx)
		if err != nil {
			return nil, err
		}
		return md5Hex(contentOf(a)), nil
	case "body":
		// Content comes back in the JSON answer, as text or Base64, never
		// as a URL to render: a theme's HTML runs on no origin of the API
		// (the token-less assets/ route serves files under the sandbox
		// policy, TestThemeHTMLNeverRuns).
		a, err := o.read(ctx)
		if err != nil {
			return nil, err
		}
		if a.Value != nil {
			return graphql.Map{Type: "OnlineStoreThemeFileBodyText", Fields: map[string]any{"content": *a.Value}}, nil
		}
		return graphql.Map{Type: "OnlineStoreThemeFileBodyBase64", Fields: map[string]any{"contentBase64": *a.Attachment}}, nil
	}
	return nil, nil
}

func contentOf(a *themes.AssetAnswer) []byte {
	if a.Value != nil {
		return []byte(*a.Value)
	}
	b, _ := base64.StdEncoding.DecodeString(*a.Attachment)
	return b
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// fileConnection is an OnlineStoreThemeFileConnection: one page of a
// theme's files in filename order, its cursors the filenames.
type fileConnection struct {
	files         []*fileObj
	hasNext, prev bool
}

func (*fileConnection) TypeName() string { return "OnlineStoreThemeFileConnection" }

func (c *fileConnection) Len() int { return len(c.files) }

func fileCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("file:" + name))
}

func (c *fileConnection) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "nodes":
		out := make([]graphql.Object, len(c.files))
		for i, x := range c.files {
			out[i] = x
		}
		return out, nil
	case "edges":
		out := make([]graphql.Object, len(c.files))
		for i, x := range c.files {
			out[i] = graphql.Map{Type: "OnlineStoreThemeFileEdge", Fields: map[string]any{"cursor": fileCursor(x.a.Key), "node": x}}
		}
		return out, nil
	case "pageInfo":
		info := map[string]any{"hasNextPage": c.hasNext, "hasPreviousPage": false, "startCursor": nil, "endCursor": nil}
		if n := len(c.files); n > 0 {
			info["startCursor"], info["endCursor"] = fileCursor(c.files[0].a.Key), fileCursor(c.files[n-1].a.Key)
			info["hasPreviousPage"] = c.prev
		}
		return graphql.Map{Type: "PageInfo", Fields: info}, nil
	case "userErrors":
		return []graphql.Object{}, nil
	}
	return nil, nil
}

// themeFiles is a theme's files: its assets in filename order, those
// matching filenames (a * matches any run of characters, / included, as
// Shopify's), first of them after the cursor.
func (s Service) themeFiles(ctx context.Context, f *graphql.Field, themeID int64) (any, error) {
	n, gerr := graphql.PageSize(f.Args)
	if gerr != nil {
		return nil, gerr
	}
	after := ""
	if c, _ := f.Args["after"].(string); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		name, ok := strings.CutPrefix(string(raw), "file:")
		if err != nil || !ok {
			return nil, graphql.Errorf("BAD_REQUEST", "Invalid cursor for current pagination sort.")
		}
		after = name
	}
	var globs []string
	if list, ok := f.Args["filenames"].([]any); ok {
		globs = strs(list)
	}
	list, err := s.Themes.Assets(ctx, themeID, baseOf(ctx))
	if err != nil {
		return found(nil, err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Key < list[j].Key })
	conn := &fileConnection{prev: after != ""}
	for _, a := range list {
		if a.Key <= after && after != "" || !matchesAny(globs, a.Key) {
			continue
		}
		if len(conn.files) == n {
			conn.hasNext = true
			break
		}
		conn.files = append(conn.files, &fileObj{a: a, s: s})
	}
	return conn, nil
}

// matchesAny reports whether name matches one of globs (none: all).
func matchesAny(globs []string, name string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if globMatch(g, name) {
			return true
		}
	}
	return false
}

// globMatch matches name against a pattern whose * matches any run of
// characters.
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}

func (s Service) themeQuery(ctx context.Context, f *graphql.Field) (any, error) {
	if f.Name == "theme" {
		id, err := idArg(f, "id", "OnlineStoreTheme")
		if err != nil {
			return nil, err
		}
		t, err := s.Themes.Get(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		return themeObj{t, s}, nil
	}
	p, err := graphql.PageArgs(f.Args)
	if err != nil {
		return nil, err
	}
	list, err := s.Themes.List(ctx)
	if err != nil {
		return nil, err
	}
	var names, roles []string
	if v, ok := f.Args["names"].([]any); ok {
		names = strs(v)
	}
	if v, ok := f.Args["roles"].([]any); ok {
		for _, r := range strs(v) {
			roles = append(roles, strings.ToLower(r))
		}
	}
	var kept []theme.Theme
	for _, t := range list {
		if (names == nil || matchesAny(names, t.Name)) && (roles == nil || contains(roles, t.Role)) {
			kept = append(kept, t)
		}
	}
	// The shop's themes are few (at most 20): the page is cut from them all.
	page, before, after := cut(kept, p, func(t theme.Theme) int64 { return t.ID })
	return connection("OnlineStoreThemeConnection", p, page, records.Span{Before: before, After: after}, func(t theme.Theme) graphql.Object { return themeObj{t, s} },
		func(t theme.Theme) int64 { return t.ID }), nil
}

// cut is the page p asks of a whole list in ascending id order, and
// whether records lie before and after it.
func cut[T any](list []T, p graphql.Page, id func(T) int64) ([]T, bool, bool) {
	lo, hi := 0, len(list)
	if p.After > 0 {
		for lo < hi && id(list[lo]) <= p.After {
			lo++
		}
	}
	if p.Before > 0 {
		for hi > lo && id(list[hi-1]) >= p.Before {
			hi--
		}
	}
	fromEnd := p.Back != p.Reverse
	if hi-lo > p.Limit {
		if fromEnd {
			lo = hi - p.Limit
		} else {
			hi = lo + p.Limit
		}
	}
	return list[lo:hi], lo > 0, hi < len(list)
}

// themeUserErrors are an operation's validation errors as the user errors
// of typ, for mutations whose inputs are arguments rather than one input
// object: field names the argument of REST's field k (nil: none), the
// message is REST's after the field's name (src is Source), code gives the
// code (nil: none of the enum fits); a missing record is "<record> does
// not exist" on id.
func themeUserErrors(typ, record string, err error, field func(k string) []string, code func(k, msg string) any) ([]graphql.Object, bool) {
	var ae *admin.Error
	if !errors.As(err, &ae) {
		return nil, false
	}
	var out []graphql.Object
	add := func(f []string, msg string, c any) {
		fields := map[string]any{"field": f, "message": msg, "code": c}
		if f == nil {
			fields["field"] = nil
		}
		out = append(out, graphql.Map{Type: typ, Fields: fields})
	}
	switch ae.Code {
	case admin.ENOTFOUND:
		add([]string{"id"}, record+" does not exist", code("id", "NOT_FOUND"))
	case admin.EINVALID, admin.EBADREQUEST:
		keys := make([]string, 0, len(ae.Fields))
		for k := range ae.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, msg := range ae.Fields[k] {
				if k == "base" { // an error of the whole record: REST's message as it is
					add(nil, msg, code(k, msg))
					continue
				}
				f := field(k) // nil: no argument holds it
				label := humanize(k)
				if k == "src" {
					label = "Source"
				}
				add(f, label+" "+msg, code(k, msg))
			}
		}
		if len(keys) == 0 {
			add(nil, ae.Message, code("", ae.Message))
		}
	default:
		return nil, false
	}
	return out, true
}

// themePayload is a theme mutation's answer.
func themePayload(typ, key string, value any, errType string, err error, field func(string) []string, code func(k, msg string) any) (graphql.Object, error) {
	fields := map[string]any{key: value, "userErrors": []graphql.Object{}}
	if err != nil {
		ue, ok := themeUserErrors(errType, "Theme", err, field, code)
		if !ok {
			return nil, err
		}
		fields[key], fields["userErrors"] = nil, ue
	}
	return graphql.Map{Type: typ, Fields: fields}, nil
}

// themeField names a theme input's REST field as the mutation's argument.
func themeField(k string) []string {
	switch k {
	case "src":
		return []string{"source"}
	case "name", "role":
		return []string{k}
	}
	return nil
}

// sourceName is a theme's name when themeCreate gives none: the zip's
// file name without .zip.
func sourceName(src string) string {
	u, err := url.Parse(src)
	if err != nil {
		return "Untitled theme"
	}
	name := strings.TrimSuffix(path.Base(u.Path), ".zip")
	if name == "" || name == "." || name == "/" {
		return "Untitled theme"
	}
	return name
}

func (s Service) themeMutation(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "themeCreate":
		src, _ := f.Args["source"].(string)
		role, _ := f.Args["role"].(string)
		if role != "" && role != "UNPUBLISHED" {
			return themePayload("ThemeCreatePayload", "theme", nil, "ThemeCreateUserError",
				admin.Invalid("role", "must be UNPUBLISHED: a theme is published by themePublish once its files are in"), themeField,
				func(string, string) any { return "INVALID_THEME_ROLE_FOR_THEME_CREATION" })
		}
		in := &themes.Input{Src: &src}
		if name, ok := f.Args["name"].(string); ok {
			in.Name = &name
		} else {
			name := sourceName(src)
			in.Name = &name
		}
		var v admin.Validation
		if strings.TrimSpace(src) == "" { // REST's blank src is the starter files; GraphQL's source is required
			v.Add("src", admin.MsgBlank)
		}
		err := v.Err()
		var t theme.Theme
		if err == nil {
			t, err = s.Themes.Create(ctx, in)
		}
		return themePayload("ThemeCreatePayload", "theme", themeObj{t, s}, "ThemeCreateUserError", err, themeField, noCode)
	case "themeUpdate":
		id, err := idArg(f, "id", "OnlineStoreTheme")
		if err != nil {
			return nil, err
		}
		m, _ := f.Args["input"].(map[string]any)
		in := &themes.Input{}
		if name, ok := m["name"].(string); ok {
			in.Name = &name
		}
		t, err := s.Themes.Update(ctx, id, in)
		return themePayload("ThemeUpdatePayload", "theme", themeObj{t, s}, "ThemeUpdateUserError", err, themeField, func(_, msg string) any {
			if c := codeOf(msg); c == "TOO_LONG" {
				return c
			} else if msg == "NOT_FOUND" {
				return msg
			}
			return "INVALID"
		})
	case "themeDelete":
		id, err := idArg(f, "id", "OnlineStoreTheme")
		if err != nil {
			return nil, err
		}
		_, err = s.Themes.Delete(ctx, id)
		return themePayload("ThemeDeletePayload", "deletedThemeId", graphql.GID("OnlineStoreTheme", id), "ThemeDeleteUserError", err, themeField, notFoundOnly)
	case "themePublish":
		id, err := idArg(f, "id", "OnlineStoreTheme")
		if err != nil {
			return nil, err
		}
		role := theme.RoleMain
		t, err := s.Themes.Update(ctx, id, &themes.Input{Role: &role})
		return themePayload("ThemePublishPayload", "theme", themeObj{t, s}, "ThemePublishUserError", err, func(string) []string { return []string{"id"} }, func(_, msg string) any {
			switch msg {
			case "NOT_FOUND":
				return msg
			case themes.MsgProcessing:
				return "CANNOT_PUBLISH_THEME_DURING_INSTALL"
			}
			return nil
		})
	}
	return s.themeFilesMutation(ctx, f)
}

func noCode(string, string) any { return nil }

func notFoundOnly(_, msg string) any {
	if msg == "NOT_FOUND" {
		return msg
	}
	return nil
}

// fileResult is an OnlineStoreThemeFileOperationResult.
func fileResult(a themes.AssetAnswer, sum any) graphql.Object {
	return graphql.Map{Type: "OnlineStoreThemeFileOperationResult", Fields: map[string]any{
		"filename": a.Key, "size": a.Size, "createdAt": a.CreatedAt.Time, "updatedAt": a.UpdatedAt.Time, "checksumMd5": sum}}
}

// fileError is an OnlineStoreThemeFilesUserErrors.
func fileError(field []string, filename any, msg, code string) graphql.Object {
	fields := map[string]any{"field": field, "filename": filename, "message": msg, "code": code}
	if field == nil {
		fields["field"] = nil
	}
	return graphql.Map{Type: "OnlineStoreThemeFilesUserErrors", Fields: fields}
}

// assetError is one file's operation error as a user error: REST's
// message after the field's name; nil when err is no user error.
func assetError(i int, arg, filename string, err error) graphql.Object {
	var ae *admin.Error
	if !errors.As(err, &ae) {
		return nil
	}
	field := []string{arg, strconv.Itoa(i)}
	switch ae.Code {
	case admin.ENOTFOUND:
		return fileError(field, filename, "File does not exist", "NOT_FOUND")
	case admin.EFORBIDDEN:
		return fileError(field, filename, "Filename "+theme.MainLayout+" cannot be deleted: every theme needs its layout", "ACCESS_DENIED")
	case admin.EINVALID, admin.EBADREQUEST:
		keys := make([]string, 0, len(ae.Fields))
		for k := range ae.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// One error per file: the first field's first message.
		for _, k := range keys {
			if len(ae.Fields[k]) == 0 {
				continue
			}
			msg := ae.Fields[k][0]
			if k == "base" {
				return fileError(nil, filename, msg, "ERROR")
			}
			name := map[string]string{"key": "filename", "asset": "body", "attachment": "body", "src": "body", "source_key": "srcFilename"}[k]
			if name == "" {
				name = k
			}
			return fileError(field, filename, humanize(name)+" "+msg, "FILE_VALIDATION_ERROR")
		}
		return fileError(field, filename, ae.Message, "ERROR")
	}
	return nil
}

// themeFilesMutation runs themeFilesUpsert, themeFilesCopy and
// themeFilesDelete: each file as REST's asset PUT or DELETE (the same
// keys, limits and layout rule), one after another; a file that fails is
// a user error naming it, and the others are still written.
func (s Service) themeFilesMutation(ctx context.Context, f *graphql.Field) (any, error) {
	typ := strings.ToUpper(f.Name[:1]) + f.Name[1:] + "Payload"
	key := map[string]string{"themeFilesUpsert": "upsertedThemeFiles", "themeFilesCopy": "copiedThemeFiles", "themeFilesDelete": "deletedThemeFiles"}[f.Name]
	id, err := idArg(f, "themeId", "OnlineStoreTheme")
	if err != nil {
		return nil, err
	}
	files, _ := f.Args["files"].([]any)
	answer := func(results []graphql.Object, errs []graphql.Object) (any, error) {
		fields := map[string]any{key: results, "userErrors": errs}
		if results == nil {
			fields[key] = nil
		}
		if errs == nil {
			fields["userErrors"] = []graphql.Object{}
		}
		if f.Name == "themeFilesUpsert" {
			fields["job"] = nil // done in the request
		}
		return graphql.Map{Type: typ, Fields: fields}, nil
	}
	if len(files) > MaxThemeFiles {
		return answer(nil, []graphql.Object{fileError([]string{"files"}, nil,
			"Files must hold at most "+strconv.Itoa(MaxThemeFiles)+" files", "LESS_THAN_OR_EQUAL_TO")})
	}
	if _, err := s.Themes.Get(ctx, id); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return answer(nil, []graphql.Object{fileError([]string{"themeId"}, nil, "Theme does not exist", "NOT_FOUND")})
		}
		return nil, err
	}
	name := func(x any) string {
		switch v := x.(type) {
		case string:
			return v
		case map[string]any:
			if n, ok := v["filename"].(string); ok {
				return n
			}
			n, _ := v["dstFilename"].(string)
			return n
		}
		return ""
	}
	seen := map[string]bool{}
	var dups []graphql.Object
	for i, x := range files {
		n := name(x)
		if seen[n] {
			dups = append(dups, fileError([]string{"files", strconv.Itoa(i)}, n, "Filename "+n+" is given more than once", "DUPLICATE_FILE_INPUT"))
		}
		seen[n] = true
	}
	if dups != nil {
		return answer(nil, dups)
	}
	var meta map[string]themes.AssetAnswer
	if f.Name == "themeFilesDelete" { // what the results show of the files deleted
		list, err := s.Themes.Assets(ctx, id, baseOf(ctx))
		if err != nil {
			return nil, err
		}
		meta = make(map[string]themes.AssetAnswer, len(list))
		for _, a := range list {
			meta[a.Key] = a
		}
	}
	results := []graphql.Object{}
	var errs []graphql.Object
	for i, x := range files {
		n := name(x)
		var a themes.AssetAnswer
		var sum any
		var err error
		switch f.Name {
		case "themeFilesUpsert":
			m := x.(map[string]any)
			body, _ := m["body"].(map[string]any)
			value, _ := body["value"].(string)
			in := &themes.AssetInput{Key: &n}
			switch body["type"] {
			case "TEXT":
				in.Value, sum = &value, md5Hex([]byte(value))
			case "BASE64":
				in.Attachment = &value
				if b, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(value)); derr == nil {
					sum = md5Hex(b)
				}
			case "URL":
				in.Src = &value
			}
			a, err = s.Themes.PutAsset(ctx, id, in, baseOf(ctx))
		case "themeFilesCopy":
			m := x.(map[string]any)
			src, _ := m["srcFilename"].(string)
			a, err = s.Themes.PutAsset(ctx, id, &themes.AssetInput{Key: &n, SourceKey: &src}, baseOf(ctx))
		case "themeFilesDelete":
			var ok bool
			if a, ok = meta[n]; !ok {
				err = admin.NotFound
			} else {
				err = s.Themes.DeleteAsset(ctx, id, n)
			}
		}
		if err != nil {
			ue := assetError(i, "files", n, err)
			if ue == nil {
				return nil, err
			}
			errs = append(errs, ue)
			continue
		}
		results = append(results, fileResult(a, sum))
	}
	return answer(results, errs)
}
