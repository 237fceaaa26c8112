package admingraphql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/httpapi"
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

// Routes serves the GraphQL Admin API at /admin/graphql.json, and so at
// /admin/api/{version}/graphql.json (the router's Shopify form). It needs a
// token and no scope (each field checks its own) and spends no REST call:
// the query's cost is metered instead.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewExecutor(d)}
	return []httpapi.Route{{Method: "POST", Path: "/admin/graphql.json", Handler: h.serve, Metered: true, MaxBody: MaxBody}}
}

// serve reads a JSON body {query, variables, operationName} (variables and
// operationName may be absent or null) or, with Content-Type
// application/graphql, a bare query, and answers 200 with the data, the
// errors and the cost, as Shopify's clients read it.
func (h handler) serve(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return admin.Errorf(admin.ETOOLARGE, "Request body too large")
		}
		return admin.Errorf(admin.EBADREQUEST, "could not read the request body")
	}
	var req graphql.Request
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/graphql" {
		req.Query = string(body)
	} else {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			return admin.BadParam("query", "Required parameter missing or invalid: the body must be a JSON object with query, variables and operationName")
		}
		for k, v := range req.Variables {
			req.Variables[k] = numbers(v)
		}
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
