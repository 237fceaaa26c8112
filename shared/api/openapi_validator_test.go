package api_test

import (
	"strings"
	"testing"
)

// articleImage is an article's image as the service answers it.
const articleImage = `"image":{"src":"https://demo-shop.example.com/files/7/image.png","width":2,"height":3,"created_at":"2024-03-11T10:00:00-04:00"}`

// schemaCheck validates JSON against the document's schemas.
type schemaCheck struct {
	t   *testing.T
	doc *openAPI
	v   *validator
}

func newSchemaCheck(t *testing.T, doc *openAPI) *schemaCheck {
	return &schemaCheck{t: t, doc: doc, v: &validator{doc: doc}}
}

// ok requires body to match schema.
func (c *schemaCheck) ok(schema any, body string) {
	c.t.Helper()
	if errs := c.v.validate(schema, decodeJSON([]byte(body)), "$"); len(errs) > 0 {
		c.t.Errorf("%s: unexpected errors:\n%s", body, strings.Join(errs, "\n"))
	}
}

// bad requires body not to match schema.
func (c *schemaCheck) bad(schema any, body string) {
	c.t.Helper()
	if errs := c.v.validate(schema, decodeJSON([]byte(body)), "$"); len(errs) == 0 {
		c.t.Errorf("%s: accepted, want an error", body)
	}
}

// schemaRef refers to a schema of the document's components.
func schemaRef(name string) any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func TestOpenAPIValidator(t *testing.T) {
	doc := loadOpenAPI(t)
	t.Run("content responses", func(t *testing.T) { newSchemaCheck(t, doc).validateContentSchemas() })
	t.Run("catalog and error responses", func(t *testing.T) { newSchemaCheck(t, doc).validateCatalogSchemas() })
	t.Run("requests", func(t *testing.T) { newSchemaCheck(t, doc).validateRequestSchemas() })
	t.Run("keywords", func(t *testing.T) { newSchemaCheck(t, doc).validateKeywords() })
}

