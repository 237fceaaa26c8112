// Drive the service with Shopify's official Node library, unmodified.
//
//   node infra/shopify_node_client/test_shopify_node_client.mjs HOST TOKEN READ_ONLY_TOKEN
//
// HOST is host:port of an https endpoint in front of the service (the Go test
// TestShopifyNodeClient puts a TLS terminator before the local runner and
// hands its CA to node in NODE_EXTRA_CA_CERTS); TOKEN an app's token holding
// every scope, READ_ONLY_TOKEN another app's, which the run uninstalls at
// its end (api_permissions/current). The library (@shopify/shopify-api,
// pinned in package.json) talks to the shop demo.myshopify.com through a
// custom store app session; its domainTransformations setting names HOST.
//
// For its oldest and its newest REST resource set, every call that the
// classes of the service's groups offer is made (RecurringApplicationCharge
// customize aside, and the owner paths the service does not serve, listed
// in NOT_SERVED); each request is recorded, and a class path no request
// reached is a failure. Saved searches and api_permissions/current have no
// class: the library's generic REST client calls them. Lists are walked by
// following pageInfo.nextPage to the end. Each failure prints FAIL; the run
// ends with "<version>: N library calls; N checks passed, N failed" per
// version (a call that answers is a check; so is each look at an answer)
// and exit status 1 when anything failed.

const [host, token, readOnlyToken] = process.argv.slice(2);
if (!host || !token || !readOnlyToken) {
  console.error('usage: node test_shopify_node_client.mjs HOST TOKEN READ_ONLY_TOKEN');
  process.exit(2);
}

// Every request the library makes, recorded before the adapter captures
// fetch (observed, not changed).
const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input.url);
  requests.push({method: (init?.method || 'GET').toUpperCase(), path: url.pathname});
  return realFetch(input, init);
};
await import('@shopify/shopify-api/adapters/node');
const {shopifyApi, ApiVersion, LogSeverity, HttpResponseError, GraphqlQueryError} = await import('@shopify/shopify-api');

const VERSIONS = ['2024-10', '2026-07'];
const SHOP = 'demo.myshopify.com';
// Seeded records of the demo shop (shared/seed/demo.json).
const BLOG_ID = 241253187;
const PRODUCT_ID = 632910392;
const VARIANT_ID = 808950810;
const CUSTOMER_ID = 207119551;
const SEEDED_ADDRESS_ID = 207119551;
const ORDER_ID = 450789469;
const AUTHORIZATION_ID = 389404469;
const RUN = Math.random().toString(16).slice(2, 10);

// Class paths the service does not serve: metafields of owners outside the
// spec (draft orders, product images) or under Shopify's shared collections
// path, articles' metafields without their blog (the service serves them
// under blogs/<blog_id>/articles/<article_id>), and events nested under
// orders and products. Asked for, they are 404; they are left out.
const NOT_SERVED = new Set([
  'Metafield collections/<collection_id>/metafields.json',
  'Metafield collections/<collection_id>/metafields/<id>.json',
  'Metafield collections/<collection_id>/metafields/count.json',
  'Metafield draft_orders/<draft_order_id>/metafields.json',
  'Metafield draft_orders/<draft_order_id>/metafields/<id>.json',
  'Metafield draft_orders/<draft_order_id>/metafields/count.json',
  'Metafield product_images/<product_image_id>/metafields.json',
  'Metafield product_images/<product_image_id>/metafields/<id>.json',
  'Metafield product_images/<product_image_id>/metafields/count.json',
  'Metafield articles/<article_id>/metafields.json',
  'Metafield articles/<article_id>/metafields/<id>.json',
  'Metafield articles/<article_id>/metafields/count.json',
  'Event orders/<order_id>/events.json',
  'Event products/<product_id>/events.json',
  // Usage charges' business (issue 38), not the service's.
  'RecurringApplicationCharge recurring_application_charges/<id>/customize.json',
]);

// The classes of the service's groups.
const CLASSES = ['Redirect', 'ScriptTag', 'Page', 'Article', 'Comment', 'Webhook', 'CustomCollection',
  'SmartCollection', 'Collect', 'Variant', 'Transaction', 'FulfillmentService', 'CustomerAddress', 'Theme',
  'Asset', 'Country', 'Province', 'Metafield', 'Event', 'RecurringApplicationCharge'];

let version;
const tally = {};
let current = '';

function pass() { tally[version].passed++; }
function counted() { tally[version].calls++; }
function fail(msg) {
  tally[version].failed++;
  console.log(`FAIL ${version} ${current}: ${msg}`);
}
function check(cond, msg) { cond ? pass() : fail(msg); return !!cond; }

