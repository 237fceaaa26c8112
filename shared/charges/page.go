package charges

import (
	"strconv"
	"time"
)

// pageBody is the confirmation page, in the shared page shell (http.go
// renders it with httpapi.PageTemplate).
const pageBody = `{{define "title"}}Approve a charge of {{.AppName}}{{end}}{{define "main"}}<h1><span id="app">{{.AppName}}</span> asks for a recurring charge</h1>
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
{{end}}{{end}}`

type pageData struct {
	AppName, Name, Price, Trial, Status, Secret, Token, Expires string
	Test, Pending                                               bool
}

// page is what the confirmation page of c shows at now; html/template
// escapes all of it.
func (c *Charge) page(appName string, now time.Time) pageData {
	st := c.StatusAt(now)
	d := pageData{
		AppName: appName, Name: c.Name, Price: "$" + c.Price.String() + " USD", Status: st,
		Secret: c.Secret, Token: c.CSRFToken(), Test: c.Test != nil && *c.Test, Pending: st == StatusPending,
		Expires: c.CreatedAt.Add(ExpiresAfter).UTC().Format("January 2, 2006 at 15:04 UTC"),
	}
	switch c.TrialDays {
	case 0:
		d.Trial = "none"
	case 1:
		d.Trial = "1 day"
	default:
		d.Trial = strconv.FormatInt(c.TrialDays, 10) + " days"
	}
	return d
}
