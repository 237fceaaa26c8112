package oauth

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

// operations are what the handlers call: Service implements them, and a
// handler reaches nothing else (no store, no queue).
type operations interface {
	Authorize(ctx context.Context, r Request) (Prompt, error)
	Install(ctx context.Context, r Request, token, ownerSecret string) (string, error)
	Decline(ctx context.Context, r Request, token string) (Prompt, error)
	Exchange(ctx context.Context, in ExchangeInput) (Token, error)
}

type handler struct{ operations }

// Routes returns the authorization page and its two forms, the token
// exchange, and the scopes of the calling token. The page, its forms and
// the exchange are pages in the router's sense: no token (the owner has
// none; the exchange authenticates the app by its client secret), no call
// spent, the page headers on every answer. The page shows only what the
// app and the seed named, escaped, with no script.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	return []httpapi.Route{
		{Method: "GET", Path: "/admin/oauth/authorize", Page: true, Handler: h.authorize},
		{Method: "POST", Path: "/admin/oauth/authorize/install", Page: true, Handler: h.install, MaxBody: MaxBody},
		{Method: "POST", Path: "/admin/oauth/authorize/decline", Page: true, Handler: h.decline, MaxBody: MaxBody},
		{Method: "POST", Path: "/admin/oauth/access_token", Page: true, Handler: h.exchange, MaxBody: MaxBody},
		{Method: "GET", Path: "/admin/oauth/access_scopes.json", Handler: h.accessScopes},
	}
}

// MaxBody caps the forms and the exchange's body: every value the document
// allows (a 2048-character redirect_uri, a 1024-character state, ...) fits
// percent-encoded.
const MaxBody = 128 << 10

// pageTitle heads the error page of an authorization that cannot go on.
const pageTitle = "This app cannot be installed"

var (
	authorizePage = httpapi.PageTemplate(`{{define "title"}}Install {{.AppName}}{{end}}{{define "main"}}<h1>Install <span id="app">{{.AppName}}</span> on <span id="shop">{{.Shop.Name}}</span>?</h1>
<p>{{.AppName}} asks to:</p>
<ul class="scopes" id="scopes">{{range .Lines}}<li><code>{{.Handle}}</code>: {{.Text}}</li>{{else}}<li>nothing beyond knowing it is installed</li>{{end}}</ul>
{{if eq .Request.GrantOption "per-user"}}<p class="note" id="per-user">Access for you only, for 24 hours.</p>
{{end}}<div class="actions">
<form method="post" action="authorize/install">{{template "fields" .}}{{if .AskSecret}}<p><label for="owner_secret">The shop owner's secret</label> <input type="password" id="owner_secret" name="owner_secret" autocomplete="current-password" required></p>
{{else}}<p class="note" id="local-owner">On this local runner you are the shop's owner: installing approves these scopes.</p>
{{end}}<button type="submit" id="install" class="accept">Install app</button></form>
<form method="post" action="authorize/decline">{{template "fields" .}}<button type="submit" id="decline">Cancel</button></form>
</div>
<p class="note">After you install, you will go back to <span id="redirect">{{.Request.RedirectURI}}</span>.</p>
{{end}}{{define "fields"}}<input type="hidden" name="client_id" value="{{.Request.ClientID}}"><input type="hidden" name="scope" value="{{.Request.Scope}}"><input type="hidden" name="redirect_uri" value="{{.Request.RedirectURI}}"><input type="hidden" name="state" value="{{.Request.State}}"><input type="hidden" name="grant_options[]" value="{{.Request.GrantOption}}"><input type="hidden" name="csrf_token" value="{{.FormToken}}">{{end}}`)
	declinedPage = httpapi.PageTemplate(`{{define "title"}}{{.AppName}} was not installed{{end}}{{define "main"}}<h1 id="declined"><span id="app">{{.AppName}}</span> was not installed</h1>
<p>Nothing was shared with it. You can close this page.</p>
{{end}}`)
)

