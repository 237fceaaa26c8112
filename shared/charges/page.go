package charges

import (
	"bytes"
	"html/template"
	"strconv"
	"sync"
	"time"
)

// PageCSS is the page's only style, inline and allowed by its hash in the
// Content-Security-Policy. The page has no script: it works without
// JavaScript, and its policy allows none.
const PageCSS = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1f2328;margin:0}` +
	`main{max-width:32rem;margin:3rem auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:2rem}` +
	`h1{font-size:1.3rem;margin-top:0}dl{display:grid;grid-template-columns:max-content auto;gap:.5rem 1.5rem}` +
	`dt{color:#57606a}dd{margin:0;font-weight:600}.test{background:#fff8c5;border:1px solid #d4a72c;padding:.6rem;border-radius:6px}` +
	`.actions{display:flex;gap:1rem;margin-top:1.5rem}form{margin:0}button{font-size:1rem;padding:.6rem 1.4rem;border-radius:6px;border:1px solid #8c959f;background:#f6f8fa;cursor:pointer}` +
	`button.accept{background:#1f883d;border-color:#1a7f37;color:#fff}.note{color:#57606a;font-size:.9rem}`

// pageTemplate is parsed on first use: only the confirmation page needs it,
// and no cold start should pay for it.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Approve a charge of {{.AppName}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<main>
<h1><span id="app">{{.AppName}}</span> asks for a recurring charge</h1>
{{if .Test}}<p class="test" id="test-notice">This is a test charge: no card will be charged.</p>
{{end}}<dl>
<dt>Plan</dt><dd id="plan">{{.Name}}</dd>
<dt>Price</dt><dd id="price">{{.Price}} every 30 days</dd>
<dt>Free trial</dt><dd id="trial">{{.Trial}}</dd>
</dl>
{{if .Pending}}<div class="actions">
<form method="post" action="{{.Secret}}/accept"><input type="hidden" name="csrf_token" value="{{.Token}}"><button type="submit" id="accept" class="accept">Accept</button></form>
<form method="post" action="{{.Secret}}/decline"><input type="hidden" name="csrf_token" value="{{.Token}}"><button type="submit" id="decline">Decline</button></form>
</div>
<p class="note">Billing starts when {{.AppName}} activates the charge, after the trial. This request expires on {{.Expires}}.</p>
{{else}}<p id="status">This charge is {{.Status}}.</p>
{{end}}</main>
</body>
</html>
`))
})

type pageData struct {
	AppName, Name, Price, Trial, Status, Secret, Token, Expires string
	Test, Pending                                               bool
	CSS                                                         template.CSS
}

// Page renders the confirmation page of c at now; everything shown is
// escaped by html/template.
func (c *Charge) Page(appName string, now time.Time) []byte {
	st := c.StatusAt(now)
	d := pageData{
		AppName: appName, Name: c.Name, Price: "$" + c.Price.String() + " USD", Status: st,
		Secret: c.Secret, Token: c.CSRFToken(), Test: c.Test != nil && *c.Test, Pending: st == StatusPending,
		Expires: c.CreatedAt.Add(ExpiresAfter).UTC().Format("January 2, 2006 at 15:04 UTC"), CSS: template.CSS(PageCSS),
	}
	switch c.TrialDays {
	case 0:
		d.Trial = "none"
	case 1:
		d.Trial = "1 day"
	default:
		d.Trial = strconv.FormatInt(c.TrialDays, 10) + " days"
	}
	var b bytes.Buffer
	if err := pageTemplate().Execute(&b, d); err != nil {
		panic(err) // the template and its data are fixed: a failure is a bug
	}
	return b.Bytes()
}
