// Source files of the hosts that install the packed package: what an Express app written by someone else looks like.

/** The one user of every host's login page (the same as test/helpers/app.ts, so fetch-browser can sign in). */
const USER_CHECK = `username === 'alice' && password === 'correct horse battery staple'`;
const SESSION_SECRET = `'packed-host-session-secret-0123456789'`;

/**
 * An Express app in plain JavaScript, ESM (`import`) or CommonJS (`require`): the router on the memory store,
 * one integration per flow registered with `registerClient`, a `requireBearer` route, and a `/drivers` route
 * that reports what opening each driver-backed store says. It listens on a random port and prints one JSON
 * line: its issuer and the integrations' credentials.
 */
function javascriptHost(format: 'esm' | 'cjs'): string {
  const imports =
    format === 'esm'
      ? `import { createServer } from 'node:http';
import express from 'express';
import { createOAuthRouter, createStoreFromUrl, registerClient } from 'express-oauth-router';
import { createMemoryStore } from 'express-oauth-router/stores/memory';
import { createSqliteStore } from 'express-oauth-router/stores/sqlite';
import { createPostgresStore } from 'express-oauth-router/stores/postgres';
import { createRedisStore } from 'express-oauth-router/stores/redis';`
      : `const { createServer } = require('node:http');
const express = require('express');
const { createOAuthRouter, createStoreFromUrl, registerClient } = require('express-oauth-router');
const { createMemoryStore } = require('express-oauth-router/stores/memory');
const { createSqliteStore } = require('express-oauth-router/stores/sqlite');
const { createPostgresStore } = require('express-oauth-router/stores/postgres');
const { createRedisStore } = require('express-oauth-router/stores/redis');`;
  return `${imports}

const user = { id: 'user-alice', displayName: 'Alice Example' };
const server = createServer();
server.listen(0, '127.0.0.1', async () => {
  const issuer = 'http://127.0.0.1:' + server.address().port;
  const store = createMemoryStore();
  const oauth = createOAuthRouter(store, {
    async verifyCredentials(username, password) { return ${USER_CHECK} ? user : null; },
  }, { issuer, session: { secret: ${SESSION_SECRET} } });
  const app = express();
  app.use(oauth.router);
  app.get('/api/me', oauth.requireBearer(), (req, res) => {
    res.json({ clientId: req.auth.clientId, userId: req.auth.userId });
  });
  app.get('/drivers', async (_req, res) => {
    const said = async (open) => { try { await open(); return 'opened'; } catch (e) { return e.message; } };
    res.json({
      sqlite: await said(() => createSqliteStore({ filename: './data/oauth.sqlite' })),
      sqliteUrl: await said(() => createStoreFromUrl('sqlite:./data/oauth.sqlite')),
      postgres: await said(() => createPostgresStore({ connectionString: 'postgres://127.0.0.1:9/none' })),
      redis: await said(() => createRedisStore({ url: 'redis://127.0.0.1:9' })),
    });
  });
  server.on('request', app);
  const machine = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
  const web = await registerClient(store, {
    name: 'Acme CRM', flow: 'authorization_code', redirectUris: ['https://client.example/callback'],
  });
  console.log(JSON.stringify({
    issuer,
    machine: { clientId: machine.client.clientId, clientSecret: machine.clientSecret },
    web: { clientId: web.client.clientId, clientSecret: web.clientSecret },
  }));
});
`;
}

/** The ESM JavaScript host. */
export const ESM_JS_HOST = javascriptHost('esm');

/** The CommonJS JavaScript host (`require()` of the ESM package, Node ≥ 20.19). */
export const CJS_JS_HOST = javascriptHost('cjs');

/**
 * The same app in strict TypeScript, type-checked against the published `.d.ts` (with `@types/express` 4 or
 * 5, ESM or CommonJS) and, in the Express 5 host, compiled and run. It names a type of every subpath but the
 * Redis store's, whose types come from the `redis` package a Redis host installs (see REDIS_TYPES).
 */