// request reads an authorization request from a query or a form.
func request(v url.Values) Request {
	return Request{ClientID: v.Get("client_id"), Scope: v.Get("scope"), RedirectURI: v.Get("redirect_uri"),
		State: v.Get("state"), GrantOption: v.Get("grant_options[]")}
}

// formActions are where the page's forms may lead: the redirect after
// install goes to the app's address, which the browser checks too.
func formActions(redirectURI string) []string {
	u, err := url.Parse(redirectURI)
	if err != nil || u.Host == "" {
		return nil
	}
	return []string{u.Scheme + "://" + u.Host}
}

func (h handler) authorize(w http.ResponseWriter, r *http.Request) error {
	p, err := h.Authorize(r.Context(), request(r.URL.Query()))
	if err != nil {
		httpapi.WritePageError(w, r, pageTitle, err)
		return nil
	}
	if p.Redirect != "" { // scopes the app holds: no page, as Shopify
		return httpapi.Found(w, p.Redirect)
	}
	return httpapi.WriteHTMLPage(w, http.StatusOK, authorizePage(), p, formActions(p.Request.RedirectURI)...)
}

// form reads the page's form: the request and its token.
func form(r *http.Request) (Request, string, error) {
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return Request{}, "", admin.Errorf(admin.ETOOLARGE, "Request body too large")
		}
		return Request{}, "", admin.Errorf(admin.EBADREQUEST, "Unreadable form")
	}
	return request(r.PostForm), r.PostForm.Get("csrf_token"), nil
}

// install answers 302 to the app's redirect_uri with the code, signed.
func (h handler) install(w http.ResponseWriter, r *http.Request) error {
	req, token, err := form(r)
	target := ""
	if err == nil {
		target, err = h.Install(r.Context(), req, token, r.PostForm.Get("owner_secret"))
	}
	if err != nil {
		httpapi.WritePageError(w, r, pageTitle, err)
		return nil
	}
	return httpapi.Found(w, target)
}

func (h handler) decline(w http.ResponseWriter, r *http.Request) error {
	req, token, err := form(r)
	var p Prompt
	if err == nil {
		p, err = h.Decline(r.Context(), req, token)
	}
	if err != nil {
		httpapi.WritePageError(w, r, pageTitle, err)
		return nil
	}
	return httpapi.WriteHTMLPage(w, http.StatusOK, declinedPage(), p)
}

// exchange reads a grant (client_id, client_secret, and code, or
// grant_type and its fields) from a JSON object (Shopify's Node library)
// or a form (its Ruby and Python ones; a body that is no JSON object is
// read as a form whatever its Content-Type says).
func (h handler) exchange(w http.ResponseWriter, r *http.Request) error {
	var in ExchangeInput
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	if body = bytes.TrimSpace(body); len(body) > 0 && body[0] == '{' {
		if err := httpapi.DecodeObject(body, &in); err != nil {
			return err
		}
	} else {
		f, err := url.ParseQuery(string(body))
		if err != nil {
			return admin.Errorf(admin.EBADREQUEST, "the body must be a JSON object or a form with client_id, client_secret and code")
		}
		in = ExchangeInput{ClientID: f.Get("client_id"), ClientSecret: f.Get("client_secret"), Code: f.Get("code"),
			GrantType: f.Get("grant_type"), RefreshToken: f.Get("refresh_token"), SubjectToken: f.Get("subject_token"),
			SubjectTokenType: f.Get("subject_token_type"), RequestedTokenType: f.Get("requested_token_type"), Scope: f.Get("scope")}
		if f.Has("expiring") {
			in.Expiring = f.Get("expiring")
		}
	}
	tok, err := h.Exchange(r.Context(), in)
	var oauthErr *Error
	if errors.As(err, &oauthErr) {
		// The refresh and token exchange grants answer as Shopify's: OAuth's
		// error object.
		httpapi.WriteJSON(w, oauthErr.Status, oauthErr)
		return nil
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, tok)
	return nil
}

// accessScopes answers the scopes the calling token holds.
func (h handler) accessScopes(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"access_scopes": AccessScopes(admin.AppFrom(r.Context()))})
	return nil
}