function describe(err) {
  if (err instanceof HttpResponseError) {
    return `HTTP ${err.response.code} ${JSON.stringify(err.response.body).slice(0, 300)}`;
  }
  return `${err?.name}: ${err?.message}`;
}

// call makes one library call: it passes when the call answers.
async function call(what, fn) {
  counted();
  try {
    const v = await fn();
    pass();
    return v;
  } catch (err) {
    fail(`${what}: ${describe(err)}`);
    return undefined;
  }
}

// refused makes a call the service must refuse with status.
async function refused(what, status, fn) {
  counted();
  try {
    await fn();
    fail(`${what}: succeeded, want HTTP ${status}`);
  } catch (err) {
    check(err instanceof HttpResponseError && err.response.code === status, `${what}: ${describe(err)}, want HTTP ${status}`);
  }
}

// walk follows pageInfo.nextPage to the end; returns every record. Lists
// the spec does not page (limit null: countries, provinces, themes,
// fulfillment services, as Shopify's) are one page.
async function walk(what, cls, params, limit = 2) {
  const out = [];
  let page = await call(`${what} page 1`, () => cls.all(limit ? {...params, limit} : params));
  limit ??= Infinity;
  for (let n = 1; page; n++) {
    out.push(...page.data);
    check(page.data.length <= limit, `${what}: page ${n} holds ${page.data.length} > ${limit}`);
    if (!page.pageInfo?.nextPage || n >= 50) break;
    // page_info stands for the filters: only the path's ids go with it.
    const ids = Object.fromEntries(Object.entries(params).filter(([k]) => k === 'session' || cls.paths.some((p) => p.path.includes(`<${k}>`))));
    page = await call(`${what} page ${n + 1}`, () => cls.all({...ids, ...page.pageInfo.nextPage.query}));
  }
  const ids = out.map((r) => String(r.id));
  check(new Set(ids).size === ids.length, `${what}: a record twice while paging`);
  return out;
}

const same = (a, b) => String(a) === String(b);

// ------------------------------------------------------------ resources

async function crud(R, session, name, fields, change, {count = true, paged = true, listParams = {}, extra} = {}) {
  current = name;
  const cls = R[name];
  const made = [];
  for (let i = 0; i < 3; i++) {
    const r = new cls({session});
    Object.assign(r, fields(i));
    if (await call(`${name} save (create ${i})`, () => r.save({update: true}))) {
      check(r.id, `${name} create: no id`);
    }
    made.push(r);
  }
  const seen = await walk(`${name}.all`, cls, {session, ...listParams}, paged ? 2 : null);
  for (const r of made) check(seen.some((s) => same(s.id, r.id)), `${name}.all misses ${r.id}`);
  if (count) {
    const c = await call(`${name}.count`, () => cls.count({session, ...listParams}));
    check(c && c.count >= 3, `${name}.count ${JSON.stringify(c)}`);
  }
  const found = await call(`${name}.find`, () => cls.find({session, id: made[0].id, ...listParams}));
  check(found && same(found.id, made[0].id), `${name}.find ${found?.id}`);
  if (found) {
    const [field, value] = change(found);
    found[field] = value;
    // A whole-object save: every field as read, this one changed.
    await call(`${name} save (update ${field})`, () => found.save({update: true}));
    const again = await call(`${name}.find after the update`, () => cls.find({session, id: found.id, ...listParams}));
    check(again && String(again[field]) === String(value), `${name} update: ${field} = ${again?.[field]}, want ${value}`);
  }
  if (extra) await extra(made, found);
  await call(`${name}.delete`, () => cls.delete({session, id: made[1].id, ...listParams}));
  await call(`${name} delete()`, () => made[2].delete());
  await refused(`${name}.find of a deleted one`, 404, () => cls.find({session, id: made[1].id, ...listParams}));
  return made[0];
}

async function redirects(R, session) {
  await crud(R, session, 'Redirect', (i) => ({path: `/node-${RUN}-${version}-${i}`, target: '/pages/about'}),
    () => ['target', `/pages/node-${RUN}`]);
}

async function scriptTags(R, session) {
  await crud(R, session, 'ScriptTag', (i) => ({event: 'onload', src: `https://cdn.example.com/${RUN}-${version}-${i}.js`}),
    () => ['src', `https://cdn.example.com/${RUN}-${version}-changed.js`]);
}

async function pages(R, session) {
  const page = await crud(R, session, 'Page', (i) => ({title: `Node page ${RUN} ${version} ${i}`, body_html: '<p>x</p>'}),
    () => ['title', `Node page ${RUN} ${version} renamed`]);
  await metafieldsOf(R, session, 'page_id', page.id);
}

