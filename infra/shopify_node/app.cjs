// A minimal app built on Shopify's official Node library (@shopify/shopify-api,
// pinned in package.json), unmodified: GET /auth starts the install with
// shopify.auth.begin(), GET /auth/callback completes it with
// shopify.auth.callback() (which checks the hmac, the timestamp and the state
// cookie, and exchanges the code), then makes REST calls with the new token
// and shows what it got. infra/localrunner's TestShopifyNodeAuth drives it in
// a browser against the local runner.
//
// The runner is reached for the seed's shop domain through the library's
// domainTransformations (SHOP_DOMAIN -> SERVICE_HOST, the TLS proxy in front
// of the runner), so nothing in the library changes. The library calls
// https://<host>/ with no port, and takes a transformed host only when it
// looks like a shop's domain under a domain its transformations name: the
// proxy listens on port 443 of a loopback address, and a second
// transformation (the address onto itself) names it. The app serves HTTPS
// (its cookies are Secure), with TLS_CERT and TLS_KEY; NODE_EXTRA_CA_CERTS
// makes Node trust the proxy's certificate. It prints "listening <port>".
'use strict';
require('@shopify/shopify-api/adapters/node');
const {shopifyApi, ApiVersion, LogSeverity} = require('@shopify/shopify-api');
const crypto = require('node:crypto');
const fs = require('node:fs');
const https = require('node:https');

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const shopDomain = env('SHOP_DOMAIN');
const serviceHost = env('SERVICE_HOST');
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const escapeHTML = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

let shopify;
const server = https.createServer({cert: fs.readFileSync(env('TLS_CERT')), key: fs.readFileSync(env('TLS_KEY'))}, async (req, res) => {
  const url = new URL(req.url, `https://${req.headers.host}`);
  try {
    if (url.pathname === '/auth') {
      await shopify.auth.begin({
        shop: url.searchParams.get('shop'), // begin sanitizes (and transforms) it
        callbackPath: '/auth/callback',
        isOnline: url.searchParams.get('online') === '1',
        rawRequest: req,
        rawResponse: res,
      });
      return;
    }
    if (url.pathname === '/auth/callback') {
      const {session} = await shopify.auth.callback({rawRequest: req, rawResponse: res});
      const client = new shopify.clients.Rest({session});
      const pages = await client.get({path: 'pages'});
      await client.post({path: 'script_tags', data: {script_tag: {event: 'onload', src: `https://cdn.example.com/${session.id}.js`}}});
      const tags = await client.get({path: 'script_tags'});
      const scopes = await client.get({path: 'oauth/access_scopes'});
      const result = {
        shop: session.shop,
        scope: session.scope,
        online: session.isOnline,
        expires: session.expires ? session.expires.toISOString() : null,
        associated_user_email: session.onlineAccessInfo ? session.onlineAccessInfo.associated_user.email : null,
        token_prefix: session.accessToken.slice(0, 6),
        token_sha256: crypto.createHash('sha256').update(session.accessToken).digest('hex'),
        pages: pages.body.pages.length,
        script_tags: tags.body.script_tags.length,
        access_scopes: scopes.body.access_scopes.map((s) => s.handle),
      };
      res.writeHead(200, {'Content-Type': 'text/html; charset=utf-8'});
      res.end(`<!DOCTYPE html><title>Installed</title><pre id="result">${escapeHTML(JSON.stringify(result))}</pre>`);
      return;
    }
    res.writeHead(404).end();
  } catch (err) {
    if (!res.headersSent) res.writeHead(500, {'Content-Type': 'text/html; charset=utf-8'});
    res.end(`<!DOCTYPE html><title>Failed</title><pre id="error">${escapeHTML(err && err.name)}: ${escapeHTML(err && err.message)}</pre>`);
  }
});

server.listen(0, '127.0.0.1', () => {
  const {port} = server.address();
  shopify = shopifyApi({
    apiKey: env('API_KEY'),
    apiSecretKey: env('API_SECRET'),
    scopes: env('SCOPES').split(','),
    hostName: `127.0.0.1:${port}`,
    hostScheme: 'https',
    apiVersion: ApiVersion.October25,
    isEmbeddedApp: false,
    // The seed's shop domain is served by the runner behind SERVICE_HOST.
    domainTransformations: [
      {match: new RegExp(`^${escapeRegExp(shopDomain)}$`), transform: serviceHost},
      {match: new RegExp(`^${escapeRegExp(serviceHost)}$`), transform: serviceHost},
    ],
    logger: {level: LogSeverity.Error},
  });
  console.log(`listening ${port}`);
});
