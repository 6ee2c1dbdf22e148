// The server under test, run as a child of bench/run.js: serves only the app its argv names, then prints one JSON ready line.
import { createServer } from 'node:http';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';
import express from 'express';
import { toDictionaryProperties } from '../dist/http/dictionary-properties.js';
import { DEFAULT_POSTGRES_URL, DEFAULT_REDIS_CLUSTER_NODES, DEFAULT_REDIS_URL } from './bench-stores.js';

// --app baseline                  a bare Express 5 app: GET /baseline → { ok: true }
// --app oauth --store sqlite|memory [--token-format opaque|jwt] [--jwt-check-revocation] [--count]
//   the package mounted the way example-app mounts it: GET /api/open and GET /api/guarded (requireBearer) with
//   the same handler, then oauth.router (POST /oauth2/token …). --count wraps the store to count its calls and
//   adds GET /__bench/store-calls; it is never used for a timed run.
// --app oauth2-server             @node-oauth/oauth2-server's token endpoint at POST /oauth2/token (bench/anchors.js)
// --app oidc-provider [--token-format opaque|jwt]   oidc-provider mounted in Express, token at POST /oauth2/token
// --app example                   the example app (example-app/dist/app.js createApp) on a temp SQLite store, with
//   a client_credentials integration allowed envelopes:read; GET /api/v1/envelopes needs its token
// Store options of --app oauth (bench/run.js, bench/scale.js):
//   --store postgres|redis      with --pg-url / --redis-url; a fresh schema / key prefix, dropped at stop,
//                               unless --pg-schema / --redis-prefix name one that the caller owns (seeded data)
//   --store redis-cluster       the Redis store on a cluster, --redis-cluster-nodes host:port,… (default: the test
//                               cluster's, OAUTH_TEST_REDIS_CLUSTER_NODES); --redis-prefix as for redis
//   --sqlite-file PATH          use this file (the caller's, kept) instead of a temp file
//   --sweep-seconds N           the store's sweepIntervalSeconds (default: the store's default)
//   --jwt-check-revocation      jwt: { checkRevocation: true }: requireBearer also requires a JWT's record, through
//                               the bearer cache (bench/revocation-under-load.js --jwt)
//   --issuer URL                the issuer (default: this server's own address), so that a second instance accepts
//                               the JWTs the first signed: their iss and aud are the issuer (bench/revocation-under-load.js)
//   --bearer-cache off          requireBearer looks every token up in the store (bearerCache: false)
//   --codes N                   also registers an authorization_code integration and mints N codes for it
//                               before the ready line (bench/mint-codes.js); the ready line says how to name them
//   --router-first              mounts oauth.router before the /api routes, as the README's example does, so that
//                               each API request passes through it first
//   --deferred-route            also GET /api/deferred: requireBearer after a middleware that defers with setImmediate
//                               (as express-session's MemoryStore does), for bench/revocation-under-load.js --deferred
//   --code-users U              the codes belong to U users (bench-user-0 … U−1), code i to user i % U; also adds
//                               POST /__bench/withdraw-consent?user=ID (oauth.withdrawConsent, as the consents page
//                               calls it) after the router, for bench/revocation-under-load.js, and
//                               POST /__bench/revoke-user-tokens?user=ID (oauth.admin.revokeTokens({ userId }): the
//                               user's tokens at every integration, as an admin page calls it)
//   --integrations N            also registers N client_credentials integrations bench-int-0 … N−1 before the ready
//                               line (bench/bench-integrations.js names their secrets), for bench/integrations.js
//   --trust-proxy               Express's `trust proxy` on, so that X-Forwarded-For names the source the rate limits
//                               count (bench/soak.js: bad credentials from many addresses)
//   --rate-limits in-process    the store's rateLimits tier left out: the limits count in this process, in the counters
//                               the router makes itself for a store without one (createMemoryRateLimits(), no sweep
//                               timer), made here instead so that bench/soak.js can sample how many keys they hold
//   --rate-limit-window-seconds N   windowSeconds of both clientAuthRateLimit and loginRateLimit (default theirs,
//                               300 and 900 s), so that a soak outlasts several windows
//   --port N                    listen on N (default 0: any free port)
//   --user NAME:PASSWORD        the one account verifyCredentials accepts (bench/soak.js signs in and leaves the
//                               consent page unanswered); without it every sign-in fails
const { values: args } = parseArgs({
  options: {
    app: { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    'token-format': { type: 'string', default: 'opaque' },
    'jwt-check-revocation': { type: 'boolean', default: false },
    issuer: { type: 'string' },
    count: { type: 'boolean', default: false },
    'sqlite-file': { type: 'string' },
    'pg-url': { type: 'string', default: DEFAULT_POSTGRES_URL },
    'pg-schema': { type: 'string' },
    'redis-url': { type: 'string', default: DEFAULT_REDIS_URL },
    'redis-prefix': { type: 'string' },
    'redis-cluster-nodes': { type: 'string', default: DEFAULT_REDIS_CLUSTER_NODES },
    'rate-limits': { type: 'string', default: 'store' },
    'rate-limit-window-seconds': { type: 'string' },
    'sweep-seconds': { type: 'string' },
    'bearer-cache': { type: 'string', default: 'on' },
    codes: { type: 'string', default: '0' },
    'code-users': { type: 'string', default: '1' },
    'deferred-route': { type: 'boolean', default: false },
    'router-first': { type: 'boolean', default: false },
    integrations: { type: 'string', default: '0' },
    'trust-proxy': { type: 'boolean', default: false },
    user: { type: 'string' },
    port: { type: 'string', default: '0' },
  },
});
const sweep = args['sweep-seconds'] === undefined ? {} : { sweepIntervalSeconds: Number(args['sweep-seconds']) };

const ok = (_req, res) => {
  res.json({ ok: true });
};

const app = express();
if (args['trust-proxy']) app.set('trust proxy', true);
const server = createServer(app);
const cleanups = [];
let stopping = false;
/** What bench/soak.js samples of the rate-limit counters kept in this process: their keys, or the memory store's records. */
let counterSizes = () => ({});

async function stop() {
  if (stopping) return;
  stopping = true;
  server.closeAllConnections();
  server.close();
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // best effort: the process exits next either way
    }
  }
  // process.exit (not a signal death) so that --cpu-prof gets to write its profile.
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The runner asks over IPC (never over HTTP, so no route is added) for this process's CPU time, to price a request.
process.on('message', (message) => {
  if (message === 'cpu-usage') process.send({ cpuUsage: process.cpuUsage() });
  else if (message === 'memory-usage') {
    globalThis.gc?.(); // started with --expose-gc (bench/integrations.js): what is live, not what awaits collection
    process.send({ memoryUsage: process.memoryUsage() });
  } else if (message === 'soak-sample') process.send({ soakSample: soakSample() });
  else if (message?.heapSnapshot) process.send({ heapSnapshotWritten: writeHeapSnapshot(message.heapSnapshot) });
});