async function articles(R, session) {
  const article = await crud(R, session, 'Article',
    (i) => ({blog_id: BLOG_ID, title: `Node article ${RUN} ${version} ${i}`, author: `Node ${RUN}`, tags: 'zeta, alpha'}),
    () => ['title', `Node article ${RUN} ${version} renamed`], {listParams: {blog_id: BLOG_ID}});
  const authors = await call('Article.authors', () => R.Article.authors({session}));
  check(authors?.authors?.includes(`Node ${RUN}`), `Article.authors ${JSON.stringify(authors)}`);
  const tags = await call('Article.tags (blog)', () => R.Article.tags({session, blog_id: BLOG_ID, popular: 1, limit: 5}));
  check(tags?.tags?.includes('alpha'), `Article.tags (blog) ${JSON.stringify(tags)}`);
  const all = await call('Article.tags (shop)', () => R.Article.tags({session, limit: 250}));
  check(all?.tags?.includes('zeta'), `Article.tags (shop) ${JSON.stringify(all)}`);
  return article;
}

async function comments(R, session) {
  current = 'Comment';
  const article = new R.Article({session});
  Object.assign(article, {blog_id: BLOG_ID, title: `Commented ${RUN} ${version}`});
  await call('Article save (for comments)', () => article.save({update: true}));
  const made = [];
  for (let i = 0; i < 3; i++) {
    const c = new R.Comment({session});
    // article_id as the library read it: a string.
    Object.assign(c, {article_id: article.id, blog_id: BLOG_ID, body: `Node comment ${i}`, author: 'Ann', email: 'ann@example.com', ip: '192.0.2.1'});
    await call(`Comment save (create ${i})`, () => c.save({update: true}));
    made.push(c);
  }
  const seen = await walk('Comment.all', R.Comment, {session, article_id: article.id});
  check(seen.length === 3, `Comment.all: ${seen.length} comments`);
  const n = await call('Comment.count', () => R.Comment.count({session, article_id: article.id}));
  check(n?.count === 3, `Comment.count ${JSON.stringify(n)}`);
  const c = await call('Comment.find', () => R.Comment.find({session, id: made[0].id}));
  if (c) {
    const published = c.published_at;
    c.body = 'Edited by Node';
    await call('Comment save (update body)', () => c.save({update: true}));
    check(c.status === 'pending' && c.body === 'Edited by Node' && c.published_at === published,
      `Comment update: status ${c.status}, body ${c.body}, published_at ${c.published_at} (was ${published})`);
  }
  const moderated = made[1];
  for (const [action, status] of [['approve', 'published'], ['spam', 'spam'], ['not_spam', 'published'], ['remove', 'removed'], ['restore', 'published']]) {
    const r = await call(`Comment ${action}`, () => moderated[action]({}));
    check(r?.status === status, `Comment ${action}: ${JSON.stringify(r)?.slice(0, 200)}`);
  }
  await call('Article.delete (commented)', () => R.Article.delete({session, blog_id: BLOG_ID, id: article.id}));
}

async function webhooks(R, session) {
  await crud(R, session, 'Webhook',
    (i) => ({topic: 'orders/create', address: `https://example.com/hooks/${RUN}/${version}/${i}`, format: 'json'}),
    () => ['address', `https://example.com/hooks/${RUN}/${version}/changed`]);
}

async function customCollections(R, session) {
  return crud(R, session, 'CustomCollection', (i) => ({title: `Node custom ${RUN} ${version} ${i}`, body_html: '<p>c</p>'}),
    () => ['title', `Node custom ${RUN} ${version} renamed`]);
}

async function smartCollections(R, session) {
  await crud(R, session, 'SmartCollection',
    (i) => ({title: `Node smart ${RUN} ${version} ${i}`, rules: [{column: 'vendor', relation: 'equals', condition: 'Apple'}]}),
    () => ['title', `Node smart ${RUN} ${version} renamed`], {
      extra: async (made) => {
        current = 'SmartCollection';
        await call('SmartCollection order (sort_order)', () => made[0].order({sort_order: 'alpha-desc'}));
        await call('SmartCollection order (products)', () => made[0].order({sort_order: 'manual', products: [PRODUCT_ID]}));
        const s = await call('SmartCollection.find after order', () => R.SmartCollection.find({session, id: made[0].id}));
        check(s?.sort_order === 'manual', `order: sort_order ${s?.sort_order}`);
      },
    });
}

