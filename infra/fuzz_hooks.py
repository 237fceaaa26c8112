"""schemathesis hooks of infra/fuzz.sh: the failures it accepts.

Each rule drops one kind of "schema-valid request rejected" (ST202) where the
service is right and no schema could say why: the answer depends on what the
run itself did before, or on a value only the service can make. Every rule
matches the exact answer (status and message), never a whole check or
operation; schemathesis counts what they drop ("dropped by filter_failure").
"""

import html
import json
import re

import schemathesis
from schemathesis.specs.openapi.coverage import _schema as _coverage

# Probes for the coverage phase's test "does this pattern imply the format?"
# (schemathesis ships them for uuid and date only): a value of each kind
# the format takes, and near misses it refuses. When a field's pattern
# matches a valid probe and no near miss, as the document's URL patterns
# do, no string can match the pattern yet break the format, and the phase
# skips a search that would spend its whole draw budget (about 10 s a
# field) to find nothing. A pattern that lets a near miss through is
# searched as before.
_URI_NEAR = (
    "https://example.com/a b",
    "https://example.com/<a>",
    "https://example.com/%zz",
    "https://example.com/a\\b",
    "https://example.com/{a}",
    "https://exa mple.com/",
    "https://example.com/a|b",
)
_coverage._FORMAT_PROBES.setdefault("uri", (("https://example.com/a", "http://example.com"), _URI_NEAR))
_coverage._FORMAT_PROBES.setdefault(
    "uri-reference", (("/a", "https://example.com/a"), _URI_NEAR + ("/a b", "/%zz", "/<a>", "a b"))
)


def _messages(response):
    """The messages of a JSON error body, flattened."""
    try:
        errors = json.loads(response.content or b"{}").get("errors")
    except (ValueError, AttributeError):
        return []
    if isinstance(errors, str):
        return [errors]
    out = []
    for field, value in (errors or {}).items():
        for m in value if isinstance(value, list) else [value]:
            out.append(f"{field} {m}")
    return out


# 422 messages whose cause is the state the run's own earlier requests left,
# never the form of the request: each names the rule of spec-gaps.md it is.
STATE = (
    # Uniqueness: the examples and the stateful phase create the same
    # handle, path, code, key or address twice.
    "has already been taken",
    "for this topic has already been taken",
    "must be unique within this namespace",
    "already exists.",
    # Limits the run's creates reach: 20 themes a shop.
    "base cannot be created: a shop has at most 20 themes",
    # Ids of records an earlier request deleted (a collection, an article).
    "does not exist",
    # A smart collection's manual order: the products must be its members,
    # each once (a repeated parameter's values, which no schema of one
    # parameter ties), under the sort order it has or is given.
    "is not in this collection",
    "more than once",
    "can be ordered only when sort_order is manual",
    # Moderation transitions from the state an earlier action left.
    "applies only to pending or unapproved comments",
    "applies only to spam comments",
    "applies only to removed comments",
    # Deleting what must stay: the main theme, a default address.
    "base the main theme cannot be deleted",
    "base Cannot delete the customer's default address",
    # A theme whose import failed (its src was a made-up URL) cannot be main.
    "role cannot be set: the theme has no working files (its import failed)",
    # Stock changed by an earlier request since old_inventory_quantity was read.
    "inventory_quantity has changed:",
    # Metafield key and namespace are fixed at creation; an update may only
    # repeat the stored ones, and its value must suit the stored value_type,
    # which a generated body cannot know.
    "key can't be changed after creation",
    "namespace can't be changed after creation",
    "value must be an integer",
    # A comment's blog must be its article's, which is stored.
    "blog_id does not match the article's blog",
    # Image bytes fetched or decoded: the document cannot describe a
    # picture, and the runner reaches no image host.
    "is not a valid image (PNG, JPEG or GIF)",
    "could not be downloaded: connection failed",
    "could not be downloaded: timed out",
    # The order's ledger, which every earlier transaction of the run moved:
    # a capture's or void's parent must be an open authorization of the
    # order, a void one with nothing captured, a refund at most what is left
    # captured (of its parent, or of the order).
    "parent_id must be a successful authorization of this order",
    "parent_id must be a successful capture or sale of this order",
    "needs an authorization with nothing captured: this order has none",
    "needs an authorization with an uncaptured amount: this order has none",
    "cannot be voided:",
    "kind refund needs a captured amount:",
    "parent_id has been refunded in full",
    "amount must be less than or equal to the refundable amount of",
    "the most any one capture or sale of this order has left to refund",
    "amount must be equal to the authorized amount of",
    "can't be blank: this order has more than one authorization to",
    "currency must be the order's currency",
    # A rate id must be one of the country's stored rates.
    "is not a rate of this country",
    # A province code must be one of the provinces of the country the path
    # names (Canada's, Germany's, ...), which the run created.
    "is not a province of",
    # A variant's image must be one of its product's stored images.
    "image_id is invalid",
    # An address's province is looked up in the countries the shop has
    # stored (and their provinces), which the run creates and deletes.
    "is not a known province of the country",
    # An address's country is looked up by name or code in the ISO 3166
    # dataset, which the document names in words rather than a 250-value enum.
    "is not a known country",
)

