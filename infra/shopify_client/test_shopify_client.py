#!/usr/bin/env python3
"""Drive the service with Shopify's own Python client, unmodified.

    python infra/shopify_client/test_shopify_client.py BASE_URL TOKEN

BASE_URL is the service's root (http://127.0.0.1:8080 for `make run`), TOKEN an
app's access token holding every scope (the demo app's
demo-app-token-0123456789abcdef). The client is the PyPI package ShopifyAPI
(module `shopify`, on pyactiveresource) at the version README.md pins. It calls
/admin/api/<version>/<path>.json with the token in X-Shopify-Access-Token and
pages through the Link headers, as it would against a real shop.

Every resource group is one function; each check prints FAIL with what was
wrong, and the run ends with "N passed, N failed" and exit status 1 when any
check failed. NOTE lines are not failures: routes the service does not have
(products, customers, blogs and the shop themselves; one-time charges) and the
places where this script works around the client. Run it against a fresh demo
shop (the local runner over an empty DATA_DIR) or one it ran against before: it
names what it creates with a per-run suffix and deletes it again, and the
seeded records (blog, product, customer, order) are only read or changed
reversibly, except the order's transactions (a 1.00 capture and a 0.50
refund per run).
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import re
import sys
import threading
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid

import shopify
from pyactiveresource import connection as arconn

API_VERSION = "2024-01"

# Seeded records of the demo shop (shared/seed/demo.json).
BLOG_ID = 241253187
PRODUCT_ID = 632910392
VARIANT_IDS = (808950810, 49148385)
CUSTOMER_ID = 207119551
SEEDED_ADDRESS_ID = 207119551
ORDER_ID = 450789469
AUTHORIZATION_ID = 389404469
DEMO_SHARED_SECRET = "demo-shared-secret"

RUN = uuid.uuid4().hex[:8]  # makes this run's handles, paths and names unique

passed = 0
failed = []
notes = []
current = "setup"


# ---------------------------------------------------------------- helpers

def check(cond, msg):
    """Counts one check; a false one is reported under the current resource."""
    global passed
    if cond:
        passed += 1
    else:
        failed.append("%s: %s" % (current, msg))
        print("FAIL %s: %s" % (current, msg), flush=True)
    return bool(cond)


def note(msg):
    notes.append("%s: %s" % (current, msg))
    print("NOTE %s: %s" % (current, msg), flush=True)


def describe(err):
    """What an exception from the client says: status, URL, body."""
    if isinstance(err, arconn.ConnectionError):
        body = err.response.body
        if isinstance(body, bytes):
            body = body.decode("utf-8", "replace")
        return "HTTP %s at %s: %s" % (err.response.code, err.url, (body or "").strip()[:300])
    if isinstance(err, arconn.Error):
        return "%s (HTTP %s at %s)" % (err, err.code, err.url)
    return "%s: %s" % (type(err).__name__, err)


def expect_status(code, fn, what):
    """Checks that fn() fails with HTTP status code."""
    try:
        fn()
    except arconn.ConnectionError as err:
        return check(err.response.code == code,
                     "%s: expected HTTP %d, got %s" % (what, code, describe(err)))
    return check(False, "%s: expected HTTP %d, the call succeeded" % (what, code))


def not_served(fn, what):
    """A route the service does not have (it says so): a NOTE, not a failure."""
    try:
        fn()
    except arconn.ResourceNotFound as err:
        note("%s: not served by the service (%s)" % (what, describe(err)[:120]))
        return
    except arconn.ConnectionError as err:
        check(False, "%s: expected 404 (not served), got %s" % (what, describe(err)))
        return
    note("%s: now answers 200; extend this test to cover it" % what)


def saved(resource, what):
    """save() returns False on 422; report the errors the service gave."""
    ok = resource.save()
    check(ok, "%s: save() was refused: %s" % (what, resource.errors.full_messages()))
    return ok


def last_headers():
    response = shopify.ShopifyResource.connection.response
    return dict(response.headers) if response is not None else {}


def walk(first_page, limit, max_pages=100):
    """Pages with has_next_page()/next_page(); returns (ids, page_count)."""
    page, ids, pages = first_page, [], 0
    while True:
        pages += 1
        check(len(page) <= limit, "a page holds %d items, more than limit=%d" % (len(page), limit))
        ids.extend(item.id for item in page)
        if not page.has_next_page() or pages >= max_pages:
            break
        nxt = page.next_page()
        check(nxt.has_previous_page(), "page %d has no previous page link" % (pages + 1))
        page = nxt
    check(len(ids) == len(set(ids)), "paging returned an item twice: %s" % ids)
    return ids, pages


def check_paging(cls, created_ids, limit=1, **params):
    """find(limit=…) then next_page() until the end: every created id seen, over >1 page."""
    first = cls.find(limit=limit, **params)
    check(isinstance(first, shopify.collection.PaginatedCollection),
          "find(limit=%d) gave no PaginatedCollection" % limit)
    check(first.has_next_page(), "find(limit=%d) of %s has no next page (Link header %r)"
          % (limit, cls.__name__, last_headers().get("Link")))
    ids, pages = walk(first, limit)
    check(pages > 1, "paging %s took %d page(s)" % (cls.__name__, pages))
    missing = set(created_ids) - set(ids)
    check(not missing, "paging %s never returned %s" % (cls.__name__, sorted(missing)))
    if first.has_next_page():
        second = first.next_page()
        back = second.previous_page(no_cache=True) if second.has_previous_page() else None
        check(back is not None and [i.id for i in back] == [i.id for i in first],
              "previous_page() of page 2 is not page 1")
    return ids


def refused(resource, what, text):
    """A create the service refused with 422: no id, and `text` among the messages.

    pyactiveresource files a message under its field only when the resource
    holds that attribute; others go to `base`, so the messages are searched."""
    messages = resource.errors.full_messages()
    return check(resource.id is None and any(text in m for m in messages),
                 "%s: expected a 422 saying %r, got id %r and %r" % (what, text, resource.id, messages))


def check_gone(cls, id_, what, **prefix):
    expect_status(404, lambda: cls.find(id_, **prefix), "%s after delete" % what)


# ------------------------------------------------------- session and auth

def connect(base_url, token):
    """Activates a shopify.Session on base_url (http://127.0.0.1:PORT).

    shopify.Session builds the site as
    "<Session.protocol>://<first label of the host>.<Session.myshopify_domain>[:<Session.port>]/admin/api/<version>"
    and forces https by default. The least intrusive supported way to point it
    at a local http runner is the class-level settings Session.setup() exists
    for (protocol, myshopify_domain, port): for host 127.0.0.1 the first label is
    "127" and the domain "0.0.1". A host without a dot (localhost) cannot be
    spelled that way; then the site is set directly on ShopifyResource after
    activating the session (the token, version and headers still come from the
    session).
    """
    parts = urllib.parse.urlsplit(base_url)
    host = parts.hostname
    domain = host.partition(".")[2]  # "0.0.1" for 127.0.0.1
    shopify.Session.setup(protocol=parts.scheme, myshopify_domain=domain or "myshopify.com",
                          port=parts.port)
    session = shopify.Session(host, API_VERSION, token)
    shopify.ShopifyResource.activate_session(session)
    wanted = "%s://%s/admin/api/%s" % (parts.scheme, parts.netloc, API_VERSION)
    if session.site != wanted:
        note("Session builds %s; setting ShopifyResource.site to %s" % (session.site, wanted))
        shopify.ShopifyResource.site = wanted
    return wanted


def test_session_and_auth(site, token):
    check(shopify.ShopifyResource.site == site, "site is %s" % shopify.ShopifyResource.site)
    check(shopify.ShopifyResource.headers.get("X-Shopify-Access-Token") == token,
          "the session does not send X-Shopify-Access-Token")
    check(shopify.ShopifyResource.version == API_VERSION, "version %s" % shopify.ShopifyResource.version)
    shopify.Page.count()
    headers = last_headers()
    check(headers.get("X-Shopify-Api-Version") == API_VERSION,
          "X-Shopify-API-Version answered %r" % headers.get("X-Shopify-Api-Version"))
    if "X-Shopify-Shop-Api-Call-Limit" in headers:
        check(0 < shopify.Limits.credit_used() <= shopify.Limits.credit_limit(),
              "Limits reads %s" % headers["X-Shopify-Shop-Api-Call-Limit"])
    else:
        note("no X-Shopify-Shop-Api-Call-Limit header (runner started with RATE_LIMIT=off?): Limits not checked")
    # A wrong token is 401 through the same client; the session is restored after.
    parts = urllib.parse.urlsplit(site)
    with shopify.Session.temp(parts.hostname, API_VERSION, "not-a-token-" + RUN):
        if shopify.ShopifyResource.site != site:
            shopify.ShopifyResource.site = site
        expect_status(401, shopify.Page.count, "Page.count() with a wrong token")
    if shopify.ShopifyResource.site != site:
        shopify.ShopifyResource.site = site
    check(shopify.ShopifyResource.headers.get("X-Shopify-Access-Token") == token,
          "Session.temp did not restore the token")


# ------------------------------------------------------------- resources

def test_pages():
    pages = []
    for i in range(3):
        page = shopify.Page.create({"title": "Client page %s %d" % (RUN, i),
                                    "body_html": "<p>Hello %d</p>" % i})
        check(page.id and not page.errors.full_messages(),
              "Page.create: %s" % page.errors.full_messages())
        pages.append(page)
    page = pages[0]
    check(page.published_at is not None, "a page created without `published` is not published")
    check(page.handle == "client-page-%s-0" % RUN, "handle %r" % page.handle)

    found = shopify.Page.find(page.id)
    check(found.title == page.title and found.body_html == "<p>Hello 0</p>", "Page.find: %r" % found.attributes)
    check(shopify.Page.exists(page.id), "Page.exists (HEAD) is False")
    check_paging(shopify.Page, [p.id for p in pages])
    check_paging(shopify.Page, [p.id for p in pages], limit=2)
    check(shopify.Page.count() >= 3, "Page.count() %d" % shopify.Page.count())
    check(shopify.Page.count(title=page.title) == 1, "Page.count(title=) is not 1")

    found.title = "Client page %s renamed" % RUN
    found.published = False
    if saved(found, "Page update"):
        again = shopify.Page.find(page.id)
        check(again.title == found.title, "the new title did not stick: %r" % again.title)
        check(again.published_at is None, "published=False left published_at %r" % again.published_at)
    check(shopify.Page.count(published_status="unpublished", title=found.title) == 1,
          "the hidden page is not counted as unpublished")

    # Page metafields through the library's Metafields mixin.
    field = page.add_metafield(shopify.Metafield({"namespace": "client", "key": "run_" + RUN,
                                                  "value": "on a page", "value_type": "string"}))
    check(field.id and field.owner_resource == "page" and field.owner_id == page.id,
          "add_metafield: %r %r" % (field.attributes, field.errors.full_messages()))
    check([m.id for m in page.metafields()] == [field.id], "page.metafields(): %r" % page.metafields())
    check(page.metafields_count() == 1, "page.metafields_count() %r" % page.metafields_count())

    refused(shopify.Page.create({"body_html": "no title"}), "Page.create without title", "can't be blank")

    for p in pages:
        p.destroy()
    check_gone(shopify.Page, page.id, "Page")
    expect_status(404, lambda: shopify.Metafield.find(field.id), "the page's metafield after the page's delete")


def test_redirects():
    made = [shopify.Redirect.create({"path": "/client-%s-%d" % (RUN, i), "target": "/pages/about"})
            for i in range(3)]
    for r in made:
        check(r.id, "Redirect.create: %s" % r.errors.full_messages())
    r = shopify.Redirect.find(made[0].id)
    check(r.path == "/client-%s-0" % RUN and r.target == "/pages/about", "Redirect.find: %r" % r.attributes)
    check_paging(shopify.Redirect, [x.id for x in made])
    check(shopify.Redirect.count(target="/pages/about") >= 3, "Redirect.count(target=)")
    r.target = "https://example.com/elsewhere"
    if saved(r, "Redirect update"):
        check(shopify.Redirect.find(r.id).target == "https://example.com/elsewhere", "target did not change")
    bad = shopify.Redirect.create({"path": "/client-%s-bad" % RUN, "target": "http://exa mple.com/\x7f"})
    check(bad.id is None and bad.errors.full_messages(), "an invalid target was accepted")
    for x in made:
        x.destroy()
    check_gone(shopify.Redirect, r.id, "Redirect")


def test_script_tags():
    made = [shopify.ScriptTag.create({"event": "onload", "src": "https://cdn.example.com/%s-%d.js" % (RUN, i)})
            for i in range(3)]
    for s in made:
        check(s.id and s.display_scope == "all", "ScriptTag.create: %r %s" % (s.attributes, s.errors.full_messages()))
    s = shopify.ScriptTag.find(made[0].id)
    check(s.src == made[0].src, "ScriptTag.find: %r" % s.attributes)
    check_paging(shopify.ScriptTag, [x.id for x in made])
    check(shopify.ScriptTag.count(src=made[1].src) == 1, "ScriptTag.count(src=)")
    s.src = "https://cdn.example.com/%s-changed.js" % RUN
    if saved(s, "ScriptTag update"):
        check(shopify.ScriptTag.find(s.id).src == s.src, "src did not change")
    insecure = shopify.ScriptTag.create({"event": "onload", "src": "http://cdn.example.com/x.js"})
    check(insecure.id is None and insecure.errors.on("src"), "an http src was accepted")
    for x in made:
        x.destroy()
    check_gone(shopify.ScriptTag, s.id, "ScriptTag")


def test_events():
    # Pages made here log Page events in the same transaction.
    made = [shopify.Page.create({"title": "Eventful %s %d" % (RUN, i)}) for i in range(2)]
    first = shopify.Event.find(limit=1, filter="Page", verb="create")
    ids, pages = walk(first, 1, max_pages=3)
    check(pages >= 2, "Page create events fit one page of limit=1")
    subjects = [e.subject_id for e in shopify.Event.find(filter="Page", verb="create", limit=250)]
    check(all(p.id in subjects for p in made), "no create event for the new pages")
    event = shopify.Event.find(ids[0])
    check(event.subject_type == "Page" and event.verb == "create", "Event.find: %r" % event.attributes)
    check(shopify.Event.count() >= 2, "Event.count() %d" % shopify.Event.count())
    # Product and order events (/products/{id}/events.json, /orders/{id}/events.json) are
    # checked where Variant and Transaction make some.
    for p in made:
        p.destroy()


def test_blog_and_articles():
    blog = shopify.Blog({"id": BLOG_ID})
    not_served(lambda: shopify.Blog.find(BLOG_ID), "Blog.find")
    not_served(lambda: shopify.Blog.create({"title": "Client " + RUN}), "Blog.create")
    field = blog.add_metafield(shopify.Metafield({"namespace": "client", "key": "blog_" + RUN,
                                                  "value": 7, "value_type": "integer"}))
    check(field.id and field.owner_resource == "blog", "blog.add_metafield: %r" % field.attributes)
    check(field.id in [m.id for m in blog.metafields()], "blog.metafields() lacks the new one")
    field.destroy()

    made = []
    for i in range(3):
        a = shopify.Article.create({"blog_id": BLOG_ID, "title": "Client article %s %d" % (RUN, i),
                                    "author": "Client %s" % RUN, "tags": "zeta, alpha",
                                    "body_html": "<p>%d</p>" % i})
        check(a.id, "Article.create: %s" % a.errors.full_messages())
        made.append(a)
    a = made[0]
    # Article.tags is the client's classmethod (the blog's tag list), which hides the attribute.
    check(a.attributes.get("tags") == "alpha, zeta", "tags come back %r" % a.attributes.get("tags"))
    found = shopify.Article.find(a.id, blog_id=BLOG_ID)
    check(found.title == a.title and found.blog_id == BLOG_ID, "Article.find: %r" % found.attributes)
    check(a.id in [x.id for x in blog.articles()], "blog.articles() lacks the new article")
    check_paging(shopify.Article, [x.id for x in made], blog_id=BLOG_ID)
    check(shopify.Article.count(blog_id=BLOG_ID) >= 3, "Article.count(blog_id=)")
    check("Client %s" % RUN in (shopify.Article.authors() or []), "Article.authors(): %r" % shopify.Article.authors())
    check("alpha" in (shopify.Article.tags(blog_id=BLOG_ID) or []),
          "Article.tags(blog_id=): %r" % shopify.Article.tags(blog_id=BLOG_ID))
    found.body_html = "<p>changed</p>"
    found.published = False
    if saved(found, "Article update"):
        again = shopify.Article.find(a.id, blog_id=BLOG_ID)
        check(again.body_html == "<p>changed</p>" and again.published_at is None,
              "update did not stick: %r" % again.attributes)
    # The client's Metafields mixin uses the flat /articles/{id}/metafields.json;
    # the service serves an article's metafields under its blog only (an
    # article is found by its blog: there is no article-by-id lookup).
    not_served(lambda: found.add_metafield(shopify.Metafield({"namespace": "client", "key": "article_" + RUN,
                                                              "value": "x", "value_type": "string"})),
               "article.add_metafield() at /articles/{id}/metafields.json")
    for x in made:
        x.destroy()
    check_gone(shopify.Article, a.id, "Article", blog_id=BLOG_ID)


def test_comments():
    article = shopify.Article.create({"blog_id": BLOG_ID, "title": "Commented %s" % RUN})
    made = []
    for i in range(3):
        c = shopify.Comment.create({"body": "Comment *%d*" % i, "author": "Reader", "email": "reader@example.com",
                                    "ip": "127.0.0.1", "blog_id": BLOG_ID, "article_id": article.id})
        check(c.id, "Comment.create: %s" % c.errors.full_messages())
        made.append(c)
    c = shopify.Comment.find(made[0].id)
    check(c.article_id == article.id and c.status in ("pending", "unapproved"), "Comment.find: %r" % c.attributes)
    check([x.id for x in article.comments()] == [x.id for x in made], "article.comments()")
    check_paging(shopify.Comment, [x.id for x in made], article_id=article.id)
    check(shopify.Comment.count(article_id=article.id) == 3, "Comment.count(article_id=)")
    c.body = "Changed body"
    if saved(c, "Comment update"):
        check(shopify.Comment.find(c.id).body == "Changed body", "body did not change")
        if shopify.Comment.find(c.id).status == "published":
            note("Comment.save() sends the whole comment back, published_at included, and the service "
                 "publishes a comment updated with published_at (spec 3.1): a pending comment edited "
                 "through the client is published")
    c = shopify.Comment.find(made[1].id)  # still pending: moderate this one
    for action, status in (("approve", "published"), ("spam", "spam"), ("not_spam", "published"),
                           ("remove", "removed"), ("restore", None)):
        getattr(c, action)()
        reread = shopify.Comment.find(c.id).status
        if status:
            check(c.status == status and reread == status,
                  "%s(): status %r, reads %r, want %r" % (action, c.status, reread, status))
        else:
            check(reread != "removed", "restore() left the comment removed")
    bad = shopify.Comment.create({"body": "x", "author": "Reader", "email": "not-an-email",
                                  "blog_id": BLOG_ID, "article_id": article.id})
    check(bad.id is None and bad.errors.on("email"), "a bad email was accepted")
    article.destroy()  # comments go with their article (there is no comment delete)
    check_gone(shopify.Comment, c.id, "Comment (with its article)")


def test_webhooks():
    made = [shopify.Webhook.create({"topic": "orders/create", "address": "https://example.com/hooks/%s/%d" % (RUN, i),
                                    "format": "json"}) for i in range(3)]
    for w in made:
        check(w.id and w.format == "json", "Webhook.create: %r %s" % (w.attributes, w.errors.full_messages()))
    w = shopify.Webhook.find(made[0].id)
    check(w.topic == "orders/create" and w.address == made[0].address, "Webhook.find: %r" % w.attributes)
    check_paging(shopify.Webhook, [x.id for x in made], topic="orders/create")
    check(shopify.Webhook.count(topic="orders/create") >= 3, "Webhook.count(topic=)")
    w.address = "https://example.com/hooks/%s/changed" % RUN
    if saved(w, "Webhook update"):
        check(shopify.Webhook.find(w.id).address == w.address, "address did not change")
    bad = shopify.Webhook.create({"topic": "no/such_topic", "address": "https://example.com/x"})
    check(bad.id is None and bad.errors.on("topic"), "an invalid topic was accepted")
    for x in made:
        x.destroy()
    check_gone(shopify.Webhook, w.id, "Webhook")


def test_custom_collections():
    product = shopify.Product({"id": PRODUCT_ID})
    made = [shopify.CustomCollection.create({"title": "Client custom %s %d" % (RUN, i), "body_html": "<p>c</p>"})
            for i in range(2)]
    for c in made:
        check(c.id, "CustomCollection.create: %s" % c.errors.full_messages())
    c = shopify.CustomCollection.find(made[0].id)
    check(c.title == made[0].title and c.products_count == 0, "CustomCollection.find: %r" % c.attributes)
    # frontpage (seeded) plus the two new ones: more than one page of 1.
    check_paging(shopify.CustomCollection, [x.id for x in made])
    check(shopify.CustomCollection.count() >= 3, "CustomCollection.count()")
    c.body_html = "<p>changed</p>"
    c.published = False
    if saved(c, "CustomCollection update"):
        again = shopify.CustomCollection.find(c.id)
        check(again.body_html == "<p>changed</p>" and again.published_at is None,
              "update did not stick: %r" % again.attributes)
    collect = c.add_product(product)  # the library's helper: a Collect create
    check(collect.id and collect.collection_id == c.id, "add_product: %r" % collect.attributes)
    check(shopify.CustomCollection.find(c.id).products_count == 1, "products_count after add_product")
    check(c.id in [x.id for x in product.collections()], "product.collections() (custom_collections?product_id=)")
    c.remove_product(product)  # Collect.find_first(collection_id, product_id) + destroy
    check(shopify.Collect.count(collection_id=c.id) == 0, "remove_product left a collect")
    not_served(c.products, "CustomCollection.products() (products.json?collection_id=)")
    for x in made:
        x.destroy()
    check_gone(shopify.CustomCollection, c.id, "CustomCollection")


def test_smart_collections():
    made = []
    for i in range(2):
        s = shopify.SmartCollection.create({"title": "Client smart %s %d" % (RUN, i),
                                            "rules": [{"column": "vendor", "relation": "equals", "condition": "Apple"}]})
        check(s.id and not s.disjunctive, "SmartCollection.create: %s" % s.errors.full_messages())
        made.append(s)
    s = shopify.SmartCollection.find(made[0].id)
    check(s.products_count == 1 and s.rules[0].condition == "Apple", "SmartCollection.find: %r" % s.attributes)
    check_paging(shopify.SmartCollection, [x.id for x in made])
    check(shopify.SmartCollection.count(product_id=PRODUCT_ID) >= 2, "SmartCollection.count(product_id=)")
    check(s.id in [x.id for x in shopify.Product({"id": PRODUCT_ID}).smart_collections()],
          "product.smart_collections()")
    s.rules = [shopify.Rule({"column": "vendor", "relation": "equals", "condition": "Nobody"})]
    if saved(s, "SmartCollection update"):
        check(shopify.SmartCollection.find(s.id).products_count == 0, "new rules did not change membership")
    expect_status(403, lambda: shopify.Collect({"collection_id": s.id, "product_id": PRODUCT_ID}).save(),
                  "a collect on a smart collection")
    for x in made:
        x.destroy()
    check_gone(shopify.SmartCollection, s.id, "SmartCollection")


def test_collects():
    colls = [shopify.CustomCollection.create({"title": "Collect target %s %d" % (RUN, i)}) for i in range(2)]
    made = []
    for c in colls:
        k = shopify.Collect.create({"product_id": PRODUCT_ID, "collection_id": c.id})
        check(k.id and k.position >= 1, "Collect.create: %r %s" % (k.attributes, k.errors.full_messages()))
        made.append(k)
    k = shopify.Collect.find(made[0].id)
    check(k.product_id == PRODUCT_ID and k.collection_id == colls[0].id, "Collect.find: %r" % k.attributes)
    check_paging(shopify.Collect, [x.id for x in made], product_id=PRODUCT_ID)
    check(shopify.Collect.count(collection_id=colls[0].id) == 1, "Collect.count(collection_id=)")
    invalid = shopify.Collect.create({"product_id": PRODUCT_ID})
    check(invalid.id is None and invalid.errors.full_messages(), "a collect without collection was accepted")
    made[0].destroy()
    check_gone(shopify.Collect, made[0].id, "Collect")
    for c in colls:
        c.destroy()
    check_gone(shopify.Collect, made[1].id, "Collect (with its collection)")


def test_products():
    # Products have no endpoints of their own (spec part 1); only their nested parts.
    not_served(lambda: shopify.Product.find(PRODUCT_ID), "Product.find")
    not_served(lambda: shopify.Product.find(limit=1), "Product.find(limit=1)")
    not_served(shopify.Product.count, "Product.count")
    product = shopify.Product({"id": PRODUCT_ID})
    field = product.add_metafield(shopify.Metafield({"namespace": "client", "key": "product_" + RUN,
                                                     "value": "p", "value_type": "string"}))
    check(field.id and field.owner_resource == "product", "product.add_metafield: %r" % field.attributes)
    check(field.id in [m.id for m in product.metafields()], "product.metafields() lacks the new one")
    check(product.metafields_count() >= 1, "product.metafields_count()")
    field.destroy()


def test_variants():
    product = shopify.Product({"id": PRODUCT_ID})
    made = []
    try:
        variant_checks(product, made)
    finally:
        for x in made:
            x.destroy()  # DELETE /products/{product_id}/variants/{id}.json
    if made:
        check_gone(shopify.Variant, made[0].id, "Variant")


def variant_checks(product, made):
    before = shopify.Variant.count(product_id=PRODUCT_ID)
    for i in range(2):
        v = shopify.Variant({"option1": "Client %s %d" % (RUN, i), "price": "10.0%d" % i,
                             "sku": "CLIENT-%s-%d" % (RUN, i)})
        ok = product.add_variant(v)  # sets product_id, POST /products/{id}/variants.json
        check(ok and v.id and v.product_id == PRODUCT_ID, "product.add_variant: %r %s" % (v.attributes, v.errors.full_messages()))
        made.append(v)
    v = made[0]
    check(v.inventory_policy == "deny" and v.inventory_quantity == 0, "defaults: %r" % v.attributes)
    found = shopify.Variant.find(v.id)  # /variants/{id}.json
    check(found.sku == v.sku and found.price == "10.00", "Variant.find: %r" % found.attributes)
    check_paging(shopify.Variant, [x.id for x in made] + list(VARIANT_IDS), product_id=PRODUCT_ID)
    check(shopify.Variant.count(product_id=PRODUCT_ID) == before + 2, "Variant.count(product_id=)")
    events = product.events()  # /products/{id}/events.json: a variant change logs a Product update
    check(events and events[0].subject_id == PRODUCT_ID and events[0].verb == "update",
          "product.events(): %r" % [(e.subject_id, e.verb) for e in events][:3])

    # Variant.save() always nests the update under the product:
    # PUT /products/{product_id}/variants/{id}.json.
    found.price = "12.50"
    try:
        if saved(found, "Variant update (price)"):
            check(shopify.Variant.find(v.id).price == "12.50", "price did not change")
        # Stock: the client drops inventory_quantity/old_inventory_quantity from
        # updates on versions from 2019-10 on; inventory_quantity_adjustment goes through.
        stock = shopify.Variant.find(v.id)
        stock.inventory_quantity_adjustment = 5
        if saved(stock, "Variant update (inventory_quantity_adjustment)"):
            check(shopify.Variant.find(v.id).inventory_quantity == 5,
                  "inventory after +5: %r" % shopify.Variant.find(v.id).inventory_quantity)
    except arconn.MethodNotAllowed as err:
        check(False, "SERVICE GAP: Variant.save() sends PUT /products/{product_id}/variants/{id}.json "
                     "(the client nests every variant update under its product), not served: %s" % describe(err))

    field = v.add_metafield(shopify.Metafield({"namespace": "client", "key": "variant_" + RUN,
                                               "value": 3, "value_type": "integer"}))
    check(field.id and field.owner_resource == "variant", "variant.add_metafield: %r" % field.attributes)
    # A variant made through product.add_variant() keeps product_id as a prefix, so its
    # metafields_count() asks /products/{pid}/variants/{id}/metafields/count.json, a path
    # Shopify's own route tables do not list; a variant read by id asks /variants/{id}/...
    check(shopify.Variant.find(v.id).metafields_count() == 1, "variant.metafields_count()")
    try:
        v.metafields_count()
    except arconn.ResourceNotFound:
        note("variant.metafields_count() on a variant made by add_variant() asks "
             "/products/{pid}/variants/{id}/metafields/count.json: not served (nor listed by Shopify)")


def test_fulfillment_services():
    made = [shopify.FulfillmentService.create({"name": "Client FS %s %d" % (RUN, i), "format": "json",
                                               "callback_url": "https://fulfil.example.com/%s" % RUN,
                                               "inventory_management": False, "tracking_support": False,
                                               "requires_shipping_method": True}) for i in range(2)]
    for f in made:
        check(f.id and f.format == "json", "FulfillmentService.create: %r %s" % (f.attributes, f.errors.full_messages()))
    f = shopify.FulfillmentService.find(made[0].id)
    check(f.name == made[0].name and f.handle == "client-fs-%s-0" % RUN, "FulfillmentService.find: %r" % f.attributes)
    listed = [x.id for x in shopify.FulfillmentService.find()]
    check(all(x.id in listed for x in made), "FulfillmentService.find() lacks the new ones")
    check(all(x.id in [y.id for y in shopify.FulfillmentService.find(scope="all")] for x in made), "scope=all")
    f.name = "Client FS %s renamed" % RUN
    f.tracking_support = True
    if saved(f, "FulfillmentService update"):
        again = shopify.FulfillmentService.find(f.id)
        check(again.name == f.name and again.tracking_support is True, "update did not stick: %r" % again.attributes)
    for x in made:
        x.destroy()
    check_gone(shopify.FulfillmentService, f.id, "FulfillmentService")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 303 to the app's return_url is read, not followed


def accept_charge(confirmation_url):
    """The shop owner's Accept on the confirmation page (an HTML form, no token).

    Done with urllib as a browser would post the form; the client has no part in it.
    Returns the Location the page redirects to.
    """
    html = urllib.request.urlopen(confirmation_url, timeout=10).read().decode()
    form = re.search(r'<form method="post" action="([^"]*/accept)"><input type="hidden" name="([^"]+)" value="([^"]+)"',
                     html)
    if not check(form, "no Accept form on the confirmation page"):
        return None
    action = urllib.parse.urljoin(confirmation_url, form.group(1))
    data = urllib.parse.urlencode({form.group(2): form.group(3)}).encode()
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(urllib.request.Request(action, data=data), timeout=10)
    except urllib.error.HTTPError as err:
        return err.headers.get("Location") if err.code in (302, 303) else "HTTP %d" % err.code
    return None


def test_recurring_charges():
    charges = [shopify.RecurringApplicationCharge.create({"name": "Client plan %s %d" % (RUN, i), "price": 9.99,
                                                          "return_url": "https://app.example.com/charged",
                                                          "test": True, "trial_days": 7}) for i in range(2)]
    for ch in charges:
        check(ch.id and ch.status == "pending" and ch.confirmation_url and ch.price == "9.99",
              "RecurringApplicationCharge.create: %r %s" % (ch.attributes, ch.errors.full_messages()))
    ch = shopify.RecurringApplicationCharge.find(charges[0].id)
    check(ch.name == charges[0].name and ch.status == "pending", "find: %r" % ch.attributes)
    check_paging(shopify.RecurringApplicationCharge, [x.id for x in charges])
    bad = shopify.RecurringApplicationCharge.create({"name": "Free", "price": 0, "return_url": "https://a.example.com/"})
    check(bad.id is None and bad.errors.on("price"), "a zero price was accepted")

    location = accept_charge(ch.confirmation_url)
    check(location == ch.decorated_return_url, "Accept redirected to %r, want %r" % (location, ch.decorated_return_url))
    ch = shopify.RecurringApplicationCharge.find(ch.id)
    check(ch.status == "accepted" and ch.billing_on, "after Accept: %r" % ch.attributes)
    ch.activate()
    check(ch.status == "active" and ch.activated_on, "activate(): %r" % ch.attributes)
    current = shopify.RecurringApplicationCharge.current()
    check(current is not None and current.id == ch.id, "current() is %r" % current)
    expect_status(404, ch.usage_charges, "usage_charges() (not served)")
    ch.destroy()  # cancels it
    check(shopify.RecurringApplicationCharge.find(ch.id).status == "cancelled",
          "after destroy(): %r" % shopify.RecurringApplicationCharge.find(ch.id).status)
    # charges[1] stays pending; it reads expired two days on.


def test_application_charges():
    # One-time charges (ApplicationCharge) are not part of the spec.
    not_served(lambda: shopify.ApplicationCharge.create({"name": "One-off " + RUN, "price": 5,
                                                          "return_url": "https://app.example.com/"}),
               "ApplicationCharge.create")
    not_served(lambda: shopify.ApplicationCharge.find(), "ApplicationCharge.find")


def test_transactions():
    order = shopify.Order({"id": ORDER_ID})
    listed = order.transactions()  # /orders/{id}/transactions.json
    check(AUTHORIZATION_ID in [t.id for t in listed], "order.transactions() lacks the seeded authorization")
    auth = shopify.Transaction.find(AUTHORIZATION_ID, order_id=ORDER_ID)
    check(auth.kind == "authorization" and auth.status == "success", "Transaction.find: %r" % auth.attributes)
    before = shopify.Transaction.count(order_id=ORDER_ID)

    capture = order.capture("1.00")  # Transaction.create kind=capture
    check(capture.id and capture.kind == "capture" and capture.parent_id == AUTHORIZATION_ID and capture.amount == "1.00",
          "order.capture(): %r %s" % (capture.attributes, capture.errors.full_messages()))
    refund = shopify.Transaction.create({"order_id": ORDER_ID, "kind": "refund", "amount": "0.50",
                                         "parent_id": capture.id})
    check(refund.id and refund.kind == "refund" and refund.status == "success",
          "refund: %r %s" % (refund.attributes, refund.errors.full_messages()))
    check(shopify.Transaction.count(order_id=ORDER_ID) == before + 2, "Transaction.count(order_id=)")
    verbs = [e.verb for e in order.events()]  # /orders/{id}/events.json, newest first
    check(verbs[:2] == ["refund_success", "capture_success"], "order.events() verbs %r" % verbs[:4])
    check_paging(shopify.Transaction, [capture.id, refund.id, AUTHORIZATION_ID], order_id=ORDER_ID)
    too_much = shopify.Transaction.create({"order_id": ORDER_ID, "kind": "refund", "amount": "1000.00",
                                           "parent_id": capture.id})
    check(too_much.id is None and too_much.errors.full_messages(), "a refund above the capture was accepted")


def test_themes_and_assets():
    themes = shopify.Theme.find()
    main = [t for t in themes if t.role == "main"]
    check(len(main) == 1, "themes: %r" % [(t.id, t.role) for t in themes])
    theme = shopify.Theme.create({"name": "Client theme %s" % RUN})
    if not check(theme.id and theme.role == "unpublished",
                 "Theme.create: %r %s" % (theme.attributes, theme.errors.full_messages())):
        return
    try:
        theme_and_asset_checks(theme)
    finally:
        theme.destroy()  # a shop holds at most 20 themes
    check_gone(shopify.Theme, theme.id, "Theme")


def theme_and_asset_checks(theme):
    found = shopify.Theme.find(theme.id)
    check(found.name == theme.name, "Theme.find: %r" % found.attributes)
    found.name = "Client theme %s renamed" % RUN
    if saved(found, "Theme update"):
        check(shopify.Theme.find(theme.id).name == found.name, "name did not change")
    invalid = shopify.Theme.create({"name": ""})
    check(invalid.id is None and invalid.errors.full_messages(), "a blank theme name was accepted")

    # Assets: put (create and update), get, list, delete.
    listing = shopify.Asset.find(theme_id=theme.id)
    keys = [a.key for a in listing]
    check("layout/theme.liquid" in keys, "the new theme's assets: %r" % keys)
    key = "templates/client-%s.liquid" % RUN
    text = shopify.Asset({"theme_id": theme.id, "key": key, "value": "<p>{{ shop.name }}</p>"})
    if saved(text, "Asset put (text)"):
        got = shopify.Asset.find(key, theme_id=theme.id)
        check(got.value == "<p>{{ shop.name }}</p>", "Asset.find value %r" % got.value)
        got.value = "<p>changed</p>"
        if saved(got, "Asset put (update)"):
            check(shopify.Asset.find(key, theme_id=theme.id).value == "<p>changed</p>", "value did not change")
    png = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                        "0000000d4944415478da63f8cfc0f01f0005000201a3cfd8b70000000049454e44ae426082")
    binary = shopify.Asset({"theme_id": theme.id, "key": "assets/client-%s.png" % RUN})
    binary.attach(png)
    if saved(binary, "Asset put (binary attachment)"):
        got = shopify.Asset.find(binary.key, theme_id=theme.id)
        check(base64.b64decode(got.attachment) == png, "attachment round trip")
        check(got.content_type == "image/png" and got.size == len(png), "metadata %r" % got.attributes)
        if check(got.public_url, "no public_url for a file under assets/"):
            body = urllib.request.urlopen(got.public_url, timeout=10).read()  # no token needed
            check(body == png, "public_url does not serve the file")
    copy = shopify.Asset({"theme_id": theme.id, "key": "templates/client-%s-copy.liquid" % RUN, "source_key": key})
    if saved(copy, "Asset put (source_key copy)"):
        check(shopify.Asset.find(copy.key, theme_id=theme.id).value == "<p>changed</p>", "copy differs")
    for k in (key, copy.key, binary.key):
        shopify.Asset.find(k, theme_id=theme.id).destroy()
    expect_status(404, lambda: shopify.Asset.find(key, theme_id=theme.id), "Asset after destroy()")
    layout = shopify.Asset.find("layout/theme.liquid", theme_id=theme.id)
    expect_status(403, layout.destroy, "destroy() of layout/theme.liquid")


class CountryProvince(shopify.Province):
    """shopify.Province's prefix is "/admin/countries/$country_id/", put after a
    site that already ends in /admin/api/<version>: its URLs read
    /admin/api/<version>/admin/countries/<id>/provinces.json. This subclass
    (the client's own class otherwise) uses "/countries/$country_id/"."""
    _singular = "province"
    _plural = "provinces"
    _prefix_source = "/countries/$country_id/"


def test_countries_and_provinces():
    code = "CA"
    for existing in shopify.Country.find():  # a previous run's leftover
        if existing.code == code:
            existing.destroy()
    before = shopify.Country.count()
    country = shopify.Country.create({"code": code})
    check(country.id and country.name == "Canada" and len(country.provinces) > 10,
          "Country.create: %r %s" % (getattr(country, "name", None), country.errors.full_messages()))
    found = shopify.Country.find(country.id)
    check(found.code == code, "Country.find: %r" % found.attributes)
    check(shopify.Country.count() == before + 1, "Country.count()")
    listed = shopify.Country.find()
    check(country.id in [c.id for c in listed] and "*" in [c.code for c in listed], "Country.find() list")
    check([c.id for c in shopify.Country.find(since_id=country.id - 1)][:1] == [country.id], "since_id")
    found.tax = 0.07
    if saved(found, "Country update (tax)"):
        check(abs(shopify.Country.find(country.id).tax - 0.07) < 1e-9, "tax did not change")

    # The client's own Province class builds /admin/api/<v>/admin/countries/...: a client defect.
    try:
        shopify.Province.find(country_id=country.id)
        note("shopify.Province.find(country_id=) answered: the service serves the client's doubled /admin path")
    except arconn.ResourceNotFound:
        note("shopify.Province builds /admin/api/%s/admin/countries/<id>/provinces.json (client defect, "
             "404 here); provinces are driven through a subclass with prefix /countries/$country_id/" % API_VERSION)
    provinces = CountryProvince.find(country_id=country.id)
    check(len(provinces) == len(country.provinces), "%d provinces listed" % len(provinces))
    check(CountryProvince.count(country_id=country.id) == len(provinces), "province count")
    on = [p for p in provinces if p.code == "ON"][0]
    province = CountryProvince.find(on.id, country_id=country.id)
    check(province.name == "Ontario", "province find: %r" % province.attributes)
    province.tax = 0.08
    province.tax_percentage = 8.0
    if saved(province, "Province update"):
        check(abs(CountryProvince.find(on.id, country_id=country.id).tax - 0.08) < 1e-9, "province tax")
    country.destroy()
    check_gone(shopify.Country, country.id, "Country")


def test_shop_metafields():
    not_served(shopify.Shop.current, "Shop.current")
    made = []
    for i in range(3):
        m = shopify.Metafield({"namespace": "client", "key": "shop_%s_%d" % (RUN, i), "value": "v%d" % i,
                               "value_type": "string", "description": "run " + RUN})
        # Shop().add_metafield needs a saved Shop, which has no endpoint: a plain save is the same POST.
        if saved(m, "shop Metafield create"):
            made.append(m)
    if not made:
        return
    m = shopify.Metafield.find(made[0].id)
    check(m.owner_resource == "shop" and m.value == "v0", "Metafield.find: %r" % m.attributes)
    check_paging(shopify.Metafield, [x.id for x in made], namespace="client")
    check(shopify.Metafield.count() >= 3, "Metafield.count()")
    m.value = "changed"
    if saved(m, "Metafield update"):
        check(shopify.Metafield.find(m.id).value == "changed", "value did not change")
    short = shopify.Metafield({"namespace": "ab", "key": "k", "value": "v", "value_type": "string"})
    check(not short.save() and short.errors.on("namespace"), "a 2-character namespace was accepted")
    for x in made:
        x.destroy()
    check_gone(shopify.Metafield, m.id, "Metafield")


def test_customers():
    # Customers have no endpoints of their own (spec part 1): only their addresses,
    # metafields and the customers of a saved search.
    not_served(lambda: shopify.Customer.find(CUSTOMER_ID), "Customer.find")
    not_served(lambda: shopify.Customer.create({"email": "client-%s@example.com" % RUN}), "Customer.create")
    not_served(shopify.Customer.count, "Customer.count")
    not_served(lambda: shopify.Customer.search(query="Bob"), "Customer.search")
    customer = shopify.Customer({"id": CUSTOMER_ID})
    field = customer.add_metafield(shopify.Metafield({"namespace": "client", "key": "customer_" + RUN,
                                                      "value": "c", "value_type": "string"}))
    check(field.id and field.owner_resource == "customer", "customer.add_metafield: %r" % field.attributes)
    check(field.id in [m.id for m in customer.metafields()], "customer.metafields()")
    field.destroy()


def test_customer_saved_searches():
    made = [shopify.CustomerSavedSearch.create({"name": "Client search %s %d" % (RUN, i),
                                                "query": "accepts_marketing:0"}) for i in range(2)]
    for s in made:
        check(s.id, "CustomerSavedSearch.create: %s" % s.errors.full_messages())
    s = shopify.CustomerSavedSearch.find(made[0].id)
    check(s.query == "accepts_marketing:0", "find: %r" % s.attributes)
    check_paging(shopify.CustomerSavedSearch, [x.id for x in made])
    check(shopify.CustomerSavedSearch.count() >= 2, "CustomerSavedSearch.count()")
    customers = s.customers()
    check([c.id for c in customers] == [CUSTOMER_ID] and isinstance(customers[0], shopify.Customer),
          "customers(): %r" % customers)
    check(s.customers(fields="id,email")[0].attributes == {"id": CUSTOMER_ID, "email": "bob.norman@example.com"},
          "customers(fields=)")
    s.query = "accepts_marketing:1"
    if saved(s, "CustomerSavedSearch update"):
        check(list(shopify.CustomerSavedSearch.find(s.id).customers()) == [], "the new query still finds Bob")
    bad = shopify.CustomerSavedSearch.create({"name": "No query " + RUN, "query": ""})
    check(bad.id is None and bad.errors.full_messages(), "a blank query was accepted")
    for x in made:
        x.destroy()
    check_gone(shopify.CustomerSavedSearch, s.id, "CustomerSavedSearch")


class CustomerAddress(shopify.Address):
    """shopify.Address has no customer prefix (it names /addresses.json); a
    customer's addresses are /customers/{id}/addresses. This subclass adds the
    prefix and keeps the client's wrapper names (`address`/`addresses`)."""
    _singular = "address"
    _plural = "addresses"
    _prefix_source = "/customers/$customer_id/"


def test_customer_addresses():
    note("shopify.Address has no customer prefix; addresses are driven through a subclass "
         "with prefix /customers/$customer_id/")
    made = []
    for i in range(2):
        a = CustomerAddress.create({"customer_id": CUSTOMER_ID, "address1": "%d Client Street %s" % (i, RUN),
                                    "city": "Ottawa", "province": "Ontario", "country": "Canada", "zip": "K1A 0B1",
                                    "first_name": "Bob", "last_name": "Norman"})
        check(a.id and a.default is False and a.country_code == "CA",
              "address create: %r %s" % (a.attributes, a.errors.full_messages()))
        made.append(a)
    a = CustomerAddress.find(made[0].id, customer_id=CUSTOMER_ID)
    check(a.address1 == made[0].address1, "address find: %r" % a.attributes)
    check_paging(CustomerAddress, [x.id for x in made] + [SEEDED_ADDRESS_ID], customer_id=CUSTOMER_ID)
    a.city = "Toronto"
    if saved(a, "address update"):
        check(CustomerAddress.find(a.id, customer_id=CUSTOMER_ID).city == "Toronto", "city did not change")
    a._load_attributes_from_response(a.put("default"))  # PUT .../addresses/{id}/default.json
    check(a.default is True, "default.json: %r" % a.attributes)
    check(CustomerAddress.find(SEEDED_ADDRESS_ID, customer_id=CUSTOMER_ID).default is False,
          "the old default is still default")
    expect_status(422, a.destroy, "deleting the default address")
    seeded = CustomerAddress.find(SEEDED_ADDRESS_ID, customer_id=CUSTOMER_ID)
    seeded.put("default")
    check(CustomerAddress.find(SEEDED_ADDRESS_ID, customer_id=CUSTOMER_ID).default is True, "default back")
    made[0].destroy()
    check_gone(CustomerAddress, made[0].id, "address", customer_id=CUSTOMER_ID)
    # Bulk delete: PUT /customers/{id}/addresses/set.json?address_ids[]=…&operation=destroy
    shopify.Customer({"id": CUSTOMER_ID}).put("addresses/set", address_ids=[made[1].id], operation="destroy")
    check_gone(CustomerAddress, made[1].id, "address (set.json destroy)", customer_id=CUSTOMER_ID)


# ------------------------------------------------------- webhook HMAC check

def verify_webhook(data, hmac_header, secret):
    """Shopify's webhook check: Base64(HMAC-SHA256(secret, raw body)) compared in constant time."""
    digest = hmac.new(secret.encode("utf-8"), data, hashlib.sha256).digest()
    return hmac.compare_digest(base64.b64encode(digest), hmac_header.encode("utf-8"))


def test_webhook_hmac(base_url, token, secret):
    body = b'{"id":1,"topic":"orders/create"}'
    sample = "k7JhJrKb5+GTmfeOIumPZECiQpmEKOrUdZlZ4BWpFmI="  # openssl dgst -sha256 -hmac demo-shared-secret -binary | base64
    check(verify_webhook(body, sample, "demo-shared-secret"), "the sample signature does not verify")
    check(not verify_webhook(body + b" ", sample, "demo-shared-secret"), "a changed body verifies")
    check(not verify_webhook(body, sample, "another-secret"), "another secret verifies")

    # End to end: the local runner's /_local/webhooks/trigger sends one signed
    # delivery to a receiver here (local runner only; elsewhere it is skipped).
    received = {}

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received["body"] = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received["headers"] = dict(self.headers)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        req = urllib.request.Request(
            base_url.rstrip("/") + "/_local/webhooks/trigger",
            data=json.dumps({"topic": "orders/create", "format": "json",
                             "address": "http://127.0.0.1:%d/hook" % server.server_port}).encode(),
            # The runner's control surface takes the token as the API does.
            headers={"X-Shopify-Access-Token": token, "Content-Type": "application/json"})
        try:
            answer = json.load(urllib.request.urlopen(req, timeout=15))
        except urllib.error.HTTPError as err:
            if err.code == 404:
                note("no /_local/webhooks/trigger (not the local runner): end-to-end HMAC check skipped")
                return
            check(False, "trigger: HTTP %d %s" % (err.code, err.read()[:200]))
            return
        check(answer.get("status") == 200 and "body" in received, "trigger answered %r" % answer)
        if "body" not in received:
            return
        headers = {k.lower(): v for k, v in received["headers"].items()}
        signature = headers.get("x-shopify-hmac-sha256")
        check(signature is not None, "no X-Shopify-Hmac-Sha256 on the delivery: %r" % sorted(headers))
        check(headers.get("x-shopify-topic") == "orders/create", "X-Shopify-Topic %r" % headers.get("x-shopify-topic"))
        if signature:
            check(verify_webhook(received["body"], signature, secret),
                  "the delivery's X-Shopify-Hmac-Sha256 does not verify with the app's shared secret")
            check(not verify_webhook(received["body"] + b"x", signature, secret), "a tampered delivery verifies")
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------- main

def test_graphql():
    """The library's GraphQL client (sends "variables": null and
    "operationName": null when there are none) against the same shop: a
    query, a mutation with variables read back by REST, a bad query's
    errors on HTTP 200."""
    gql = shopify.GraphQL()
    ans = json.loads(gql.execute("{ shop { name } }"))
    check(ans.get("data", {}).get("shop", {}).get("name") == "Demo Shop", "shop: %s" % ans)
    check("cost" in ans.get("extensions", {}), "no cost extension: %s" % ans)
    made = json.loads(gql.execute(
        "mutation make($page: PageCreateInput!) { pageCreate(page: $page) { page { id title } userErrors { message } } }",
        variables={"page": {"title": "Python GraphQL %s" % RUN}}, operation_name="make"))
    gid = ((made.get("data") or {}).get("pageCreate") or {}).get("page", {}).get("id", "")
    check(gid.startswith("gid://shopify/Page/"), "pageCreate: %s" % made)
    if gid:
        page = shopify.Page.find(int(gid.rsplit("/", 1)[1]))
        check(page.title == "Python GraphQL %s" % RUN, "REST reads %s" % page.title)
        page.destroy()
    bad = json.loads(gql.execute("{ shop { nope } }"))
    check("data" not in bad and "nope" in bad.get("errors", [{}])[0].get("message", ""), "bad query: %s" % bad)


def main(argv):
    global current
    if len(argv) not in (3, 4):
        print("usage: %s BASE_URL TOKEN [WEBHOOK_SHARED_SECRET]" % argv[0], file=sys.stderr)
        return 2
    base_url, token = argv[1].rstrip("/"), argv[2]
    secret = argv[3] if len(argv) == 4 else DEMO_SHARED_SECRET
    site = connect(base_url, token)
    print("ShopifyAPI %s against %s (run %s)" % (shopify.VERSION, site, RUN), flush=True)

    tests = [
        ("session", lambda: test_session_and_auth(site, token)),
        ("Page", test_pages),
        ("Redirect", test_redirects),
        ("ScriptTag", test_script_tags),
        ("Event", test_events),
        ("Blog/Article", test_blog_and_articles),
        ("Comment", test_comments),
        ("Webhook", test_webhooks),
        ("CustomCollection", test_custom_collections),
        ("SmartCollection", test_smart_collections),
        ("Collect", test_collects),
        ("Product", test_products),
        ("Variant", test_variants),
        ("FulfillmentService", test_fulfillment_services),
        ("RecurringApplicationCharge", test_recurring_charges),
        ("ApplicationCharge", test_application_charges),
        ("Transaction", test_transactions),
        ("Theme/Asset", test_themes_and_assets),
        ("Country/Province", test_countries_and_provinces),
        ("Metafield (shop)", test_shop_metafields),
        ("Customer", test_customers),
        ("CustomerSavedSearch", test_customer_saved_searches),
        ("Address", test_customer_addresses),
        ("webhook HMAC", lambda: test_webhook_hmac(base_url, token, secret)),
        ("GraphQL", test_graphql),
    ]
    only = set(filter(None, os.environ.get("ONLY", "").split(",")))  # ONLY=Page,Variant runs those
    for name, fn in tests:
        if only and name not in only:
            continue
        current = name
        before = len(failed)
        try:
            fn()
        except Exception as err:  # an unexpected answer ends this resource's checks, not the run
            check(False, "stopped by %s" % describe(err))
            if not isinstance(err, arconn.Error):
                traceback.print_exc()
        print("%-4s %s" % ("ok" if len(failed) == before else "FAIL", name), flush=True)
        if name == "session" and len(failed) > before:
            print("the session checks failed (wrong URL or token, or the service is down): "
                  "the resource groups are not run", flush=True)
            break

    print()
    for line in failed:
        print("FAILED  " + line)
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
