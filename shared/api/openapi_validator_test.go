package api_test

import (
	"strings"
	"testing"
)

func TestOpenAPIValidator(t *testing.T) {
	doc := loadOpenAPI(t)
	v := &validator{doc: doc}
	ok := func(schema any, body string) {
		t.Helper()
		if errs := v.validate(schema, decodeJSON([]byte(body)), "$"); len(errs) > 0 {
			t.Errorf("%s: unexpected errors:\n%s", body, strings.Join(errs, "\n"))
		}
	}
	bad := func(schema any, body string) {
		t.Helper()
		if errs := v.validate(schema, decodeJSON([]byte(body)), "$"); len(errs) == 0 {
			t.Errorf("%s: accepted, want an error", body)
		}
	}
	ref := func(name string) any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	tag := `"id":1,"src":"https://js.example.org/a.js","event":"onload","display_scope":"all","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`

	ok(ref("RedirectResponse"), `{"redirect":{"id":1,"path":"/a","target":"/b"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":1,"path":"/a","target":"/b","extra":1}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":1,"path":"/a"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":"1","path":"/a","target":"/b"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":1.5,"path":"/a","target":"/b"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":0,"path":"/a","target":"/b"}}`)
	ok(ref("RedirectFieldsResponse"), `{"redirect":{"id":1}}`)
	bad(ref("RedirectFieldsResponse"), `{"redirect":{"id":1,"other":2}}`)
	ok(ref("ScriptTagResponse"), `{"script_tag":{`+tag+`}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+tag+`,"app_id":1}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, "2024-03-11T10:00:00-04:00", "2024-03-11 10:00", 1)+`}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, `"onload"`, `"onclick"`, 1)+`}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, `"2024-03-11T10:00:00-04:00"`, `null`, 1)+`}}`)
	page := `"id":1,"shop_id":1,"title":"About","handle":"about","body_html":"","author":"Demo App","published_at":null,"template_suffix":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("PageResponse"), `{"page":{`+page+`}}`)
	ok(ref("PageResponse"), `{"page":{`+strings.Replace(page, `"published_at":null`, `"published_at":"2024-03-11T10:00:00-04:00"`, 1)+`}}`)
	bad(ref("PageResponse"), `{"page":{`+page+`,"published":true}}`)
	bad(ref("PageResponse"), `{"page":{`+strings.Replace(page, `"template_suffix":null,`, ``, 1)+`}}`)
	bad(ref("PageResponse"), `{"page":{`+strings.Replace(page, `"title":"About"`, `"title":""`, 1)+`}}`)
	ok(ref("PageFieldsResponse"), `{"page":{"id":1,"handle":"about"}}`)
	bad(ref("PageFieldsResponse"), `{"page":{"id":1,"metafields":[]}}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":25,"value_type":"integer"}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"a","value_type":"string","description":null}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":2.5,"value_type":"integer"}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"a","value_type":"float"}`)
	article := `"id":1,"blog_id":1,"title":"Hi","handle":"hi","author":"Demo App","user_id":null,"body_html":"","summary_html":null,"tags":"","published_at":null,"template_suffix":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	img := `"image":{"src":"https://demo-shop.example.com/files/7/image.png","width":2,"height":3,"created_at":"2024-03-11T10:00:00-04:00"}`
	ok(ref("ArticleResponse"), `{"article":{`+article+`}}`)
	ok(ref("ArticleResponse"), `{"article":{`+article+`,`+img+`}}`)
	ok(ref("ArticleResponse"), `{"article":{`+strings.Replace(article, `"tags":""`, `"tags":"News, Tag"`, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,"image":null}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,`+strings.Replace(img, `"width":2,`, ``, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,`+strings.Replace(img, `"width":2`, `"width":0`, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,"published":true}}`)
	bad(ref("ArticleResponse"), `{"article":{`+strings.Replace(article, `"summary_html":null,`, ``, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+strings.Replace(article, `"blog_id":1`, `"blog_id":null`, 1)+`}}`)
	ok(ref("ArticleFieldsResponse"), `{"article":{"id":1,`+img+`}}`)
	bad(ref("ArticleFieldsResponse"), `{"article":{"id":1,"metafields":[]}}`)
	ok(ref("ArticleTags"), `{"tags":["News","Tag"]}`)
	bad(ref("ArticleTags"), `{"tags":[""]}`)
	ok(ref("ArticleAuthors"), `{"authors":[]}`)
	bad(ref("ArticleAuthors"), `{"authors":"Demo App"}`)
	comment := `"id":1,"article_id":1,"blog_id":1,"author":"Ann","email":"ann@example.com","body":"Hi","body_html":"<p>Hi</p>","ip":"192.0.2.1","user_agent":null,"status":"pending","published_at":"2024-03-11T10:00:00-04:00","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("Comment"), `{`+comment+`}`)
	ok(ref("CommentResponse"), `{"comment":{`+strings.Replace(comment, `"user_agent":null`, `"user_agent":"curl/8.5.0"`, 1)+`}}`)
	bad(ref("Comment"), `{"comment":{`+comment+`}}`)
	bad(ref("Comment"), `{`+strings.Replace(comment, `"pending"`, `"approved"`, 1)+`}`)
	bad(ref("CommentResponse"), `{"comment":{`+strings.Replace(comment, `"user_agent":null,`, ``, 1)+`}}`)
	ok(ref("CommentFieldsResponse"), `{"comment":{"id":1,"status":"spam"}}`)
	bad(ref("CommentFieldsResponse"), `{"comment":{"id":1,"spam":true}}`)
	hook := `"id":1,"address":"https://whatever.example.com/hooks","topic":"orders/create","format":"json","fields":[],"metafield_namespaces":[],"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("WebhookResponse"), `{"webhook":{`+hook+`}}`)
	ok(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"fields":[]`, `"fields":["id","note"]`, 1)+`}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+hook+`,"app_id":1001}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"orders/create"`, `"orders/exploded"`, 1)+`}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"json"`, `"yaml"`, 1)+`}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"fields":[]`, `"fields":null`, 1)+`}}`)
	ok(ref("WebhookFieldsResponse"), `{"webhook":{"id":1,"topic":"app/uninstalled"}}`)
	attempt := `"id":1,"delivery_id":"b028050c9779db2fbf2cb22e14f10629","topic":"orders/create","attempt":1,"response_status":null,"duration_ms":5000,"error":"timeout","dead_lettered":false,"created_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("DeliveryList"), `{"deliveries":[{`+attempt+`}]}`)
	ok(ref("DeliveryList"), `{"deliveries":[{`+strings.NewReplacer(`"response_status":null`, `"response_status":200`, `"error":"timeout"`, `"error":null`).Replace(attempt)+`}]}`)
	bad(ref("DeliveryList"), `{"deliveries":[{`+strings.Replace(attempt, `"attempt":1`, `"attempt":0`, 1)+`}]}`)
	bad(ref("DeliveryAttempt"), `{`+strings.Replace(attempt, `"dead_lettered":false,`, ``, 1)+`}`)
	custom := `"id":1,"title":"IPods","handle":"ipods","body_html":null,"published_at":null,"published_scope":"global","sort_order":"manual","template_suffix":null,"updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("CustomCollectionList"), `{"custom_collections":[{`+custom+`}]}`)
	ok(ref("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"products_count":2,`+img+`}}`)
	bad(ref("CustomCollectionResponse"), `{"custom_collection":{`+strings.Replace(custom, `"manual"`, `"random"`, 1)+`}}`)
	bad(ref("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"products_count":-1}}`)
	bad(ref("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"collects":[]}}`)
	smartRule := `{"column":"variant_price","relation":"greater_than","condition":"150"}`
	ok(ref("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"products_count":0,"disjunctive":false,"rules":[`+smartRule+`]}}`)
	bad(ref("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"disjunctive":false,"rules":[]}}`)
	bad(ref("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"products_count":0,"disjunctive":false,"rules":[`+strings.Replace(smartRule, `"150"`, `150`, 1)+`]}}`)
	ok(ref("SmartCollectionRuleInput"), strings.Replace(smartRule, `"150"`, `150`, 1))
	bad(ref("SmartCollectionRuleInput"), strings.Replace(smartRule, `"variant_price"`, `"colour"`, 1))
	collect := `"id":1,"collection_id":2,"product_id":3,"featured":false,"position":1,"sort_value":"0000000001","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("CollectResponse"), `{"collect":{`+collect+`}}`)
	bad(ref("CollectResponse"), `{"collect":{`+strings.Replace(collect, `"0000000001"`, `"1"`, 1)+`}}`)
	variant := `"id":1,"product_id":2,"title":"Pink","option1":"Pink","option2":null,"option3":null,"sku":"","barcode":null,"price":"199.00","compare_at_price":null,"position":1,"grams":200,"weight":0.2,"weight_unit":"kg","taxable":true,"requires_shipping":true,"fulfillment_service":"manual","inventory_management":null,"inventory_policy":"deny","inventory_quantity":-3,"old_inventory_quantity":-3,"image_id":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("VariantResponse"), `{"variant":{`+variant+`}}`)
	ok(ref("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"compare_at_price":null`, `"compare_at_price":"250.00"`, 1)+`}}`)
	bad(ref("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"price":"199.00"`, `"price":199`, 1)+`}}`)
	bad(ref("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"image_id":null,`, ``, 1)+`}}`)
	ok(ref("VariantFieldsResponse"), `{"variant":{"id":1,"inventory_quantity":5}}`)
	ok(ref("VariantCreate"), `{"price":1.5,"compare_at_price":null}`)
	ok(ref("VariantCreate"), `{"price":"1.50","compare_at_price":"2"}`)
	bad(ref("VariantCreate"), `{"price":true}`)
	service := `"id":1,"name":"Mars","handle":"mars","service_name":"Mars","callback_url":null,"format":"json","inventory_management":false,"tracking_support":false,"requires_shipping_method":true,"provider_id":null,"credential1":null,"credential2_exists":false,"email":null,"include_pending_stock":false`
	ok(ref("FulfillmentServiceList"), `{"fulfillment_services":[{`+service+`}]}`)
	bad(ref("FulfillmentServiceResponse"), `{"fulfillment_service":{`+service+`,"credential2":"pw"}}`)
	bad(ref("FulfillmentServiceResponse"), `{"fulfillment_service":{`+strings.Replace(service, `"callback_url":null`, `"callback_url":"not a uri"`, 1)+`}}`)
	ok(ref("Count"), `{"count":0}`)
	bad(ref("Count"), `{"count":-1}`)
	ok(ref("Empty"), `{}`)
	bad(ref("Empty"), `{"a":1}`)
	ok(ref("BadRequestError"), `{"errors":"malformed JSON"}`)
	ok(ref("BadRequestError"), `{"errors":{"redirect":"Required parameter missing or invalid"}}`)
	ok(ref("BadRequestError"), `{"errors":{"limit":["must be an integer between 1 and 250"]}}`)
	bad(ref("BadRequestError"), `{"errors":{}}`)
	ok(ref("NotFoundError"), `{"errors":"Not Found"}`)
	bad(ref("NotFoundError"), `{"errors":"Gone"}`)
	// Request schemas allow only what the service accepts.
	ok(ref("PageCreate"), `{"title":" About us "}`)
	bad(ref("PageCreate"), `{"title":""}`)
	bad(ref("PageCreate"), `{"title":" \t\u00a0\u3000"}`)
	bad(ref("PageCreate"), `{"title":"`+strings.Repeat("é", 256)+`"}`)
	ok(ref("PageCreate"), `{"title":"`+strings.Repeat("é", 255)+`","handle":"about-us_2"}`)
	bad(ref("PageCreate"), `{"title":"a","handle":"About"}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":2.0,"value_type":"integer"}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"-25","value_type":"integer"}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"25 units","value_type":"integer"}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":" ","value_type":"string"}`)
	bad(ref("MetafieldInput"), `{"namespace":" ab ","key":"warehouse","value":"a","value_type":"string"}`)
	ok(ref("MetafieldUpdate"), `{"value":"a"}`)
	bad(ref("MetafieldUpdate"), `{"value":""}`)
	bad(ref("MetafieldUpdate"), `{"value":" "}`)
	// Dates the service refuses: years 0000 and 0001 (any offset must stay
	// in 0001-9999), days a month does not have.
	ok(ref("ArticleCreate"), `{"title":"a","published_at":"2024-02-29"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"2023-02-29"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"3758-02-31"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"2024-04-31T10:00:00Z"}`)
	dateFilter := map[string]any{"$ref": "#/components/parameters/UpdatedAtMin/schema"}
	ok(dateFilter, `"2000-02-29"`)
	bad(dateFilter, `"0000-01-01"`)
	bad(dateFilter, `"1900-02-29"`)
	bad(dateFilter, `"3758-02-31"`)
	ok(ref("ArticleCreate"), `{"title":"a","published_at":"Thu Mar 24 15:45:47 UTC 2011"}`)
	ok(ref("ArticleCreate"), `{"title":"a","published_at":"2024-03-11 10:00"}`)
	ok(ref("ArticleCreate"), `{"title":"a","published_at":null,"tags":"a, b,c"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"0000-01-01T00:00:00+01:00"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"yesterday"}`)
	bad(ref("ArticleCreate"), `{"title":"a","tags":"`+strings.Repeat("t,", 40)+`t"}`)
	bad(ref("ArticleCreate"), `{"title":"a","tags":"`+strings.Repeat("t", 256)+`"}`)
	ok(ref("ArticleCreate"), `{"title":"a","image":{"attachment":"R0lGODlhAQABAAAAACw="}}`)
	bad(ref("ArticleCreate"), `{"title":"a","image":{"attachment":"R0lGODlhAQABAAAAACw"}}`)
	bad(ref("ArticleCreate"), `{"title":"a","image":{}}`)
	ok(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","ip":"2001:db8::1","blog_id":1,"article_id":2}`)
	bad(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","ip":"01.2.3.4","blog_id":1,"article_id":2}`)
	bad(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@localhost","blog_id":1,"article_id":2}`)
	bad(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","blog_id":1,"article_id":9007199254740992}`)
	ok(ref("CommentUpdate"), `{"published_at":"2024-03-11"}`)
	bad(ref("CommentUpdate"), `{"published_at":null}`)
	ok(ref("RedirectCreate"), `{"path":"/ipod?x=1","target":"https://example.com/a?b#c"}`)
	bad(ref("RedirectCreate"), `{"path":"/ipod","target":"//example.com/a"}`)
	bad(ref("RedirectCreate"), `{"path":"/ipod","target":"/a b"}`)
	bad(ref("RedirectCreate"), `{"path":" ","target":"/a"}`)
	bad(ref("ScriptTagCreate"), `{"event":"onload","src":"http://js.example.org/a.js"}`)
	ok(ref("WebhookCreate"), `{"topic":"orders/create","address":"http://hooks.example.com:8080/a","fields":["id"]}`)
	bad(ref("WebhookCreate"), `{"topic":"orders/create","address":"ftp://hooks.example.com/a"}`)
	bad(ref("WebhookCreate"), `{"topic":"orders/create","address":"https://hooks.example.com/a","fields":[" "]}`)
	ok(ref("SmartCollectionRuleInput"), `{"column":"variant_inventory","relation":"less_than","condition":2.0}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"title","relation":"greater_than","condition":"a"}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"variant_price","relation":"contains","condition":"9"}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"variant_price","relation":"equals","condition":"cheap"}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"tag","relation":"equals","condition":" "}`)
	bad(ref("VariantCreate"), `{"price":-1}`)
	bad(ref("VariantCreate"), `{"image_id":0}`)
	bad(ref("VariantCreate"), `{"image_id":9223372036854775806}`)
	bad(ref("VariantCreate"), `{"fulfillment_service":" "}`)
	ok(ref("FulfillmentServiceCreate"), `{"name":"Mars","inventory_management":true,"callback_url":"https://mars.example.com/fs"}`)
	ok(ref("FulfillmentServiceCreate"), `{"name":"Mars","callback_url":""}`)
	bad(ref("FulfillmentServiceCreate"), `{"name":"Mars","tracking_support":true}`)
	bad(ref("FulfillmentServiceCreate"), `{"name":"Mars","tracking_support":true,"callback_url":null}`)
	bad(ref("FulfillmentServiceCreate"), `{"name":"Mars","callback_url":"https://mars.example.com/fs?x=1"}`)
	// Type arrays, as nullable properties are written.
	nullable := map[string]any{"type": []any{"string", "null"}, "format": "date-time"}
	ok(nullable, `null`)
	ok(nullable, `"2024-03-11T10:00:00Z"`)
	bad(nullable, `3`)
	// Whole resources only, when no fields parameter was sent.
	whole := &validator{doc: doc, whole: true}
	if errs := whole.validate(ref("RedirectFieldsResponse"), decodeJSON([]byte(`{"redirect":{"id":1}}`)), "$"); len(errs) == 0 {
		t.Error("a restricted redirect passed as a whole one")
	}
	// Unsupported keywords are reported rather than ignored.
	bad(map[string]any{"nullable": true}, `1`)
	// Patterns are unanchored unless they say so, and must mean the same in
	// ECMA-262, RE2 and Python.
	ok(map[string]any{"pattern": "b"}, `"abc"`)
	bad(map[string]any{"pattern": "^b"}, `"abc"`)
	if errs := v.checkKeywords(map[string]any{"pattern": `^\d+$`}, "#"); len(errs) == 0 {
		t.Error(`pattern \d passed the keyword check`)
	}
}

// ---------------------------------------------------------------------------
// The scenario.