/** What bench/soak.js samples: the heap after a full GC, the active resources by type and the open descriptors. */
function soakSample() {
  globalThis.gc?.();
  globalThis.gc?.();
  const resources = {};
  for (const type of process.getActiveResourcesInfo()) resources[type] = (resources[type] ?? 0) + 1;
  return { ...process.memoryUsage(), gc: typeof globalThis.gc === 'function', resources, fds: readdirSync('/proc/self/fd').length, ...counterSizes() };
}
process.on('disconnect', stop); // the runner is gone: do not outlive it

/** Puts the request and the response in dictionary mode, as the package's own routes and requireBearer do. */
function dictionaryMode(req, res, next) {
  toDictionaryProperties(req);
  toDictionaryProperties(res);
  next();
}

/** `store` with `rateLimits` in place of its own tier; every other tier (and close, sweepExpired…) still the store's. */
function withRateLimits(store, rateLimits) {
  return new Proxy(store, { get: (target, name) => (name === 'rateLimits' ? rateLimits : Reflect.get(target, name, target)) });
}

async function buildOAuthApp(port) {
  const { createOAuthRouter, registerClient } = await import('express-oauth-router');
  let store;
  let sqliteFile = null;
  if (args.store === 'sqlite') {
    const { createSqliteStore } = await import('express-oauth-router/stores/sqlite');
    if (args['sqlite-file']) sqliteFile = args['sqlite-file'];
    else {
      const dir = mkdtempSync(join(tmpdir(), 'oauth-bench-'));
      sqliteFile = join(dir, 'oauth.sqlite');
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    }
    store = createSqliteStore({ filename: sqliteFile, ...sweep });
    cleanups.push(() => store.close?.());
  } else if (args.store === 'memory') {
    const { createMemoryStore } = await import('express-oauth-router/stores/memory');
    store = createMemoryStore();
    cleanups.push(() => store.close?.());
    // Its rate-limit windows are not counted apart: every record (codes, tokens, tombstones, windows), ended ones until swept.
    const memory = store;
    counterSizes = () => ({ memoryStoreRecords: memory.recordCount() });
  } else if (args.store === 'postgres') {
    const { openPostgresStore } = await import('./bench-stores.js');
    store = await openPostgresStore(args['pg-url'], args['pg-schema'], sweep, cleanups);
  } else if (args.store === 'redis') {
    const { openRedisStore } = await import('./bench-stores.js');
    store = await openRedisStore(args['redis-url'], args['redis-prefix'], cleanups);
  } else if (args.store === 'redis-cluster') {
    const { openRedisClusterStore } = await import('./bench-stores.js');
    store = await openRedisClusterStore(args['redis-cluster-nodes'], args['redis-prefix'], cleanups);
  } else {
    throw new Error(`unknown --store ${args.store}`);
  }
  if (args['rate-limits'] === 'in-process') {
    // router.ts's own fallback, `createMemoryRateLimits().rateLimits`, the same module the package runs (dist).
    const { createMemoryRateLimits } = await import('../dist/stores/memory/rate-limits.js');
    const counters = createMemoryRateLimits();
    store = withRateLimits(store, counters.rateLimits);
    counterSizes = () => ({ inProcessRateLimitKeys: counters.size() });
  } else if (args['rate-limits'] !== 'store') throw new Error(`unknown --rate-limits ${args['rate-limits']}`);
  let counter = null;
  if (args.count) {
    const { countStoreCalls } = await import('./counting-store.js');
    counter = countStoreCalls(store);
    store = counter.store;
  }

  const authUrl = args.issuer ?? `http://127.0.0.1:${port}`;
  const options = {
    issuer: authUrl,
    legacy: { issuer: `${authUrl}/legacy` },
    session: { secret: 'bench-session-secret-not-used-by-these-routes' },
  };
  if (args['token-format'] !== 'opaque') options.accessTokenFormat = args['token-format'];
  if (args['jwt-check-revocation']) options.jwt = { checkRevocation: true };
  if (args['bearer-cache'] === 'off') options.bearerCache = false;
  if (args['rate-limit-window-seconds'] !== undefined) {
    const windowSeconds = Number(args['rate-limit-window-seconds']);
    options.clientAuthRateLimit = { windowSeconds };
    options.loginRateLimit = { windowSeconds };
  }
  // --user NAME:PASSWORD (bench/soak.js) is the one account that signs in; without it nobody does.
  const [userName, userPassword] = args.user ? [args.user.slice(0, args.user.indexOf(':')), args.user.slice(args.user.indexOf(':') + 1)] : [];
  const verifyCredentials = async (name, password) => (args.user && name === userName && password === userPassword ? { id: name, displayName: name } : null);
  const oauth = createOAuthRouter(store, { verifyCredentials }, options);
  const { client, clientSecret } = await registerClient(store, {
    name: 'bench', flow: 'client_credentials', allowedScopes: ['bench:read'],
  });

  const integrations = Number(args.integrations);
  if (integrations > 0) {
    const { seedIntegrations } = await import('./bench-integrations.js');
    await seedIntegrations(store, integrations);
  }

  let codes = {};
  const codeCount = Number(args.codes);
  if (codeCount > 0) {
    const { mintCodes } = await import('./mint-codes.js');
    codes = await mintCodes({ store, sqliteFile, issuer: authUrl, count: codeCount, users: Number(args['code-users']) });
  }

  // The README's order puts the router before the API, so every API request passes through it first.
  if (args['router-first']) app.use(oauth.router);
  app.get('/api/open', ok);
  // The unguarded route with the request and response in V8's dictionary mode, as requireBearer leaves them: against
  // it, the guarded route shows the check's own cost (BENCHMARKS.md, seventeenth pass).
  app.get('/api/open-dictionary', dictionaryMode, ok);
  app.get('/api/guarded', oauth.requireBearer(), ok);
  if (args['deferred-route']) app.get('/api/deferred', (_req, _res, next) => { setImmediate(next); }, oauth.requireBearer(), ok);
  if (counter) {
    app.get('/__bench/store-calls', (_req, res) => {
      res.json(counter.take());
    });
  }
  if (!args['router-first']) app.use(oauth.router);
  // After the router, so that no timed scenario's request passes one more layer before it.
  if (codes.codeUsers > 1) {
    app.post('/__bench/withdraw-consent', async (req, res, next) => {
      try {
        await oauth.withdrawConsent(String(req.query.user), codes.codeClientId);
        res.json({ withdrawn: true });
      } catch (error) {
        next(error);
      }
    });
    app.post('/__bench/revoke-user-tokens', async (req, res, next) => {
      try {
        res.json(await oauth.admin.revokeTokens({ userId: String(req.query.user) }));
      } catch (error) {
        next(error);
      }
    });
  }
  counter?.take(); // registration is not a request
  return { clientId: client.clientId, clientSecret, ...codes };
}