// The content resources' answers: redirects, script tags, pages,
// metafields, articles, comments, webhooks and their deliveries.
func (c *schemaCheck) validateContentSchemas() {
	tag := `"id":1,"src":"https://js.example.org/a.js","event":"onload","display_scope":"all","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`

	c.ok(schemaRef("RedirectResponse"), `{"redirect":{"id":1,"path":"/a","target":"/b"}}`)
	c.bad(schemaRef("RedirectResponse"), `{"redirect":{"id":1,"path":"/a","target":"/b","extra":1}}`)
	c.bad(schemaRef("RedirectResponse"), `{"redirect":{"id":1,"path":"/a"}}`)
	c.bad(schemaRef("RedirectResponse"), `{"redirect":{"id":"1","path":"/a","target":"/b"}}`)
	c.bad(schemaRef("RedirectResponse"), `{"redirect":{"id":1.5,"path":"/a","target":"/b"}}`)
	c.bad(schemaRef("RedirectResponse"), `{"redirect":{"id":0,"path":"/a","target":"/b"}}`)
	c.ok(schemaRef("RedirectFieldsResponse"), `{"redirect":{"id":1}}`)
	c.bad(schemaRef("RedirectFieldsResponse"), `{"redirect":{"id":1,"other":2}}`)
	c.ok(schemaRef("ScriptTagResponse"), `{"script_tag":{`+tag+`}}`)
	c.bad(schemaRef("ScriptTagResponse"), `{"script_tag":{`+tag+`,"app_id":1}}`)
	c.bad(schemaRef("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, "2024-03-11T10:00:00-04:00", "2024-03-11 10:00", 1)+`}}`)
	c.bad(schemaRef("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, `"onload"`, `"onclick"`, 1)+`}}`)
	c.bad(schemaRef("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, `"2024-03-11T10:00:00-04:00"`, `null`, 1)+`}}`)
	page := `"id":1,"shop_id":1,"title":"About","handle":"about","body_html":"","author":"Demo App","published_at":null,"template_suffix":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	c.ok(schemaRef("PageResponse"), `{"page":{`+page+`}}`)
	c.ok(schemaRef("PageResponse"), `{"page":{`+strings.Replace(page, `"published_at":null`, `"published_at":"2024-03-11T10:00:00-04:00"`, 1)+`}}`)
	c.bad(schemaRef("PageResponse"), `{"page":{`+page+`,"published":true}}`)
	c.bad(schemaRef("PageResponse"), `{"page":{`+strings.Replace(page, `"template_suffix":null,`, ``, 1)+`}}`)
	c.bad(schemaRef("PageResponse"), `{"page":{`+strings.Replace(page, `"title":"About"`, `"title":""`, 1)+`}}`)
	c.ok(schemaRef("PageFieldsResponse"), `{"page":{"id":1,"handle":"about"}}`)
	c.bad(schemaRef("PageFieldsResponse"), `{"page":{"id":1,"metafields":[]}}`)
	c.ok(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":25,"value_type":"integer"}`)
	c.ok(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"a","value_type":"string","description":null}`)
	c.bad(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":2.5,"value_type":"integer"}`)
	c.bad(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"a","value_type":"float"}`)
	article := `"id":1,"blog_id":1,"title":"Hi","handle":"hi","author":"Demo App","user_id":null,"body_html":"","summary_html":null,"tags":"","published_at":null,"template_suffix":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`

	c.ok(schemaRef("ArticleResponse"), `{"article":{`+article+`}}`)
	c.ok(schemaRef("ArticleResponse"), `{"article":{`+article+`,`+articleImage+`}}`)
	c.ok(schemaRef("ArticleResponse"), `{"article":{`+strings.Replace(article, `"tags":""`, `"tags":"News, Tag"`, 1)+`}}`)
	c.bad(schemaRef("ArticleResponse"), `{"article":{`+article+`,"image":null}}`)
	c.bad(schemaRef("ArticleResponse"), `{"article":{`+article+`,`+strings.Replace(articleImage, `"width":2,`, ``, 1)+`}}`)
	c.bad(schemaRef("ArticleResponse"), `{"article":{`+article+`,`+strings.Replace(articleImage, `"width":2`, `"width":0`, 1)+`}}`)
	c.bad(schemaRef("ArticleResponse"), `{"article":{`+article+`,"published":true}}`)
	c.bad(schemaRef("ArticleResponse"), `{"article":{`+strings.Replace(article, `"summary_html":null,`, ``, 1)+`}}`)
	c.bad(schemaRef("ArticleResponse"), `{"article":{`+strings.Replace(article, `"blog_id":1`, `"blog_id":null`, 1)+`}}`)
	c.ok(schemaRef("ArticleFieldsResponse"), `{"article":{"id":1,`+articleImage+`}}`)
	c.bad(schemaRef("ArticleFieldsResponse"), `{"article":{"id":1,"metafields":[]}}`)
	c.ok(schemaRef("ArticleTags"), `{"tags":["News","Tag"]}`)
	c.bad(schemaRef("ArticleTags"), `{"tags":[""]}`)
	c.ok(schemaRef("ArticleAuthors"), `{"authors":[]}`)
	c.bad(schemaRef("ArticleAuthors"), `{"authors":"Demo App"}`)
	comment := `"id":1,"article_id":1,"blog_id":1,"author":"Ann","email":"ann@example.com","body":"Hi","body_html":"<p>Hi</p>","ip":"192.0.2.1","user_agent":null,"status":"pending","published_at":"2024-03-11T10:00:00-04:00","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	c.ok(schemaRef("Comment"), `{`+comment+`}`)
	c.ok(schemaRef("CommentResponse"), `{"comment":{`+strings.Replace(comment, `"user_agent":null`, `"user_agent":"curl/8.5.0"`, 1)+`}}`)
	c.bad(schemaRef("Comment"), `{"comment":{`+comment+`}}`)
	c.bad(schemaRef("Comment"), `{`+strings.Replace(comment, `"pending"`, `"approved"`, 1)+`}`)
	c.bad(schemaRef("CommentResponse"), `{"comment":{`+strings.Replace(comment, `"user_agent":null,`, ``, 1)+`}}`)
	c.ok(schemaRef("CommentFieldsResponse"), `{"comment":{"id":1,"status":"spam"}}`)
	c.bad(schemaRef("CommentFieldsResponse"), `{"comment":{"id":1,"spam":true}}`)
	hook := `"id":1,"address":"https://whatever.example.com/hooks","topic":"orders/create","format":"json","fields":[],"metafield_namespaces":[],"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	c.ok(schemaRef("WebhookResponse"), `{"webhook":{`+hook+`}}`)
	c.ok(schemaRef("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"fields":[]`, `"fields":["id","note"]`, 1)+`}}`)
	c.bad(schemaRef("WebhookResponse"), `{"webhook":{`+hook+`,"app_id":1001}}`)
	c.bad(schemaRef("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"orders/create"`, `"orders/exploded"`, 1)+`}}`)
	c.bad(schemaRef("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"json"`, `"yaml"`, 1)+`}}`)
	c.bad(schemaRef("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"fields":[]`, `"fields":null`, 1)+`}}`)
	c.ok(schemaRef("WebhookFieldsResponse"), `{"webhook":{"id":1,"topic":"app/uninstalled"}}`)
	attempt := `"id":1,"delivery_id":"b028050c9779db2fbf2cb22e14f10629","topic":"orders/create","attempt":1,"response_status":null,"duration_ms":5000,"error":"timeout","dead_lettered":false,"created_at":"2024-03-11T10:00:00-04:00"`
	c.ok(schemaRef("DeliveryList"), `{"deliveries":[{`+attempt+`}]}`)
	c.ok(schemaRef("DeliveryList"), `{"deliveries":[{`+strings.NewReplacer(`"response_status":null`, `"response_status":200`, `"error":"timeout"`, `"error":null`).Replace(attempt)+`}]}`)
	c.bad(schemaRef("DeliveryList"), `{"deliveries":[{`+strings.Replace(attempt, `"attempt":1`, `"attempt":0`, 1)+`}]}`)
	c.bad(schemaRef("DeliveryAttempt"), `{`+strings.Replace(attempt, `"dead_lettered":false,`, ``, 1)+`}`)
}

// The catalog's answers (collections, collects, variants, fulfillment
// services), counts and errors.
func (c *schemaCheck) validateCatalogSchemas() {
	custom := `"id":1,"title":"IPods","handle":"ipods","body_html":null,"published_at":null,"published_scope":"global","sort_order":"manual","template_suffix":null,"updated_at":"2024-03-11T10:00:00-04:00"`
	c.ok(schemaRef("CustomCollectionList"), `{"custom_collections":[{`+custom+`}]}`)
	c.ok(schemaRef("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"products_count":2,`+articleImage+`}}`)
	c.bad(schemaRef("CustomCollectionResponse"), `{"custom_collection":{`+strings.Replace(custom, `"manual"`, `"random"`, 1)+`}}`)
	c.bad(schemaRef("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"products_count":-1}}`)
	c.bad(schemaRef("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"collects":[]}}`)
	smartRule := `{"column":"variant_price","relation":"greater_than","condition":"150"}`
	c.ok(schemaRef("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"products_count":0,"disjunctive":false,"rules":[`+smartRule+`]}}`)
	c.bad(schemaRef("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"disjunctive":false,"rules":[]}}`)
	c.bad(schemaRef("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"products_count":0,"disjunctive":false,"rules":[`+strings.Replace(smartRule, `"150"`, `150`, 1)+`]}}`)
	c.ok(schemaRef("SmartCollectionRuleInput"), strings.Replace(smartRule, `"150"`, `150`, 1))
	c.bad(schemaRef("SmartCollectionRuleInput"), strings.Replace(smartRule, `"variant_price"`, `"colour"`, 1))
	collect := `"id":1,"collection_id":2,"product_id":3,"featured":false,"position":1,"sort_value":"0000000001","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	c.ok(schemaRef("CollectResponse"), `{"collect":{`+collect+`}}`)
	c.bad(schemaRef("CollectResponse"), `{"collect":{`+strings.Replace(collect, `"0000000001"`, `"1"`, 1)+`}}`)
	variant := `"id":1,"product_id":2,"title":"Pink","option1":"Pink","option2":null,"option3":null,"sku":"","barcode":null,"price":"199.00","compare_at_price":null,"position":1,"grams":200,"weight":0.2,"weight_unit":"kg","taxable":true,"requires_shipping":true,"fulfillment_service":"manual","inventory_management":null,"inventory_policy":"deny","inventory_quantity":-3,"old_inventory_quantity":-3,"image_id":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	c.ok(schemaRef("VariantResponse"), `{"variant":{`+variant+`}}`)
	c.ok(schemaRef("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"compare_at_price":null`, `"compare_at_price":"250.00"`, 1)+`}}`)
	c.bad(schemaRef("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"price":"199.00"`, `"price":199`, 1)+`}}`)
	c.bad(schemaRef("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"image_id":null,`, ``, 1)+`}}`)
	c.ok(schemaRef("VariantFieldsResponse"), `{"variant":{"id":1,"inventory_quantity":5}}`)
	c.ok(schemaRef("VariantCreate"), `{"price":1.5,"compare_at_price":null}`)
	c.ok(schemaRef("VariantCreate"), `{"price":"1.50","compare_at_price":"2"}`)
	c.bad(schemaRef("VariantCreate"), `{"price":true}`)
	service := `"id":1,"name":"Mars","handle":"mars","service_name":"Mars","callback_url":null,"format":"json","inventory_management":false,"tracking_support":false,"requires_shipping_method":true,"provider_id":null,"credential1":null,"credential2_exists":false,"email":null,"include_pending_stock":false`
	c.ok(schemaRef("FulfillmentServiceList"), `{"fulfillment_services":[{`+service+`}]}`)
	c.bad(schemaRef("FulfillmentServiceResponse"), `{"fulfillment_service":{`+service+`,"credential2":"pw"}}`)
	c.bad(schemaRef("FulfillmentServiceResponse"), `{"fulfillment_service":{`+strings.Replace(service, `"callback_url":null`, `"callback_url":"not a uri"`, 1)+`}}`)
	c.ok(schemaRef("Count"), `{"count":0}`)
	c.bad(schemaRef("Count"), `{"count":-1}`)
	c.ok(schemaRef("Empty"), `{}`)
	c.bad(schemaRef("Empty"), `{"a":1}`)
	c.ok(schemaRef("BadRequestError"), `{"errors":"malformed JSON"}`)
	c.ok(schemaRef("BadRequestError"), `{"errors":{"redirect":"Required parameter missing or invalid"}}`)
	c.ok(schemaRef("BadRequestError"), `{"errors":{"limit":["must be an integer between 1 and 250"]}}`)
	c.bad(schemaRef("BadRequestError"), `{"errors":{}}`)
	c.ok(schemaRef("NotFoundError"), `{"errors":"Not Found"}`)
	c.bad(schemaRef("NotFoundError"), `{"errors":"Gone"}`)
}

// Request schemas allow only what the service accepts.
func (c *schemaCheck) validateRequestSchemas() {
	c.ok(schemaRef("PageCreate"), `{"title":" About us "}`)
	c.bad(schemaRef("PageCreate"), `{"title":""}`)
	c.bad(schemaRef("PageCreate"), `{"title":" \t\u00a0\u3000"}`)
	c.bad(schemaRef("PageCreate"), `{"title":"`+strings.Repeat("é", 256)+`"}`)
	c.ok(schemaRef("PageCreate"), `{"title":"`+strings.Repeat("é", 255)+`","handle":"about-us_2"}`)
	c.bad(schemaRef("PageCreate"), `{"title":"a","handle":"About"}`)
	c.ok(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":2.0,"value_type":"integer"}`)
	c.ok(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"-25","value_type":"integer"}`)
	c.bad(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"25 units","value_type":"integer"}`)
	c.bad(schemaRef("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":" ","value_type":"string"}`)
	c.bad(schemaRef("MetafieldInput"), `{"namespace":" ab ","key":"warehouse","value":"a","value_type":"string"}`)
	c.ok(schemaRef("MetafieldUpdate"), `{"value":"a"}`)
	c.bad(schemaRef("MetafieldUpdate"), `{"value":""}`)
	c.bad(schemaRef("MetafieldUpdate"), `{"value":" "}`)
	// Dates the service refuses: years 0000 and 0001 (any offset must stay
	// in 0001-9999), days a month does not have.
	c.ok(schemaRef("ArticleCreate"), `{"title":"a","published_at":"2024-02-29"}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","published_at":"2023-02-29"}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","published_at":"3758-02-31"}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","published_at":"2024-04-31T10:00:00Z"}`)
	dateFilter := map[string]any{"$ref": "#/components/parameters/UpdatedAtMin/schema"}
	c.ok(dateFilter, `"2000-02-29"`)
	c.bad(dateFilter, `"0000-01-01"`)
	c.bad(dateFilter, `"1900-02-29"`)
	c.bad(dateFilter, `"3758-02-31"`)
	c.ok(schemaRef("ArticleCreate"), `{"title":"a","published_at":"Thu Mar 24 15:45:47 UTC 2011"}`)
	c.ok(schemaRef("ArticleCreate"), `{"title":"a","published_at":"2024-03-11 10:00"}`)
	c.ok(schemaRef("ArticleCreate"), `{"title":"a","published_at":null,"tags":"a, b,c"}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","published_at":"0000-01-01T00:00:00+01:00"}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","published_at":"yesterday"}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","tags":"`+strings.Repeat("t,", 40)+`t"}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","tags":"`+strings.Repeat("t", 256)+`"}`)
	c.ok(schemaRef("ArticleCreate"), `{"title":"a","image":{"attachment":"R0lGODlhAQABAAAAACw="}}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","image":{"attachment":"R0lGODlhAQABAAAAACw"}}`)
	c.bad(schemaRef("ArticleCreate"), `{"title":"a","image":{}}`)
	c.ok(schemaRef("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","ip":"2001:db8::1","blog_id":1,"article_id":2}`)
	c.bad(schemaRef("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","ip":"01.2.3.4","blog_id":1,"article_id":2}`)
	c.bad(schemaRef("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@localhost","blog_id":1,"article_id":2}`)
	c.bad(schemaRef("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","blog_id":1,"article_id":9007199254740992}`)
	c.ok(schemaRef("CommentUpdate"), `{"published_at":"2024-03-11"}`)
	c.bad(schemaRef("CommentUpdate"), `{"published_at":null}`)
	c.ok(schemaRef("RedirectCreate"), `{"path":"/ipod?x=1","target":"https://example.com/a?b#c"}`)
	c.bad(schemaRef("RedirectCreate"), `{"path":"/ipod","target":"//example.com/a"}`)
	c.bad(schemaRef("RedirectCreate"), `{"path":"/ipod","target":"/a b"}`)
	c.bad(schemaRef("RedirectCreate"), `{"path":" ","target":"/a"}`)
	c.bad(schemaRef("ScriptTagCreate"), `{"event":"onload","src":"http://js.example.org/a.js"}`)
	c.ok(schemaRef("WebhookCreate"), `{"topic":"orders/create","address":"http://hooks.example.com:8080/a","fields":["id"]}`)
	c.bad(schemaRef("WebhookCreate"), `{"topic":"orders/create","address":"ftp://hooks.example.com/a"}`)
	c.bad(schemaRef("WebhookCreate"), `{"topic":"orders/create","address":"https://hooks.example.com/a","fields":[" "]}`)
	c.ok(schemaRef("SmartCollectionRuleInput"), `{"column":"variant_inventory","relation":"less_than","condition":2.0}`)
	c.bad(schemaRef("SmartCollectionRuleInput"), `{"column":"title","relation":"greater_than","condition":"a"}`)
	c.bad(schemaRef("SmartCollectionRuleInput"), `{"column":"variant_price","relation":"contains","condition":"9"}`)
	c.bad(schemaRef("SmartCollectionRuleInput"), `{"column":"variant_price","relation":"equals","condition":"cheap"}`)
	c.bad(schemaRef("SmartCollectionRuleInput"), `{"column":"tag","relation":"equals","condition":" "}`)
	c.bad(schemaRef("VariantCreate"), `{"price":-1}`)
	c.bad(schemaRef("VariantCreate"), `{"image_id":0}`)
	c.bad(schemaRef("VariantCreate"), `{"image_id":9223372036854775806}`)
	c.bad(schemaRef("VariantCreate"), `{"fulfillment_service":" "}`)
	c.ok(schemaRef("FulfillmentServiceCreate"), `{"name":"Mars","inventory_management":true,"callback_url":"https://mars.example.com/fs"}`)
	c.ok(schemaRef("FulfillmentServiceCreate"), `{"name":"Mars","callback_url":""}`)
	c.bad(schemaRef("FulfillmentServiceCreate"), `{"name":"Mars","tracking_support":true}`)
	c.bad(schemaRef("FulfillmentServiceCreate"), `{"name":"Mars","tracking_support":true,"callback_url":null}`)
	c.bad(schemaRef("FulfillmentServiceCreate"), `{"name":"Mars","callback_url":"https://mars.example.com/fs?x=1"}`)
}

// Type arrays, whole resources, unsupported keywords and patterns.
func (c *schemaCheck) validateKeywords() {
	t := c.t
	// Type arrays, as nullable properties are written.
	nullable := map[string]any{"type": []any{"string", "null"}, "format": "date-time"}
	c.ok(nullable, `null`)
	c.ok(nullable, `"2024-03-11T10:00:00Z"`)
	c.bad(nullable, `3`)
	// Whole resources only, when no fields parameter was sent.
	whole := &validator{doc: c.doc, whole: true}
	if errs := whole.validate(schemaRef("RedirectFieldsResponse"), decodeJSON([]byte(`{"redirect":{"id":1}}`)), "$"); len(errs) == 0 {
		t.Error("a restricted redirect passed as a whole one")
	}
	// Unsupported keywords are reported rather than ignored.
	c.bad(map[string]any{"nullable": true}, `1`)
	// Patterns are unanchored unless they say so, and must mean the same in
	// ECMA-262, RE2 and Python.
	c.ok(map[string]any{"pattern": "b"}, `"abc"`)
	c.bad(map[string]any{"pattern": "^b"}, `"abc"`)
	if errs := c.v.checkKeywords(map[string]any{"pattern": `^\d+$`}, "#"); len(errs) == 0 {
		t.Error(`pattern \d passed the keyword check`)
	}
}

// ---------------------------------------------------------------------------
// The scenario.