async function collects(R, session) {
  current = 'Collect';
  const coll = new R.CustomCollection({session});
  coll.title = `Collect target ${RUN} ${version}`;
  await call('CustomCollection save (for collects)', () => coll.save({update: true}));
  const c = new R.Collect({session});
  Object.assign(c, {collection_id: coll.id, product_id: PRODUCT_ID});
  await call('Collect save (create)', () => c.save({update: true}));
  const seen = await walk('Collect.all', R.Collect, {session, collection_id: coll.id});
  check(seen.length === 1, `Collect.all: ${seen.length}`);
  const n = await call('Collect.count', () => R.Collect.count({session, collection_id: coll.id}));
  check(n?.count === 1, `Collect.count ${JSON.stringify(n)}`);
  const found = await call('Collect.find', () => R.Collect.find({session, id: c.id}));
  check(found && same(found.product_id, PRODUCT_ID), `Collect.find ${found?.product_id}`);
  await call('Collect delete()', () => c.delete());
  const c2 = new R.Collect({session});
  Object.assign(c2, {collection_id: coll.id, product_id: PRODUCT_ID});
  await call('Collect save (again)', () => c2.save({update: true}));
  await call('Collect.delete', () => R.Collect.delete({session, id: c2.id}));
  await call('CustomCollection delete() (collects)', () => coll.delete());
}

async function variants(R, session) {
  current = 'Variant';
  const made = [];
  for (let i = 0; i < 2; i++) {
    const v = new R.Variant({session});
    Object.assign(v, {product_id: PRODUCT_ID, option1: `Node ${RUN} ${version} ${i}`, price: `10.0${i}`, sku: `NODE-${RUN}-${i}`});
    await call(`Variant save (create ${i})`, () => v.save({update: true}));
    made.push(v);
  }
  const seen = await walk('Variant.all', R.Variant, {session, product_id: PRODUCT_ID});
  check(made.every((m) => seen.some((s) => same(s.id, m.id))), 'Variant.all misses a new variant');
  const n = await call('Variant.count', () => R.Variant.count({session, product_id: PRODUCT_ID}));
  check(n?.count === seen.length, `Variant.count ${JSON.stringify(n)}, listed ${seen.length}`);
  const v = await call('Variant.find', () => R.Variant.find({session, id: made[0].id}));
  if (v) {
    v.price = '12.50';
    await call('Variant save (update price)', () => v.save({update: true}));
    check(v.price === '12.50', `Variant update: price ${v.price}`);
  }
  await metafieldsOf(R, session, 'variant_id', VARIANT_ID);
  await call('Variant.delete', () => R.Variant.delete({session, product_id: PRODUCT_ID, id: made[0].id}));
  await call('Variant delete()', () => made[1].delete());
}

async function transactions(R, session) {
  current = 'Transaction';
  const capture = new R.Transaction({session});
  Object.assign(capture, {order_id: ORDER_ID, kind: 'capture', parent_id: String(AUTHORIZATION_ID), amount: '1.00'});
  await call('Transaction save (capture)', () => capture.save({update: true}));
  const refund = new R.Transaction({session});
  // parent_id as the library read it: a string.
  Object.assign(refund, {order_id: ORDER_ID, kind: 'refund', parent_id: capture.id, amount: '0.50'});
  await call('Transaction save (refund)', () => refund.save({update: true}));
  check(same(refund.parent_id, capture.id), `refund parent_id ${refund.parent_id}`);
  const seen = await walk('Transaction.all', R.Transaction, {session, order_id: ORDER_ID}, 250);
  check(seen.some((t) => same(t.id, refund.id)), 'Transaction.all misses the refund');
  const n = await call('Transaction.count', () => R.Transaction.count({session, order_id: ORDER_ID}));
  check(n?.count === seen.length, `Transaction.count ${JSON.stringify(n)}`);
  const t = await call('Transaction.find', () => R.Transaction.find({session, order_id: ORDER_ID, id: capture.id}));
  check(t?.kind === 'capture', `Transaction.find ${t?.kind}`);
}

async function fulfillmentServices(R, session) {
  await crud(R, session, 'FulfillmentService',
    (i) => ({name: `Node FS ${RUN} ${version} ${i}`, callback_url: 'https://fulfillment.example.com/cb', inventory_management: true,
      tracking_support: false, requires_shipping_method: true, format: 'json'}),
    () => ['tracking_support', true], {count: false, paged: false});
}