export const TS_HOST = `import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import {
  createOAuthRouter, registerClient, type AuthenticatedUser, type OAuthRouterOptions, type SessionStoreLike, type Store,
} from 'express-oauth-router';
import { createMemoryStore } from 'express-oauth-router/stores/memory';
import type { SqliteDatabase, SqliteStoreOptions } from 'express-oauth-router/stores/sqlite';
import type { PostgresPool, PostgresStoreOptions } from 'express-oauth-router/stores/postgres';
import type { ConformanceReport } from 'express-oauth-router/testing/check';
import type { runStoreConformance } from 'express-oauth-router/testing';

export type SubpathTypes = [SqliteDatabase, SqliteStoreOptions, PostgresPool, PostgresStoreOptions, ConformanceReport,
  typeof runStoreConformance, SessionStoreLike];

const user: AuthenticatedUser = { id: 'user-alice', displayName: 'Alice Example' };
const server = createServer();
server.listen(0, '127.0.0.1', async () => {
  const issuer = 'http://127.0.0.1:' + (server.address() as AddressInfo).port;
  const store: Store = createMemoryStore();
  const options: OAuthRouterOptions = { issuer, session: { secret: ${SESSION_SECRET} } };
  const oauth = createOAuthRouter(store, {
    async verifyCredentials(username: string, password: string) { return ${USER_CHECK} ? user : null; },
  }, options);
  const app = express();
  app.use(oauth.router);
  app.get('/api/me', oauth.requireBearer(), (req: Request, res: Response) => {
    const auth = req.auth!;
    res.json({ clientId: auth.clientId, userId: auth.userId });
  });
  server.on('request', app);
  const machine = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
  const web = await registerClient(store, {
    name: 'Acme CRM', flow: 'authorization_code', redirectUris: ['https://client.example/callback'],
  });
  console.log(JSON.stringify({
    issuer,
    machine: { clientId: machine.client.clientId, clientSecret: machine.clientSecret },
    web: { clientId: web.client.clientId, clientSecret: web.clientSecret },
  }));
});
`;

/** A file of a Redis host: the Redis store's types, which name the `redis` package's client type. */
export const REDIS_TYPES = `import type { RedisStoreOptions, ResilientRedisConnection } from 'express-oauth-router/stores/redis';

export type RedisTypes = [RedisStoreOptions, ResilientRedisConnection['client']];
`;

/**
 * A file that only names the package's types, no default import of its own: so a host compiled without
 * `esModuleInterop` checks the package's `.d.ts` alone (a default import of a Node module in them fails there).
 */
export const TYPES_ONLY = `import type { OAuthRouter, Store, UserAuth } from 'express-oauth-router';
import type { createMemoryStore } from 'express-oauth-router/stores/memory';
import type { createSqliteStore } from 'express-oauth-router/stores/sqlite';

export type Named = [OAuthRouter, Store, UserAuth, typeof createMemoryStore, typeof createSqliteStore];
`;

/**
 * A host library that exports what it builds with the package, types inferred (`declaration: true`, as a workspace
 * package of a monorepo emits): each inferred type must be one the package exports, or tsc cannot name it (TS2742,
 * TS4023) without a path into the package's `dist`, which its exports map does not open.
 */
export const DECLARATIONS = `import {
  createOAuthRouter, MemorySessionStore, OAuthEvents, withdrawConsent, type OAuthRouterOptions,
} from 'express-oauth-router';
import { createMemoryStore } from 'express-oauth-router/stores/memory';

export const store = createMemoryStore();
export const events = new OAuthEvents();
export const sessions = new MemorySessionStore();
export const oauth = createOAuthRouter(store, { verifyCredentials: async () => null }, { issuer: 'https://auth.example.com', events });
export const { admin, health, router, errorHandler } = oauth;
export const requireRead = oauth.requireBearer({ scope: 'envelopes:read' });
// An option, a function's reporting argument and a method, their types inferred from where the package names them.
export const bearerCache = ({} as OAuthRouterOptions).bearerCache;
export const [, , , audit] = [] as unknown as Parameters<typeof withdrawConsent>;
export const reportErrorsTo = events.reportErrorsTo.bind(events);
// The resolved options' fields, the keys they hold and a session store's reader, as a host's helpers return them.
export const { session: sessionSettings, loginRateLimit, clientAuthRateLimit, jwt } = oauth.options;
export const publishedKeys = () => jwt.signingKeys.map((key) => key.publicJwk);
export const readSession = sessions.get.bind(sessions);
`;

