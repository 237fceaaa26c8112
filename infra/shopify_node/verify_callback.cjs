// Checks OAuth callbacks with Shopify's official Node library
// (@shopify/shopify-api, pinned in package.json), unmodified: for each line
// of stdin, {"url", "secret"}, it reads the callback's query as the
// library's auth.callback() does (Object.fromEntries of the URL's
// searchParams) and prints {"valid": true} or {"valid": false, "error"}
// from shopify.utils.validateHmac, which also checks the timestamp against
// this machine's clock. shared/oauth's TestCallbacksVerifyWithShopifyNode
// runs it.
'use strict';
require('@shopify/shopify-api/adapters/node');
const {shopifyApi, ApiVersion, LogSeverity} = require('@shopify/shopify-api');
const readline = require('node:readline');

const apis = new Map();
const api = (secret) => {
  if (!apis.has(secret)) {
    apis.set(secret, shopifyApi({
      apiKey: 'verify-callback', apiSecretKey: secret, scopes: [], hostName: 'localhost:3000',
      apiVersion: ApiVersion.October25, isEmbeddedApp: false, logger: {level: LogSeverity.Error},
    }));
  }
  return apis.get(secret);
};

const out = [];
readline.createInterface({input: process.stdin}).on('line', (line) => {
  if (!line.trim()) return;
  const {url, secret} = JSON.parse(line);
  const query = Object.fromEntries(new URL(url).searchParams.entries());
  out.push(api(secret).utils.validateHmac(query)
    .then((valid) => ({valid}), (err) => ({valid: false, error: `${err.name}: ${err.message}`})));
}).on('close', async () => {
  for (const r of await Promise.all(out)) process.stdout.write(JSON.stringify(r) + '\n');
});