async function customerAddresses(R, session) {
  current = 'CustomerAddress';
  if (!R.CustomerAddress) {
    console.log(`NOTE ${version} CustomerAddress: this version has no class`);
    return;
  }
  const made = [];
  for (let i = 0; i < 2; i++) {
    const a = new R.CustomerAddress({session});
    Object.assign(a, {customer_id: CUSTOMER_ID, address1: `${i} Node Street`, city: 'Ottawa', country: 'Canada', province: 'Ontario', zip: 'K1A 0B1'});
    await call(`CustomerAddress save (create ${i})`, () => a.save({update: true}));
    made.push(a);
  }
  const seen = await walk('CustomerAddress.all', R.CustomerAddress, {session, customer_id: CUSTOMER_ID});
  check(made.every((m) => seen.some((s) => same(s.id, m.id))), 'CustomerAddress.all misses one');
  const a = await call('CustomerAddress.find', () => R.CustomerAddress.find({session, customer_id: CUSTOMER_ID, id: made[0].id}));
  if (a) {
    a.address2 = 'Suite 9';
    await call('CustomerAddress save (update)', () => a.save({update: true}));
    check(a.address2 === 'Suite 9', `update: address2 ${a.address2}`);
    await call('CustomerAddress default()', () => a.default({}));
    const d = await call('CustomerAddress.find (default)', () => R.CustomerAddress.find({session, customer_id: CUSTOMER_ID, id: a.id}));
    check(d?.is_default === true, `default: ${d?.is_default}`);
  }
  await call('CustomerAddress set (destroy)', () => made[1].set({address_ids: [made[1].id], operation: 'destroy'}));
  const seeded = new R.CustomerAddress({session});
  Object.assign(seeded, {customer_id: CUSTOMER_ID, id: SEEDED_ADDRESS_ID});
  await call('CustomerAddress default() (seeded again)', () => seeded.default({}));
  await call('CustomerAddress.delete', () => R.CustomerAddress.delete({session, customer_id: CUSTOMER_ID, id: made[0].id}));
  const extra = new R.CustomerAddress({session});
  Object.assign(extra, {customer_id: CUSTOMER_ID, address1: '9 Node Street', city: 'Ottawa', country: 'Canada', province: 'Ontario', zip: 'K1A 0B1'});
  await call('CustomerAddress save (create, to delete)', () => extra.save({update: true}));
  await call('CustomerAddress delete()', () => extra.delete());
}

async function themesAndAssets(R, session) {
  const theme = await crud(R, session, 'Theme', (i) => ({name: `Node theme ${RUN} ${version} ${i}`}),
    () => ['name', `Node theme ${RUN} ${version} renamed`], {count: false, paged: false});
  current = 'Asset';
  const a = new R.Asset({session});
  Object.assign(a, {theme_id: theme.id, key: `snippets/node-${RUN}.liquid`, value: '<p>{{ shop.name }}</p>'});
  await call('Asset save', () => a.save({update: true}));
  const list = await call('Asset.all', () => R.Asset.all({session, theme_id: theme.id}));
  check(list?.data.some((x) => x.key === a.key), 'Asset.all misses the new asset');
  const one = await call('Asset.all (asset[key])', () => R.Asset.all({session, theme_id: theme.id, asset: {key: a.key}}));
  check(one?.data[0]?.value === '<p>{{ shop.name }}</p>', `Asset by key: ${JSON.stringify(one?.data[0])?.slice(0, 200)}`);
  await call('Asset.delete', () => R.Asset.delete({session, theme_id: theme.id, asset: {key: a.key}}));
  await call('Theme.delete (assets)', () => R.Theme.delete({session, id: theme.id}));
}

async function countriesAndProvinces(R, session) {
  current = 'Country';
  const made = [];
  for (const [code, tax] of [['CA', 0.05], ['DE', 0.19], ['IT', 0.22]]) {
    const c = new R.Country({session});
    Object.assign(c, {code, tax});
    await call(`Country save (create ${code})`, () => c.save({update: true}));
    made.push(c);
  }
  const seen = await walk('Country.all', R.Country, {session}, null);
  check(made.every((m) => seen.some((s) => same(s.id, m.id))), 'Country.all misses one');
  const n = await call('Country.count', () => R.Country.count({session}));
  check(n?.count === seen.length, `Country.count ${JSON.stringify(n)}`);
  const ca = await call('Country.find', () => R.Country.find({session, id: made[0].id}));
  if (ca) {
    // provinces[].id as read: strings.
    ca.tax = 0.06;
    await call('Country save (update: tax, provinces echoed)', () => ca.save({update: true}));
    check(ca.tax === 0.06, `Country update: tax ${ca.tax}`);
  }
  current = 'Province';
  const provinces = await walk('Province.all', R.Province, {session, country_id: made[0].id}, null);
  check(provinces.length === 13, `Province.all: ${provinces.length} provinces`);
  const pn = await call('Province.count', () => R.Province.count({session, country_id: made[0].id}));
  check(pn?.count === 13, `Province.count ${JSON.stringify(pn)}`);
  const on = provinces.find((p) => p.code === 'ON');
  const p = on && await call('Province.find', () => R.Province.find({session, country_id: made[0].id, id: on.id}));
  if (p) {
    // tax_percentage is echoed as read beside the new tax.
    p.tax = 0.13;
    await call('Province save (update tax)', () => p.save({update: true}));
    check(p.tax === 0.13 && p.tax_percentage === 13, `Province update: tax ${p.tax}, tax_percentage ${p.tax_percentage}`);
  }
  current = 'Country';
  await call('Country.delete', () => R.Country.delete({session, id: made[1].id}));
  await call('Country delete()', () => made[2].delete());
  await call('Country delete() (CA)', () => made[0].delete());
}