/** The checks beyond `strict` that the strictest hosts turn on, and this package's own tsconfig does. */
export const STRICTEST = { exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true } as const;

/**
 * tsconfig of a host: strict (or stricter, with STRICTEST), and the package's `.d.ts` checked like the host's own code;
 * `emit` compiles to `dist`, or only declarations to `types` (`'declarations'`), or nothing (`false`).
 */
export function hostTsconfig(
  module: 'nodenext' | 'commonjs', files: readonly string[], emit: boolean | 'declarations', esModuleInterop = true,
  stricter: Partial<typeof STRICTEST> = {},
): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'es2022',
      module,
      ...(module === 'commonjs' ? { moduleResolution: 'node10' } : {}),
      strict: true,
      ...stricter,
      skipLibCheck: false,
      esModuleInterop,
      ...(emit === 'declarations' ? { declaration: true, emitDeclarationOnly: true, outDir: 'types' } : emit ? { outDir: 'dist' } : { noEmit: true }),
    },
    files,
  }, null, 2);
}

/** An imported integration's bcrypt hash (cost 4) of `legacy-secret-0123456789`, as `oauth-admin clients import` takes it. */
export const BCRYPT_HASH = '$2b$04$vqGwmXiOSMq.wvUc4SUBQOy51ax5lar7EBW6Qv2/YpWymAtLtu7ia';

/**
 * What the package loads at run time rather than by an import a bundler follows (prom-client, bcryptjs in its
 * worker), used once each: prints one JSON line of what each said. No top-level await, so a bundler can
 * emit it as CommonJS.
 */
export const RUNTIME_LOADS = `import { verifyClientSecret } from 'express-oauth-router';
import { createOAuthMetrics } from 'express-oauth-router/metrics';

const said = async (use) => { try { return await use(); } catch (error) { return error.message; } };
(async () => {
  console.log(JSON.stringify({
    metrics: await said(() => { createOAuthMetrics().close(); return 'created'; }),
    bcrypt: await said(() => verifyClientSecret('${BCRYPT_HASH}', 'legacy-secret-0123456789')),
  }));
})();
`;

/** Opens the SQLite store in ./data and prints what opening it threw. */
export const OPEN_SQLITE_STORE = `import { createSqliteStore } from 'express-oauth-router/stores/sqlite';
try {
  createSqliteStore({ filename: './data/oauth.sqlite' });
  console.log('opened');
} catch (error) {
  console.log(error.message);
}
`;

/**
 * The router's answers at the edges of a host, in plain JavaScript (ESM or CommonJS), each scenario an app on a port of
 * its own, so its once-only warnings and its mounting are its own. Prints one JSON line: each scenario's issuer (by
 * name), the root scenario's browser integration, and whether metrics could be made (prom-client installed).
 * - `root`: Express's defaults (X-Powered-By on), express.json() and express.urlencoded() before the router (JWT
 *   access tokens, a legacy issuer on a path), metrics.handler at /metrics, a host route, oauth.errorHandler.
 * - `sub`: the router and express.json() in a sub-app, oauth.errorHandler in the parent.
 * - `prefixed`: the router mounted under /auth (what the README says not to do), oauth.errorHandler at the root.
 * - `trust-*`: the trust proxy settings the router warns about (or not), each app's log at GET /logged.
 */
