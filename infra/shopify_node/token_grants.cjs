// An app on Shopify's official Node library (@shopify/shopify-api, pinned in
// package.json), unmodified, exercising every way it gets a token:
//   GET  /auth?shop=…            shopify.auth.begin() (offline)
//   GET  /auth/callback          shopify.auth.callback({expiring: true})
//   POST /refresh {refresh_token}                   shopify.auth.refreshToken()
//   POST /exchange {session_token, online, expiring} shopify.auth.tokenExchange()
//   POST /migrate {token}                           shopify.auth.migrateToExpiringToken()
//   POST /shop {token}           its GraphQL client: query shopifyAppShopName { shop { name } }
// Each answers JSON: {"session": {...}} (the library's Session, tokens
// included: this is a test's app), {"name"}, or {"error", "message",
// "status"} when the library throws. shared/oauth's
// TestShopifyNodeTokenGrants drives it, playing the browser.
//
// The library calls https://<shop>/admin/oauth/access_token and
// https://<shop>/admin/api/...: this script hands it a fetch that sends
// what is addressed to https://SHOP_DOMAIN to SERVICE_URL instead (the
// test's server), as a DNS entry and a TLS proxy would; nothing of the
// library changes. SHOP_DOMAIN is accepted as a shop's domain through a
// domainTransformation onto itself. It prints "listening <port>".
'use strict';
const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const shopDomain = env('SHOP_DOMAIN');
const serviceURL = env('SERVICE_URL');
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input.url;
  const origin = `https://${shopDomain}`;
  if (url.startsWith(origin + '/')) return realFetch(serviceURL + url.slice(origin.length), init);
  return realFetch(input, init);
};
require('@shopify/shopify-api/adapters/node'); // takes globalThis.fetch as it is now
const {shopifyApi, ApiVersion, LogSeverity, RequestedTokenType, Session} = require('@shopify/shopify-api');
const http = require('node:http');

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
let shopify;

const send = (res, status, body) => {
  res.writeHead(status, {'Content-Type': 'application/json'});
  res.end(JSON.stringify(body));
};
const readJSON = (req) => new Promise((resolve, reject) => {
  let data = '';
  req.on('data', (c) => { data += c; });
  req.on('end', () => { try { resolve(JSON.parse(data || '{}')); } catch (e) { reject(e); } });
});
const sessionOf = ({session}) => ({session: session.toObject ? {...session.toObject(), refreshToken: session.refreshToken,
  refreshTokenExpires: session.refreshTokenExpires, expires: session.expires, onlineAccessInfo: session.onlineAccessInfo} : session});

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, `http://${req.headers.host}`);
  try {
    switch (url.pathname) {
      case '/auth':
        await shopify.auth.begin({shop: url.searchParams.get('shop'), callbackPath: '/auth/callback', isOnline: false,
          rawRequest: req, rawResponse: res});
        return;
      case '/auth/callback':
        return send(res, 200, sessionOf(await shopify.auth.callback({expiring: true, rawRequest: req, rawResponse: res})));
      case '/refresh': {
        const body = await readJSON(req);
        return send(res, 200, sessionOf(await shopify.auth.refreshToken({shop: shopDomain, refreshToken: body.refresh_token})));
      }
      case '/exchange': {
        const body = await readJSON(req);
        return send(res, 200, sessionOf(await shopify.auth.tokenExchange({shop: shopDomain, sessionToken: body.session_token,
          requestedTokenType: body.online ? RequestedTokenType.OnlineAccessToken : RequestedTokenType.OfflineAccessToken,
          expiring: Boolean(body.expiring)})));
      }
      case '/migrate': {
        const body = await readJSON(req);
        return send(res, 200, sessionOf(await shopify.auth.migrateToExpiringToken({shop: shopDomain,
          nonExpiringOfflineAccessToken: body.token})));
      }
      case '/shop': {
        const body = await readJSON(req);
        const session = new Session({id: `offline_${shopDomain}`, shop: shopDomain, state: '', isOnline: false, accessToken: body.token});
        const client = new shopify.clients.Graphql({session});
        const answer = await client.request('query shopifyAppShopName { shop { name } }');
        return send(res, 200, {name: answer.data.shop.name});
      }
    }
    send(res, 404, {error: 'NotFound'});
  } catch (err) {
    const status = err && err.response ? err.response.code : undefined;
    if (!res.headersSent) send(res, 500, {error: err && err.name, message: err && err.message, status});
    else res.end();
  }
});

server.listen(0, '127.0.0.1', () => {
  const {port} = server.address();
  shopify = shopifyApi({
    apiKey: env('API_KEY'),
    apiSecretKey: env('API_SECRET'),
    scopes: env('SCOPES').split(','),
    hostName: `127.0.0.1:${port}`,
    hostScheme: 'http',
    apiVersion: ApiVersion.October25,
    isEmbeddedApp: false,
    domainTransformations: [{match: new RegExp(`^${escapeRegExp(shopDomain)}$`), transform: shopDomain}],
    logger: {level: LogSeverity.Error},
  });
  console.log(`listening ${port}`);
});