// metafieldsOf drives the Metafield class paths of one owner, named by its
// id property (page_id, ...; null: the shop's), with `type` as clients of
// 2021-07 on send it.
async function metafieldsOf(R, session, ownerKey, ownerID) {
  const saved = current;
  current = `Metafield (${ownerKey || 'shop'})`;
  const owner = ownerKey ? {[ownerKey]: ownerID} : {};
  const m = new R.Metafield({session});
  Object.assign(m, owner, {namespace: 'node', key: `k_${RUN}_${version.replace('-', '_')}`, value: '42', type: 'number_integer'});
  await call('Metafield save (create)', () => m.save({update: true}));
  check(m.type === 'number_integer' && String(m.value) === '42' && m.value_type === 'integer',
    `create: type ${m.type}, value ${m.value}, value_type ${m.value_type}`);
  const seen = await walk('Metafield.all', R.Metafield, {session, ...owner});
  check(seen.some((s) => same(s.id, m.id)), 'Metafield.all misses it');
  const typed = await call('Metafield.all (type)', () => R.Metafield.all({session, ...owner, type: 'number_integer'}));
  check(typed?.data.length > 0 && typed.data.every((s) => s.type === 'number_integer'), 'type filter');
  const n = await call('Metafield.count', () => R.Metafield.count({session, ...owner}));
  check(n?.count === seen.length, `Metafield.count ${JSON.stringify(n)}, listed ${seen.length}`);
  const found = await call('Metafield.find', () => R.Metafield.find({session, id: m.id, ...owner}));
  if (found) {
    Object.assign(found, owner); // the owner's path, as the library builds it from its id
    found.value = '43';
    await call('Metafield save (update)', () => found.save({update: true}));
    check(String(found.value) === '43' && found.value_type === 'integer', `update: value ${found.value}, value_type ${found.value_type}`);
  }
  await call('Metafield.delete', () => R.Metafield.delete({session, id: m.id, ...owner}));
  current = saved;
}

async function events(R, session) {
  current = 'Event';
  const seen = await walk('Event.all', R.Event, {session, filter: 'Page'}, 5);
  check(seen.length > 0, 'Event.all: no Page events');
  const n = await call('Event.count', () => R.Event.count({session}));
  check(n?.count > 0, `Event.count ${JSON.stringify(n)}`);
  if (seen[0]) {
    const e = await call('Event.find', () => R.Event.find({session, id: seen[0].id}));
    check(e && same(e.id, seen[0].id), 'Event.find');
  }
}

async function recurringCharges(R, session) {
  current = 'RecurringApplicationCharge';
  const made = [];
  for (let i = 0; i < 2; i++) {
    const c = new R.RecurringApplicationCharge({session});
    Object.assign(c, {name: `Node plan ${i}`, price: 10.5, return_url: 'https://app.example.com/return', test: true});
    await call(`RecurringApplicationCharge save (create ${i})`, () => c.save({update: true}));
    made.push(c);
  }
  const all = await call('RecurringApplicationCharge.all', () => R.RecurringApplicationCharge.all({session}));
  check(made.every((m) => all?.data.some((s) => same(s.id, m.id))), 'RecurringApplicationCharge.all misses one');
  const f = await call('RecurringApplicationCharge.find', () => R.RecurringApplicationCharge.find({session, id: made[0].id}));
  check(f?.status === 'pending', `find: status ${f?.status}`);
  await call('RecurringApplicationCharge.delete', () => R.RecurringApplicationCharge.delete({session, id: made[0].id}));
  await call('RecurringApplicationCharge delete()', () => made[1].delete());
}

