// An app built as Shopify's Express app template builds one, on
// @shopify/shopify-app-express (pinned in package.json), unmodified:
// shopifyApp() with the stock in-memory session storage and expiring offline
// tokens, the auth routes, processWebhooks with an APP_UNINSTALLED handler
// (the package adds its own, which deletes the shop's sessions), and an
// authenticated route (validateAuthenticatedSession) that reads the shop
// through its GraphQL client. With EMBEDDED=1 it is the template's embedded
// app on the package's token exchange strategy (isEmbeddedApp,
// future.tokenExchange, online tokens, afterAuth registering the webhooks,
// ensureInstalledOnShop on the page). infra/localrunner's
// TestShopifyAppExpress and TestShopifyAppExpressEmbedded drive it against
// the runner, playing the browser and App Bridge; they preload
// service_clock.cjs, the harness's clock that follows the runner's.
//
// The package calls https://<shop>/admin/...: this script hands it a fetch
// that sends what is addressed to https://SHOP_DOMAIN to the runner, whose
// address the test writes to SERVICE_URL_FILE once it has started (the
// runner's seed needs this app's address first), as a DNS entry and a TLS
// proxy would (docs/oauth.md has that set-up). The shop keeps the seed's
// domain (a domainTransformation onto itself lets the library accept it),
// so the sessions are keyed by the domain webhooks carry. Besides the
// template's routes it answers GET /_test/state, what the test checks: the
// stored sessions, the token requests the package made (grant, requested
// token type, expiring, the runner's status: no token) and the webhooks
// received (?wait=app/uninstalled waits for one). It prints
// "listening <port>".
'use strict';
const fs = require('node:fs');

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const shopDomain = env('SHOP_DOMAIN');
const embedded = process.env.EMBEDDED === '1';
const grants = []; // the token requests the package made, and the runner's status: no token
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = typeof input === 'string' ? input : input.url;
  const origin = `https://${shopDomain}`;
  if (!url.startsWith(origin + '/')) return realFetch(input, init);
  const service = fs.readFileSync(env('SERVICE_URL_FILE'), 'utf8').trim();
  const res = await realFetch(service + url.slice(origin.length), init);
  if (url === `${origin}/admin/oauth/access_token`) {
    const body = JSON.parse(init.body);
    grants.push({grant_type: body.grant_type || 'authorization_code', requested_token_type: body.requested_token_type,
      expiring: body.expiring, status: res.status});
  }
  return res;
};
require('@shopify/shopify-api/adapters/node');
const {shopifyApp} = require('@shopify/shopify-app-express');
const {MemorySessionStorage} = require('@shopify/shopify-app-session-storage-memory');
const {ApiVersion, DeliveryMethod, LogSeverity} = require('@shopify/shopify-api');
const express = require('express');

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const received = [];
const waiting = [];
const sessionStorage = new MemorySessionStorage();

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const {port} = server.address();
  const shopify = shopifyApp({
    api: {
      apiKey: env('API_KEY'),
      apiSecretKey: env('API_SECRET'),
      scopes: env('SCOPES').split(','),
      hostName: `127.0.0.1:${port}`,
      hostScheme: 'http',
      apiVersion: ApiVersion.October25,
      isEmbeddedApp: embedded,
      domainTransformations: [{match: new RegExp(`^${escapeRegExp(shopDomain)}$`), transform: shopDomain}],
      logger: {level: LogSeverity.Error},
    },
    auth: {path: '/api/auth', callbackPath: '/api/auth/callback'},
    webhooks: {path: '/api/webhooks'},
    sessionStorage,
    future: {expiringOfflineAccessTokens: true, tokenExchange: embedded},
    // Embedded, as the template's token exchange set-up: an offline token and
    // the user's online one on the first request with a session token, and
    // the webhooks registered after it (the auth code callback registers them
    // itself).
    ...(embedded && {
      useOnlineTokens: true,
      hooks: {afterAuth: async ({session}) => shopify.registerWebhooks({session})},
    }),
  });

  app.get(shopify.config.auth.path, shopify.auth.begin());
  app.get(shopify.config.auth.callbackPath, shopify.auth.callback(), shopify.redirectToShopifyOrAppRoot());
  app.post(shopify.config.webhooks.path, shopify.processWebhooks({
    webhookHandlers: {
      APP_UNINSTALLED: {
        deliveryMethod: DeliveryMethod.Http,
        callbackUrl: shopify.config.webhooks.path,
        callback: async (topic, shop, body, webhookId) => {
          received.push({topic, shop, webhook_id: webhookId, body: JSON.parse(body)});
          while (waiting.length) waiting.shift()();
        },
      },
    },
  }));

  app.get('/_test/state', async (req, res) => {
    const want = req.query.wait;
    if (want && !received.some((r) => r.topic.toLowerCase().replace('_', '/') === want)) {
      await new Promise((resolve) => {
        waiting.push(resolve);
        setTimeout(resolve, 20000);
      });
      await new Promise((resolve) => setImmediate(resolve)); // the package's own handler runs after ours
    }
    const sessions = await sessionStorage.findSessionsByShop(shopDomain);
    res.json({received, grants, sessions: sessions.map((s) => ({id: s.id, shop: s.shop, online: s.isOnline, access_token: s.accessToken,
      expires: s.expires, refresh_token: s.refreshToken, refresh_token_expires: s.refreshTokenExpires}))});
  });

  app.use('/api/*path', shopify.validateAuthenticatedSession());
  app.get('/api/shop', async (req, res) => {
    const client = new shopify.api.clients.Graphql({session: res.locals.shopify.session});
    const answer = await client.request('query shopName { shop { name myshopifyDomain } }');
    res.json({...answer.data.shop, online: res.locals.shopify.session.isOnline});
  });
  if (embedded) {
    // The template's page: loaded in the admin's iframe (?embedded=1).
    app.use(shopify.cspHeaders());
    app.get('/', shopify.ensureInstalledOnShop(), (req, res) => res.type('text').send(`home of ${req.query.shop}`));
  } else {
    app.get('/', (req, res) => res.type('text').send(`home of ${req.query.shop}`));
  }

  console.log(`listening ${port}`);
});
