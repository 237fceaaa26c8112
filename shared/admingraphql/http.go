package admingraphql

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/platform"
)

// operations are what the handler calls.
type operations interface {
	Execute(ctx context.Context, req *graphql.Request) (Answer, error)
}

type handler struct{ operations }

// MaxBody caps a GraphQL request: a query of MaxQueryLength and its
// variables.
const MaxBody = 1 << 20

// Routes serves the GraphQL Admin API (owners: how metafields find their
// owners, as the REST metafields do) at /admin/graphql.json, and so at
// /admin/api/{version}/graphql.json (the router's Shopify form). It needs a
// token and no scope (each field checks its own) and spends no REST call:
// the query's cost is metered instead.
func Routes(d *platform.Deps, owners map[string]metafields.Lookup) []httpapi.Route {
	h := handler{NewExecutor(d, owners)}
	return []httpapi.Route{{Method: "POST", Path: "/admin/graphql.json", Handler: h.serve, Metered: true, MaxBody: MaxBody}}
}

// serve reads a JSON body {query, variables, operationName} (variables and
// operationName may be absent or null) or, with Content-Type
// application/graphql, a bare query, and answers 200 with the data, the
// errors and the cost, as Shopify's clients read it.
func (h handler) serve(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	var req graphql.Request
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/graphql" {
		req.Query = string(body)
	} else {
		if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
			return admin.BadParam("query", "Required parameter missing or invalid: the body must be a JSON object with query, variables and operationName")
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			return admin.BadParam("query", "Required parameter missing or invalid: the body must be a JSON object with query, variables and operationName")
		}
		for k, v := range req.Variables {
			req.Variables[k] = numbers(v)
		}
	}
	if err := checkRequest(&req); err != nil {
		return err
	}
	ans, err := h.Execute(r.Context(), &req)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, ans)
	return nil
}

// numbers turns the JSON numbers of variables into int64 where they are
// whole (Int arguments) and float64 otherwise.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
		return v
	}
	return v
}

// checkRequest refuses, as a 400 naming the parameter, what is no GraphQL
// request at all (docs/openapi.yaml): no query, one longer than
// graphql.MaxQueryLength or holding control characters (a GraphQL
// document has none but tab and line breaks), an operationName with any.
func checkRequest(req *graphql.Request) error {
	bad := func(r rune, lines bool) bool {
		return r < 0x20 && !(lines && (r == '\t' || r == '\n' || r == '\r')) || r >= 0x7f && r <= 0x9f
	}
	switch {
	case req.Query == "":
		return admin.BadParam("query", "Required parameter missing or invalid")
	case utf8.RuneCountInString(req.Query) > graphql.MaxQueryLength:
		return admin.BadParam("query", "is longer than "+strconv.Itoa(graphql.MaxQueryLength)+" characters")
	case strings.IndexFunc(req.Query, func(r rune) bool { return bad(r, true) }) >= 0:
		return admin.BadParam("query", "must not contain control characters")
	case utf8.RuneCountInString(req.OperationName) > 255 || strings.IndexFunc(req.OperationName, func(r rune) bool { return bad(r, false) }) >= 0:
		return admin.BadParam("operationName", "must be a name of at most 255 characters")
	}
	return nil
}

// baseOf is the request's public base URL (httpapi.BaseURL), for the
// addresses resolvers answer (a charge's confirmationUrl).
func baseOf(ctx context.Context) string { return httpapi.BaseURLOf(ctx) }