// The groups without a class, through the library's generic REST client.
async function savedSearches(shopify, session) {
  current = 'CustomerSavedSearch (REST client)';
  const client = new shopify.clients.Rest({session});
  const made = await call('POST customer_saved_searches', () =>
    client.post({path: 'customer_saved_searches', data: {customer_saved_search: {name: `Node ${RUN} ${version}`, query: 'state:enabled'}}}));
  const id = made?.body?.customer_saved_search?.id;
  check(id, 'create: no id');
  const list = await call('GET customer_saved_searches', () => client.get({path: 'customer_saved_searches'}));
  check(list?.body?.customer_saved_searches?.some((s) => same(s.id, id)), 'list misses it');
  const search = list?.body?.customer_saved_searches?.find((s) => same(s.id, id));
  if (search) {
    // A whole-object save: the object as read (its id a string), renamed.
    await call('PUT customer_saved_searches/<id>', () =>
      client.put({path: `customer_saved_searches/${id}`, data: {customer_saved_search: {...search, name: `Node ${RUN} ${version} renamed`}}}));
  }
  const customers = await call('GET customer_saved_searches/<id>/customers', () => client.get({path: `customer_saved_searches/${id}/customers`}));
  check(Array.isArray(customers?.body?.customers), 'customers of the search');
  await call('DELETE customer_saved_searches/<id>', () => client.delete({path: `customer_saved_searches/${id}`}));
}

async function uninstall(shopify) {
  current = 'api_permissions/current (REST client)';
  const ro = shopifyApi({...config(shopify.config.apiVersion), adminApiAccessToken: readOnlyToken});
  const session = ro.session.customAppSession(SHOP);
  const client = new ro.clients.Rest({session});
  await call('DELETE api_permissions/current', () => client.delete({path: 'api_permissions/current'}));
  await refused('a call with the uninstalled app\'s token', 401, () => client.get({path: 'script_tags'}));
}

// graphql drives the GraphQL Admin API with the library's own GraphQL
// client (clients.Graphql) and with @shopify/admin-api-client, which it
// is built on (createAdminApiClient, pinned by the library's lock file):
// the query Shopify's app package sends, CRUD with variables, paging by
// cursor, a page made by GraphQL read by REST, a bad query's errors, and
// a mutation the read-only app may not make.
async function graphql(shopify, session, R) {
  current = 'GraphQL (clients.Graphql)';
  const client = new shopify.clients.Graphql({session});
  const shop = await call('shopifyAppShopName', () => client.request('query shopifyAppShopName { shop { name } }'));
  check(shop?.data?.shop?.name === 'Demo Shop', `shop ${JSON.stringify(shop?.data)}`);
  check(shop?.extensions?.cost?.throttleStatus?.maximumAvailable > 0, `cost ${JSON.stringify(shop?.extensions)}`);
  const made = await call('pageCreate', () => client.request(
    'mutation make($page: PageCreateInput!) { pageCreate(page: $page) { page { id title handle } userErrors { field message code } } }',
    {variables: {page: {title: `GraphQL page ${RUN}`, body: '<p>g</p>'}}}));
  const gid = made?.data?.pageCreate?.page?.id;
  check(gid?.startsWith('gid://shopify/Page/'), `pageCreate ${JSON.stringify(made?.data)}`);
  if (gid) {
    const rest = await call('Page.find of a GraphQL page', () => R.Page.find({session, id: Number(gid.split('/').pop())}));
    check(rest?.title === `GraphQL page ${RUN}` && rest?.body_html === '<p>g</p>', `REST reads ${JSON.stringify(rest)}`);
    const upd = await call('pageUpdate', () => client.request(
      'mutation($id: ID!, $page: PageUpdateInput!) { pageUpdate(id: $id, page: $page) { page { title } userErrors { message } } }',
      {variables: {id: gid, page: {title: `GraphQL page ${RUN} changed`}}}));
    check(upd?.data?.pageUpdate?.page?.title === `GraphQL page ${RUN} changed`, `pageUpdate ${JSON.stringify(upd?.data)}`);
  }
  const blank = await call('pageCreate with a blank title', () => client.request(
    'mutation { pageCreate(page: {title: ""}) { page { id } userErrors { field message code } } }'));
  check(blank?.data?.pageCreate?.userErrors?.[0]?.code === 'BLANK', `blank title ${JSON.stringify(blank?.data)}`);
  let after = null;
  let pages = 0;
  for (let i = 0; i < 50; i++) {
    const res = await call('pages by cursor', () => client.request(
      'query($after: String) { pages(first: 1, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }',
      {variables: {after}}));
    const conn = res?.data?.pages;
    if (!conn) break;
    pages += conn.edges.length;
    if (!conn.pageInfo.hasNextPage) break;
    after = conn.pageInfo.endCursor;
  }
  check(pages >= 1, `paged over ${pages} pages`);
  counted();
  try {
    await client.request('{ shop { nope } }');
    fail('a bad query answered');
  } catch (err) {
    check(err instanceof GraphqlQueryError && err.message.includes('Cannot query field "nope"'), `a bad query: ${err?.name}: ${err?.message}`);
  }
  if (gid) {
    const del = await call('pageDelete', () => client.request('mutation($id: ID!) { pageDelete(id: $id) { deletedPageId } }', {variables: {id: gid}}));
    check(del?.data?.pageDelete?.deletedPageId === gid, `pageDelete ${JSON.stringify(del?.data)}`);
  }

  current = 'GraphQL (@shopify/admin-api-client)';
  const {createAdminApiClient} = await import('@shopify/admin-api-client');
  const admin = createAdminApiClient({storeDomain: host, apiVersion: version, accessToken: token});
  const a = await call('createAdminApiClient().request', () => admin.request('query { shop { name myshopifyDomain } }'));
  check(a?.data?.shop?.name === 'Demo Shop' && !a?.errors, `admin-api-client ${JSON.stringify(a)}`);
  const bad = await call('admin-api-client, a bad query', () => admin.request('{ shop { nope } }'));
  check(bad?.errors?.graphQLErrors?.[0]?.message?.includes('nope'), `bad query ${JSON.stringify(bad?.errors)}`);
  const ro = createAdminApiClient({storeDomain: host, apiVersion: version, accessToken: readOnlyToken});
  const denied = await call('admin-api-client, a mutation out of scope', () => ro.request('mutation { pageCreate(page: {title: "x"}) { page { id } } }'));
  check(denied?.data?.pageCreate === null && denied?.errors?.graphQLErrors?.some((e) => e.extensions?.code === 'ACCESS_DENIED'),
    `read-only app ${JSON.stringify(denied)}`);
}