# 422 messages of rules that tie two properties of one body together, which
# the document states in words: a province's tax_percentage must equal its
# tax x 100 when both are sent; a weight or price rate's bounds are in order;
# a metafield's value suits its type.
CROSS_BODY = (
    "tax_percentage must equal tax × 100",
    "weight_high must be greater than or equal to weight_low",
    "max_order_subtotal must be greater than or equal to min_order_subtotal",
    # A metafield's value must suit its type (a boolean's true or false, a
    # date that is one, JSON that parses), which the document says in words.
    "value does not suit its type",
)

# 400 messages of rules that tie two parameters together, which a schema of
# one parameter cannot state (the document says them in words): the depth
# of a page, (page - 1) x limit at most 25000; metafield[owner_id] and
# metafield[owner_resource] only together.
CROSS = (
    "page is too deep:",
    "metafield[owner_id] can't be blank",
    "metafield[owner_resource] can't be blank",
    # schemathesis also sends a bare "metafield" parameter, built from the
    # bracketed metafield[owner_*] names (no document parameter has that
    # name); an empty one is 400 as every empty parameter is.
    "metafield must not be empty",
    "metafield must be given once",
)


# 422 messages of decimal places: a JSON number's places are no property a
# JSON Schema validator can check (multipleOf 0.001 refuses 0.007 in binary
# floats), so the document says them in words for numbers (weights, a
# charge's price); as strings, their patterns state them.
DECIMALS = (
    "must have at most 3 decimal places",
    "must have at most two decimal places",
    "must have at most 6 decimal places",
)


# Limits in stored bytes of UTF-8, which no schema keyword states (the
# document says them in words): a redirect's path, at most 1024 bytes once
# a leading "/" is added. The answer is right when the value sent is over.
BYTES = {("/web/redirects", "path"): 1023}


def _over_bytes(case, messages):
    """Whether every message is a byte limit that the body's value exceeds."""
    body = case.body if isinstance(case.body, dict) else {}
    inner = next((v for v in body.values() if isinstance(v, dict)), {})
    for m in messages:
        field = m.split(" ", 1)[0]
        limit = next((n for (prefix, f), n in BYTES.items() if f == field and case.path.startswith(prefix)), None)
        value = inner.get(field)
        if limit is None or not isinstance(value, str) or not m.endswith("is too long (maximum is 1024 characters)"):
            return False
        if len(value.strip().encode("utf-8", "surrogatepass")) <= limit and "://" not in value:
            return False
    return True


# What only the seed or the service makes, which the OAuth operations
# (docs/oauth.md) check before anything else: an app's client_id and its
# redirect URLs (seeded), its secret, a code (made by an install) and the
# authorization page's form token (made by the page). A generated value is
# none of them; shared/oauth's tests and the OpenAPI scenario install with
# real ones. The page answers its refusals as an HTML page naming them.
OAUTH_ONLY = (
    "client_id is not the client_id of an app of this shop",
    "redirect_uri is not one of the app's redirect URLs",
    "client_secret is not the app's secret",
    "code was not found, has expired or was already used",
    "Invalid form token: reload the authorization page",
)


def _page_messages(response):
    """The message of an HTML error page (httpapi.WritePageError)."""
    m = re.search(r'<p class="error" id="error">(.*?)</p>', response.text or "", re.S)
    return [html.unescape(m.group(1))] if m else []


def _state(message):
    return any(message.endswith(s) or s in message for s in STATE)


def _has_float(value):
    """Whether a JSON value holds a number with a fraction anywhere."""
    if type(value) is float:
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if getattr(failure, "code", None) != "ST202":
        return True
    messages = _messages(response)
    # page_info is a signed cursor taken from a Link header: no generated
    # value is one, so a case carrying one is 400 (naming page_info, or a
    # parameter refused beside it or before it). shared/api/paging_test.go
    # pages every list with real cursors.
    if response.status_code == 400 and "page_info" in (case.query or {}):
        return False
    # Every message is one the run's state, a rule across the body, or (for
    # a body with JSON numbers with fractions) decimal places explain.
    if response.status_code == 422 and messages and all(
        _state(m) or m.endswith(CROSS_BODY) or (m.endswith(DECIMALS) and _has_float(case.body)) for m in messages
    ):
        return False
    if response.status_code == 422 and messages and _over_bytes(case, messages):
        return False
    if response.status_code == 400 and messages and all(m.startswith(CROSS) for m in messages):
        return False
    if case.path.startswith("/admin/oauth/") and response.status_code in (400, 403):
        found = messages or _page_messages(response)
        if found and all(m.startswith(OAUTH_ONLY) for m in found):
            return False
    # An update of a fulfillment service that clears callback_url while the
    # stored service manages inventory or tracking (the document says so in
    # words; a create's body says both, and its schema states the rule).
    if (
        response.status_code == 422
        and case.method == "PUT"
        and messages == ["callback_url can't be blank"]
    ):
        return False
    return True
