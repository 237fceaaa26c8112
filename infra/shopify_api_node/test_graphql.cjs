// Drive the GraphQL Admin API with shopify-api-node (pinned in
// package.json), unmodified: its graphql() with and without variables, its
// errors, and its retry of a THROTTLED query, which it paces by the answer's
// cost figures.
//
//   node test_graphql.cjs HOST:PORT TOKEN
//
// The client calls https://<shop>.myshopify.com on port 443 only; its
// documented `agent` option (handed to got) connects those requests to
// HOST:PORT, a TLS terminator in front of the runner whose CA node gets in
// NODE_EXTRA_CA_CERTS. Prints FAIL lines and exits 1 on any failure.
'use strict';
const https = require('node:https');
const tls = require('node:tls');
const Shopify = require('shopify-api-node');

const [addr, token] = process.argv.slice(2);
const [host, port] = addr.split(':');
const agent = new https.Agent({keepAlive: true});
agent.createConnection = (opts, cb) => tls.connect({...opts, host, port: Number(port), servername: undefined,
  checkServerIdentity: () => undefined}, cb);

let failed = 0;
let passed = 0;
const check = (cond, msg) => { if (cond) { passed++; } else { failed++; console.log(`FAIL ${msg}`); } };

(async () => {
  const shopify = new Shopify({shopName: 'demo-shop', accessToken: token, apiVersion: '2026-07', agent: {https: agent}, maxRetries: 3});
  const shop = await shopify.graphql('{ shop { name } }');
  check(shop?.shop?.name === 'Demo Shop', `graphql() without variables: ${JSON.stringify(shop)}`);
  check(shopify.callGraphqlLimits?.restoreRate === 10, `callGraphqlLimits ${JSON.stringify(shopify.callGraphqlLimits)}`);
  const made = await shopify.graphql('mutation make($t: String!) { pageCreate(page: {title: $t}) { page { id title } userErrors { message } } }',
    {t: 'shopify-api-node page'});
  check(made?.pageCreate?.page?.title === 'shopify-api-node page', `graphql() with variables: ${JSON.stringify(made)}`);
  try {
    await shopify.graphql('{ shop { nope } }');
    check(false, 'a bad query answered');
  } catch (err) {
    check(/Cannot query field "nope"/.test(err.message), `a bad query: ${err.message}`);
  }
  // The runner's bucket is 60 points restored at 10 a second
  // (GRAPHQL_POINTS=60/10): empty it with mutations (10 points each, all
  // used), then ask for 52 points: THROTTLED unless 5 s passed, waited out
  // from the cost figures, and retried.
  for (let i = 0; i < 6; i++) {
    await shopify.graphql('mutation { urlRedirectCreate(urlRedirect: {path: "/san-' + i + '", target: "/"}) { urlRedirect { id } } }');
  }
  let throttled = 0;
  const seen = {
    beforeRetry: [() => { throttled++; }],
  };
  const paced = new Shopify({shopName: 'demo-shop', accessToken: token, apiVersion: '2026-07', agent: {https: agent}, maxRetries: 5, hooks: seen});
  const began = Date.now();
  const big = await paced.graphql('{ a: urlRedirects(first: 50) { nodes { id } } }');
  check(big?.a?.nodes?.length === 6, `the throttled query answered ${JSON.stringify(big)?.slice(0, 200)}`);
  check(throttled >= 1, `no THROTTLED retry (${Date.now() - began} ms)`);
  console.log(`shopify-api-node: ${passed} checks passed, ${failed} failed; ${throttled} THROTTLED retries, ${Date.now() - began} ms`);
  process.exit(failed ? 1 : 0);
})().catch((err) => { console.log(`FAIL stopped by ${err.stack}`); process.exit(1); });