// The example app as server.ts builds it (SQLite store from a URL, demo user), served through this file's server
// so that the runner can ask its CPU time; the app's own `listen` and banner are all that is left out.
async function buildExampleApp(port) {
  const { createStoreFromUrl, registerClient } = await import('express-oauth-router');
  const { createApp } = await import('../example-app/dist/app.js');
  const { createDemoUserAuth } = await import('../example-app/dist/users.js');
  const dir = mkdtempSync(join(tmpdir(), 'oauth-bench-example-'));
  const store = await createStoreFromUrl(`sqlite:${join(dir, 'oauth.sqlite')}`);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close?.());
  const { app: example } = createApp({
    store,
    userAuth: await createDemoUserAuth({ username: 'demo', password: 'bench-demo-password' }),
    authUrl: `http://127.0.0.1:${port}`,
    sessionSecret: 'bench-session-secret-not-used-by-these-routes',
  });
  const { client, clientSecret } = await registerClient(store, {
    name: 'bench', flow: 'client_credentials', allowedScopes: ['envelopes:read'],
  });
  // The example app answers every request itself, not mounted under this file's app (a sub-app costs a layer).
  server.removeAllListeners('request');
  server.on('request', example);
  return { clientId: client.clientId, clientSecret };
}

try {
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(args.port), '127.0.0.1', resolve);
  });
  const { port } = server.address();
  let extra = {};
  if (args.app === 'baseline') app.get('/baseline', ok);
  else if (args.app === 'oauth') extra = await buildOAuthApp(port);
  else if (args.app === 'oauth2-server') extra = await (await import('./anchors.js')).mountOAuth2Server(app);
  else if (args.app === 'oidc-provider') extra = await (await import('./anchors.js')).mountOidcProvider(app, `http://127.0.0.1:${port}`, args['token-format']);
  else if (args.app === 'example') extra = await buildExampleApp(port);
  else throw new Error(`unknown --app ${args.app}`);
  process.stdout.write(`${JSON.stringify({ ready: true, port, pid: process.pid, ...extra })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ ready: false, error: String(error?.message ?? error) })}\n`);
  await stop();
}