// --------------------------------------------------------------- driver

function config(apiVersion, restResources) {
  return {
    apiSecretKey: 'unused-by-a-custom-store-app',
    adminApiAccessToken: token,
    isCustomStoreApp: true,
    isEmbeddedApp: false,
    hostName: 'app.example.com',
    apiVersion,
    restResources,
    // The shop's domain, pointed at the service.
    domainTransformations: [{match: /^demo\.myshopify\.com$/, transform: host}],
    logger: {level: LogSeverity.Error},
    // The library's fix of CustomerAddress, whose `default` field hid its
    // default() method: the field is read as is_default.
    future: {customerAddressDefaultFix: true},
  };
}

// coverage fails every class path of the service's groups that no request
// of this version reached.
function coverage(R, from) {
  current = 'coverage';
  const prefix = `/admin/api/${version}/`;
  const reached = requests.slice(from);
  for (const name of CLASSES) {
    const cls = R[name];
    if (!cls) continue;
    for (const p of cls.paths) {
      if (NOT_SERVED.has(`${name} ${p.path}`)) continue;
      const re = new RegExp('^' + prefix.replace(/[.]/g, '\\.') + p.path.replace(/[.]/g, '\\.').replace(/<[a-z_]+>/g, '[^/]+') + '$');
      check(reached.some((r) => r.method === p.http_method.toUpperCase() && re.test(r.path)),
        `no call reached ${name} ${p.http_method.toUpperCase()} ${p.path} (${p.operation})`);
    }
  }
}

let exit = 0;
for (const v of VERSIONS) {
  version = v;
  tally[v] = {passed: 0, failed: 0, calls: 0};
  const {restResources} = await import(`@shopify/shopify-api/rest/admin/${v}`);
  const apiVersion = Object.values(ApiVersion).find((x) => x === v);
  const shopify = shopifyApi(config(apiVersion, restResources));
  const session = shopify.session.customAppSession(SHOP);
  const R = shopify.rest;
  const from = requests.length;
  for (const fn of [pages, redirects, scriptTags, articles, comments, webhooks, customCollections, smartCollections,
    collects, variants, transactions, fulfillmentServices, customerAddresses, themesAndAssets, countriesAndProvinces,
    events, recurringCharges]) {
    try {
      await fn(R, session);
    } catch (err) {
      fail(`stopped by ${describe(err)}`);
    }
  }
  await metafieldsOf(R, session, null, 0); // the shop's
  await metafieldsOf(R, session, 'product_id', PRODUCT_ID);
  await metafieldsOf(R, session, 'blog_id', BLOG_ID);
  await metafieldsOf(R, session, 'order_id', ORDER_ID);
  await metafieldsOf(R, session, 'customer_id', CUSTOMER_ID);
  await savedSearches(shopify, session);
  coverage(R, from);
  if (v === VERSIONS[VERSIONS.length - 1]) await graphql(shopify, session, R);
  if (v === VERSIONS[VERSIONS.length - 1]) await uninstall(shopify);
  console.log(`${v}: ${tally[v].calls} library calls; ${tally[v].passed} checks passed, ${tally[v].failed} failed`);
  if (tally[v].failed) exit = 1;
}
process.exit(exit);