function edgesHost(format: 'esm' | 'cjs'): string {
  const imports =
    format === 'esm'
      ? `import { createServer } from 'node:http';
import express from 'express';
import { createOAuthRouter, registerClient } from 'express-oauth-router';
import { createMemoryStore } from 'express-oauth-router/stores/memory';
import { createOAuthMetrics } from 'express-oauth-router/metrics';`
      : `const { createServer } = require('node:http');
const express = require('express');
const { createOAuthRouter, registerClient } = require('express-oauth-router');
const { createMemoryStore } = require('express-oauth-router/stores/memory');
const { createOAuthMetrics } = require('express-oauth-router/metrics');`;
  return `${imports}

const user = { id: 'user-alice', displayName: 'Alice Example' };
const userAuth = { async verifyCredentials(username, password) { return ${USER_CHECK} ? user : null; } };

/** Listens on a random port, then builds the app for its issuer's origin. */
function serve(build) {
  const server = createServer();
  return new Promise((resolve) => server.listen(0, '127.0.0.1', async () => {
    const origin = 'http://127.0.0.1:' + server.address().port;
    server.on('request', await build(origin));
    resolve(origin);
  }));
}

function router(store, issuer, extra = {}) {
  const logged = [];
  const oauth = createOAuthRouter(store, userAuth, {
    issuer, session: { secret: ${SESSION_SECRET} }, logger: { warn: (m) => logged.push(m), error: (m) => logged.push(m) }, ...extra,
  });
  return { oauth, logged };
}

const say = (logged) => (_req, res) => { res.json(logged); };

// No top-level await, so the same text runs as CommonJS (README.md: samples go in an async function there).
async function main() {
  let web;
  let metricsMade = false;
  const issuers = {
    root: await serve(async (origin) => {
      const store = createMemoryStore();
      const { oauth, logged } = router(store, origin, { accessTokenFormat: 'jwt', legacy: { issuer: origin + '/legacy' } });
      const app = express();
      app.use(express.json());
      app.use(express.urlencoded({ extended: false }));
      app.use(oauth.router);
      try {
        const metrics = createOAuthMetrics().observe(oauth);
        app.get('/metrics', metrics.handler);
        metricsMade = true;
      } catch {}
      app.put('/api/envelopes', (_req, res) => { res.json({ ok: true }); });
      app.get('/logged', say(logged));
      app.use(oauth.errorHandler);
      const registered = await registerClient(store, {
        name: 'Acme CRM', flow: 'authorization_code', redirectUris: ['https://client.example/callback'],
      });
      web = { clientId: registered.client.clientId, clientSecret: registered.clientSecret };
      return app;
    }),
    sub: await serve((origin) => {
      const { oauth } = router(createMemoryStore(), origin, { accessTokenFormat: 'jwt' });
      const parent = express();
      const sub = express();
      sub.use(express.json());
      sub.use(oauth.router);
      parent.use(sub);
      parent.use(oauth.errorHandler);
      return parent;
    }),
    prefixed: await serve((origin) => {
      const { oauth, logged } = router(createMemoryStore(), origin, { accessTokenFormat: 'jwt' });
      const app = express();
      app.use(express.json());
      app.use('/auth', oauth.router);
      app.get('/logged', say(logged));
      app.use(oauth.errorHandler);
      return app;
    }),
  };
  // Each trust proxy setting (undefined: Express's default) in the app, or in a sub-app under a parent trusting 1 hop.
  for (const [name, setting, inSub] of [['trust-unset'], ['trust-list', '10.0.0.0/8'], ['trust-true', true], ['trust-hop', 1],
    ['trust-sub-true', true, true]]) {
    issuers[name] = await serve((origin) => {
      const { oauth, logged } = router(createMemoryStore(), origin);
      const app = express();
      let inner = app;
      if (inSub) {
        app.set('trust proxy', 1);
        inner = express();
        app.use(inner);
      }
      if (setting !== undefined) inner.set('trust proxy', setting);
      inner.use(oauth.router);
      app.get('/logged', say(logged));
      return app;
    });
  }
  console.log(JSON.stringify({ issuers, web, metricsMade }));
}
main();
`;
}

/** The edges host in ESM JavaScript. */
export const ESM_EDGES_HOST = edgesHost('esm');

/** The edges host in CommonJS. */
export const CJS_EDGES_HOST = edgesHost('cjs');
