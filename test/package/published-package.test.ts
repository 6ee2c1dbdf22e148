// The package as a host gets it: packed once, installed into fresh Express 4, Express 5 and CommonJS hosts.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browseAuthorization } from '../helpers/fetch-browser.js';
import { authorizeQuery, hiddenField, signInAndGetConsent } from '../helpers/browser-flow.js';
import {
  CJS_EDGES_HOST, CJS_JS_HOST, DECLARATIONS, ESM_EDGES_HOST, ESM_JS_HOST, OPEN_SQLITE_STORE, REDIS_TYPES, STRICTEST, TS_HOST, TYPES_ONLY,
  hostTsconfig,
} from './host-sources.js';
import {
  ROOT, createHost, createStrictLayoutHost, packPackage, run, startHost, startListening, typeCheck, type CommandResult, type HostClient,
  type RunningHost,
} from './packed-host.js';
import { tokenRequest } from './host-token-request.js';
import { hostRequest } from '../helpers/host-request.js';
import { CHECKED_AGAINST_THE_PACKAGE, LISTINGS, listedRecordChecks, README_GLUE, readmeBlocks, splitDiagnostics } from './readme-blocks.js';

const REDIRECT_URI = 'https://client.example/callback';
const DRIVERS_MISSING = {
  sqlite: 'The SQLite store needs better-sqlite3: npm install better-sqlite3@12',
  sqliteUrl: 'The SQLite store needs better-sqlite3: npm install better-sqlite3@12',
  postgres: 'The PostgreSQL store needs pg: npm install pg@8',
  redis: 'The Redis store needs redis: npm install redis@5',
};

const DRIVER_NOT_BUILT = "The SQLite store's better-sqlite3 is installed but not built (its install script did not run): "
  + 'npm install-scripts approve better-sqlite3 && npm rebuild better-sqlite3';

// Read when the suite is collected, so each block is a test of its own (or a visible skip).
const README_BLOCKS = readmeBlocks();

let work: string;
let tarball: string;
const hostDir = (name: string): string => join(work, name);
// Type-checks start as soon as their host is installed and run side by side; each test awaits its own.
const checks: Record<string, Promise<CommandResult>> = {};

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  work = await mkdtemp(join(tmpdir(), 'eor-packed-'));
  tarball = await packPackage(work);
  await Promise.all([
    // (a) Express 4, ESM JavaScript, no store driver (prom-client, for metrics.handler at the edges); its TypeScript
    // twin checks the types against @types/express 4, emitting declarations of a host library's exports.
    createHost(tarball, {
      dir: hostDir('express4-esm'), type: 'module', installs: ['express@4', '@types/express@4', 'prom-client@15'],
      files: {
        'server.mjs': ESM_JS_HOST, 'edges.mjs': ESM_EDGES_HOST, 'server.ts': TS_HOST, 'declarations.ts': DECLARATIONS,
        'tsconfig.json': hostTsconfig('nodenext', ['server.ts', 'declarations.ts'], 'declarations'),
      },
    }).then(async () => {
      checks['express4-esm'] = typeCheck(hostDir('express4-esm'));
      // (a') The same TypeScript in a pnpm-like layout (no hoisting): from the package, express-serve-static-core
      // (a dependency of @types/express, not of the package or the host) does not resolve.
      await createStrictLayoutHost(hostDir('express4-esm'), {
        dir: hostDir('strict-layout'), type: 'module',
        files: { 'server.ts': TS_HOST, 'tsconfig.json': hostTsconfig('nodenext', ['server.ts'], false) },
      }, ['express', 'commander', 'express-rate-limit', '@types/express', '@types/node']);
      checks['strict-layout'] = typeCheck(hostDir('strict-layout'));
    }),
    // (b) Express 5, the strictest TypeScript, compiled by the host; it uses the Redis store's types, so it installs
    // redis. The same compile checks README.md's ```ts blocks, each its own module, with the reader's glue; they
    // import prom-client, connect-redis (whose types import express-session's) and pino, so it installs them too.
    createHost(tarball, {
      dir: hostDir('express5-ts'), type: 'module',
      installs: [
        'express@5', '@types/express@5', 'redis@5', 'prom-client@15', 'connect-redis@9', '@types/express-session@1', 'pino@10',
      ],
      files: {
        'server.ts': TS_HOST, 'redis-types.ts': REDIS_TYPES,
        [README_GLUE.file]: README_GLUE.text,
        ...Object.fromEntries(README_BLOCKS.map((block) => [block.file, block.module])),
        'tsconfig.json': hostTsconfig('nodenext', [
          'server.ts', 'redis-types.ts', README_GLUE.file, ...README_BLOCKS.map((block) => block.file),
        ], true, true, STRICTEST),
      },
    }).then(() => { checks['express5-ts'] = typeCheck(hostDir('express5-ts')); }),
    // (c) CommonJS: require() in JavaScript, and TypeScript compiled to require() (nodenext and classic commonjs).
    createHost(tarball, {
      dir: hostDir('commonjs'), type: 'commonjs', installs: ['express@4', '@types/express@4'],
      files: {
        'server.cjs': CJS_JS_HOST, 'edges.cjs': CJS_EDGES_HOST, 'server.ts': TS_HOST,
        'tsconfig.json': hostTsconfig('nodenext', ['server.ts'], false),
        'tsconfig.commonjs.json': hostTsconfig('commonjs', ['server.ts'], false),
        'types-only.ts': TYPES_ONLY,
        'tsconfig.no-interop.json': hostTsconfig('commonjs', ['types-only.ts'], false, false),
      },
    }).then(() => {
      checks['commonjs'] = typeCheck(hostDir('commonjs'));
      checks['commonjs-classic'] = typeCheck(hostDir('commonjs'), 'tsconfig.commonjs.json');
      checks['commonjs-no-interop'] = typeCheck(hostDir('commonjs'), 'tsconfig.no-interop.json');
    }),
    // (d) better-sqlite3 installed but never built: its install script skipped (npm 11 without an allowScripts entry).
    createHost(tarball, {
      dir: hostDir('unbuilt-driver'), type: 'module', installs: ['express@5', 'better-sqlite3@12'], ignoreScripts: true,
      files: { 'open-store.mjs': OPEN_SQLITE_STORE },
    }),
  ]);
}, 120_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function callApi(host: RunningHost, accessToken: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${host.issuer}/api/me`, { headers: { Authorization: `Bearer ${String(accessToken)}` } });
  return { status: res.status, body: await res.json() };
}

/** SPEC §4.2 / RFC 6749 §4.4: client_credentials with Basic, then the token on a requireBearer route. */
async function clientCredentialsReachTheApi(host: RunningHost): Promise<void> {
  const token = await tokenRequest(host, host.machine, { grant_type: 'client_credentials' });
  expect(token['token_type']).toBe('Bearer');
  expect(await callApi(host, token['access_token'])).toEqual({
    status: 200, body: { clientId: host.machine.clientId, userId: null },
  });
}

/** SPEC §4.3 / RFC 6749 §4.1: login and consent pages, code for tokens, refresh (§6), the user on the API. */
async function authorizationCodeReachesTheApi(host: RunningHost): Promise<void> {
  const authorize = new URL(`${host.issuer}/oauth2/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code', client_id: host.web.clientId, redirect_uri: REDIRECT_URI, state: 'packed-state',
  }).toString();
  const back = await browseAuthorization(authorize);
  expect(back.searchParams.get('state')).toBe('packed-state');
  const code = back.searchParams.get('code');
  expect(code).toBeTruthy();
  const tokens = await tokenRequest(host, host.web, { grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT_URI });
  const expected = { status: 200, body: { clientId: host.web.clientId, userId: 'user-alice' } };
  expect(await callApi(host, tokens['access_token'])).toEqual(expected);
  const refreshed = await tokenRequest(host, host.web, { grant_type: 'refresh_token', refresh_token: String(tokens['refresh_token']) });
  expect(await callApi(host, refreshed['access_token'])).toEqual(expected);
}

async function driversSay(host: RunningHost): Promise<unknown> {
  return (await fetch(`${host.issuer}/drivers`)).json();
}

function expectClean(result: CommandResult): void {
  expect(result.stdout + result.stderr).toBe('');
  expect(result.code).toBe(0);
}

/** The Express 5 host's own files compiled clean, whatever its README blocks say (their tests say that). */
async function expectHostClean(): Promise<void> {
  const result = await checks['express5-ts']!;
  const { byFile, other } = splitDiagnostics(result.stdout + result.stderr, README_BLOCKS);
  expect(other).toBe('');
  expect(result.code === 0 || byFile.size > 0).toBe(true);
}

/** What the Express 5 host's compile says about one of its README files (a block, or the glue). */
async function readmeDiagnostics(file: string): Promise<readonly string[]> {
  const result = await checks['express5-ts']!;
  return splitDiagnostics(result.stdout + result.stderr, README_BLOCKS).byFile.get(file) ?? [];
}

describe('the tarball', () => {
  it('passes publint with warnings counted as errors', async () => {
    const result = await run(join(ROOT, 'node_modules', '.bin', 'publint'), ['run', tarball, '--strict'], work);
    expect(result.stdout + result.stderr).toContain('All good!');
    expect(result.code).toBe(0);
  }, 60_000);

  it('passes arethetypeswrong, CommonJS resolving to ESM aside (require(esm) on Node ≥ 20.19, TS ≥ 5.8 nodenext)', async () => {
    const result = await run(join(ROOT, 'node_modules', '.bin', 'attw'), [tarball, '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'ascii'], work);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    // 12 s alone at a load average of 9; past 60 s once beside this file's type-checks and three other runs.
  }, 180_000);

  it('ships the LICENSE, and the sources every source map and declaration map points at', async () => {
    const pkg = join(hostDir('express4-esm'), 'node_modules', 'express-oauth-router');
    expect(await readFile(join(pkg, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the express-oauth-router authors/);
    // README's links to the contract and the reference store resolve inside the package.
    expect(existsSync(join(pkg, 'src', 'stores', 'contract.ts'))).toBe(true);
    expect(existsSync(join(pkg, 'src', 'stores', 'memory', 'index.ts'))).toBe(true);
    const maps = (await readdir(join(pkg, 'dist'), { recursive: true })).filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(200);
    const unresolved: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(await readFile(join(pkg, 'dist', map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const target = resolve(join(pkg, 'dist', map, '..'), source);
        if (!existsSync(target)) unresolved.push(`${map} → ${relative(pkg, target)}`);
      }
    }
    expect(unresolved).toEqual([]);
  });

  it('declares Express 4.21+ or 5 and the store drivers as peers (the drivers optional), never as dependencies', async () => {
    const pkg = JSON.parse(await readFile(join(hostDir('express4-esm'), 'node_modules', 'express-oauth-router', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    for (const name of ['express', 'better-sqlite3', 'pg', 'redis', 'prom-client']) expect(pkg.dependencies).not.toHaveProperty(name);
    expect(pkg.peerDependencies['express']).toBe('^4.21.0 || ^5.0.0');
    for (const name of ['better-sqlite3', 'pg', 'redis', 'prom-client']) expect(pkg.peerDependenciesMeta[name]?.optional).toBe(true);
  });

  it('has no declaration that imports a package a host does not get (drivers, @types of dependencies)', async () => {
    const dist = join(hostDir('express4-esm'), 'node_modules', 'express-oauth-router', 'dist');
    const declarations = (await readdir(dist, { recursive: true })).filter((f) => f.endsWith('.d.ts'));
    const imported = new Set<string>();
    for (const file of declarations) {
      const text = await readFile(join(dist, file), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import\()\s*'([^'.][^']*)'/g)) {
        // The Redis store's types name the client of `redis`, which ships its own types and which that store needs.
        if (specifier === 'redis' && file.startsWith('stores/redis/')) continue;
        // So do the metrics' types name prom-client's Registry: an optional peer with its own types, needed by that subpath only.
        if (specifier === 'prom-client' && file.startsWith('metrics/')) continue;
        // The package's own name appears in the TSDoc examples.
        if (!specifier!.startsWith('express-oauth-router')) imported.add(specifier!.startsWith('node:') ? 'node:' : specifier!);
      }
    }
    expect(imported).toContain('express');
    // express: the host's @types/express; commander and express-rate-limit: dependencies that ship their types;
    // node: the @types/node that @types/express brings.
    const reachable = new Set(['express', 'commander', 'express-rate-limit', 'node:']);
    expect([...imported].filter((s) => !reachable.has(s))).toEqual([]);
  });
});

describe('(a) an Express 4 host in ESM JavaScript, without any store driver', () => {
  let host: RunningHost;
  beforeAll(async () => { host = await startHost(hostDir('express4-esm'), 'server.mjs'); });
  afterAll(() => host?.stop());

  it('runs on the one copy of Express the host installed (4.x), the package bringing none of its own', async () => {
    const dir = hostDir('express4-esm');
    const express = JSON.parse(await readFile(join(dir, 'node_modules', 'express', 'package.json'), 'utf8')) as { version: string };
    expect(express.version).toMatch(/^4\./);
    expect(existsSync(join(dir, 'node_modules', 'express-oauth-router', 'node_modules', 'express'))).toBe(false);
    for (const driver of ['better-sqlite3', 'pg', 'redis']) expect(existsSync(join(dir, 'node_modules', driver))).toBe(false);
  });

  it('client_credentials with Basic gets a token the requireBearer route accepts', async () => {
    await clientCredentialsReachTheApi(host);
  });

  it('the authorization-code flow through the built-in login and consent pages gets user tokens that refresh', async () => {
    await authorizationCodeReachesTheApi(host);
  });

  it('opening a store whose driver is missing names the package to install, and creates nothing', async () => {
    expect(await driversSay(host)).toEqual(DRIVERS_MISSING);
    expect(existsSync(join(hostDir('express4-esm'), 'data'))).toBe(false);
  });

  it('the admin CLI without better-sqlite3 names the package to install', async () => {
    const dir = hostDir('express4-esm');
    const cli = join(dir, 'node_modules', '.bin', 'oauth-admin');
    const result = await run(cli, ['clients', 'create', '--name', 'Nightly Sync', '--flow', 'client_credentials'], dir);
    expect(result.stderr).toContain(DRIVERS_MISSING.sqlite);
    expect(result.code).not.toBe(0);
  });

  it('its TypeScript twin type-checks strictly against @types/express 4 with skipLibCheck off, and the inferred types of a host library\'s exports can be named in its declarations', async () => {
    expectClean(await checks['express4-esm']!);
  }, 60_000);

  it("its TypeScript twin type-checks in a layout without hoisting (pnpm's, Yarn PnP's): req.auth is typed there too", async () => {
    expect(existsSync(join(hostDir('strict-layout'), 'node_modules', '@types', 'express-serve-static-core'))).toBe(false);
    expectClean(await checks['strict-layout']!);
  }, 60_000);
});

/** What the edges host prints once every scenario listens (test/package/host-sources.ts, edgesHost). */
interface EdgesReady {
  readonly issuers: Readonly<Record<'root' | 'sub' | 'prefixed' | 'trust-unset' | 'trust-list' | 'trust-true' | 'trust-hop' | 'trust-sub-true', string>>;
  readonly web: HostClient;
  readonly metricsMade: boolean;
}

const DOCUMENTS = ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/legacy',
  '/legacy/.well-known/oauth-authorization-server', '/oauth2/jwks', '/legacy/oauth2/jwks'];
const ONLY_GET = { error: 'invalid_request', error_description: 'this endpoint accepts only GET and HEAD' };
const UNTRUSTED_PROXY = 'requests carry X-Forwarded-For but the app does not trust the proxy';
const EVERY_HOP = 'trust proxy setting trusts every hop';

/**
 * The router's answers at a host's edges, in a host on Express 4 (ESM or CommonJS), where the suite's own tests run
 * Express 5: wrong methods on the documents, X-Powered-By, oauth.errorHandler after a host parser (at the root and in a
 * sub-app's parent), the trust proxy warnings (Express's compiled `trust proxy fn`), and the consent pages.
 */
function describeEdges(title: string, dir: string, entry: string, withMetrics: boolean): void {
  describe(title, () => {
    let edges: EdgesReady & { stop(): void };
    beforeAll(async () => { edges = await startListening<EdgesReady>(hostDir(dir), entry); });
    afterAll(() => edges?.stop());

    it('the metadata and the JWKS, both issuers: GET and HEAD are the document (application/json;charset=UTF-8, no X-Powered-By); another method, OPTIONS too, is 405 with Allow: GET, HEAD', async () => {
      for (const path of DOCUMENTS) {
        for (const method of ['GET', 'HEAD']) {
          const res = await hostRequest(edges.issuers.root, method, path);
          expect(res.status, `${method} ${path}`).toBe(200);
          expect(res.headers['content-type'], `${method} ${path}`).toBe('application/json;charset=UTF-8');
          expect(res.headers['x-powered-by'], `${method} ${path}`).toBeUndefined();
        }
        for (const method of ['OPTIONS', 'PUT', 'POST', 'DELETE']) {
          const res = await hostRequest(edges.issuers.root, method, path);
          expect(res.status, `${method} ${path}`).toBe(405);
          expect(res.headers.allow, `${method} ${path}`).toBe('GET, HEAD');
          expect(res.headers['content-type'], `${method} ${path}`).toBe('application/json;charset=UTF-8');
          expect(res.headers['x-powered-by'], `${method} ${path}`).toBeUndefined();
          expect(JSON.parse(res.text), `${method} ${path}`).toEqual(ONLY_GET);
        }
      }
    });

    it(withMetrics ? 'metrics.handler answers without X-Powered-By' : 'metrics are not made without prom-client', async () => {
      expect(edges.metricsMade).toBe(withMetrics);
      if (!withMetrics) return;
      const res = await hostRequest(edges.issuers.root, 'GET', '/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toContain('# HELP oauth_');
      expect(res.headers['x-powered-by']).toBeUndefined();
    });

    it("oauth.errorHandler after express.json(): another method with malformed JSON is the router's 405, a GET of a document or a page with it a 303 to itself; the host's own route keeps Express's 400 page", async () => {
      const root = edges.issuers.root;
      for (const path of DOCUMENTS) {
        const put = await hostRequest(root, 'PUT', path, '{x}');
        expect([put.status, put.headers.allow, put.headers['x-powered-by']], path).toEqual([405, 'GET, HEAD', undefined]);
        const [plain, withBody] = [await hostRequest(root, 'GET', path), await hostRequest(root, 'GET', path, '{x}')];
        // Sent to itself, through the host's middleware again (its gates), without the body: then the document.
        expect([withBody.status, withBody.headers.location, withBody.headers['x-powered-by']], path).toEqual([303, path, undefined]);
        expect((await hostRequest(root, 'GET', String(withBody.headers.location))).text, path).toBe(plain.text);
      }
      const token = await hostRequest(root, 'GET', '/oauth2/token', '{x}');
      expect([token.status, token.headers.allow]).toEqual([405, 'POST']);
      // The GET pages read no body either (RFC 6749 §3.1: an authorization request is its query): sent to themselves
      // (303), through the host's middleware again, without the body: then the page, not a 400.
      for (const path of [`/oauth2/authorize?${authorizeQuery(edges.web)}`, '/oauth2/consents']) {
        const [plain, withBody] = [await hostRequest(root, 'GET', path), await hostRequest(root, 'GET', path, '{x}')];
        expect(plain.status, path).toBe(200);
        expect([withBody.status, withBody.headers.location, withBody.headers['x-frame-options']], path).toEqual([303, path, 'DENY']);
        const followed = await hostRequest(root, 'GET', String(withBody.headers.location));
        expect([followed.status, followed.headers['content-type']], path).toEqual([200, plain.headers['content-type']]);
      }
      const login = await hostRequest(root, 'PUT', '/legacy/oauth2/login', '{x}');
      expect([login.status, login.headers.allow, login.headers['x-frame-options']]).toEqual([405, 'POST', 'DENY']);
      const own = await hostRequest(root, 'PUT', '/api/envelopes', '{x}');
      expect([own.status, own.headers['x-powered-by']]).toEqual([400, 'Express']);
      expect(own.headers['content-type']).toMatch(/^text\/html/);
    });

    it("oauth.errorHandler in the parent of a sub-app holding express.json() and the router: the same 405s, and the documents", async () => {
      const sub = edges.issuers.sub;
      for (const path of ['/.well-known/oauth-authorization-server', '/oauth2/jwks']) {
        const put = await hostRequest(sub, 'PUT', path, '{x}');
        expect([put.status, put.headers.allow, put.headers['x-powered-by']], path).toEqual([405, 'GET, HEAD', undefined]);
        const get = await hostRequest(sub, 'GET', path, '{x}');
        expect([get.status, get.headers.location], path).toEqual([303, path]);
        const followed = await hostRequest(sub, 'GET', path);
        expect([followed.status, followed.headers['content-type']], path).toEqual([200, 'application/json;charset=UTF-8']);
      }
      const token = await hostRequest(sub, 'PUT', '/oauth2/token', '{x}');
      expect([token.status, token.headers.allow]).toEqual([405, 'POST']);
      const form = await hostRequest(sub, 'POST', '/oauth2/token', '{x}');
      expect(form.status).toBe(400);
      expect(JSON.parse(form.text)).toMatchObject({ error: 'invalid_request' });
    });

    it('a router mounted under /auth answers its 405 there, and logs on the first request that it belongs at the root', async () => {
      const put = await hostRequest(edges.issuers.prefixed, 'PUT', '/auth/oauth2/jwks');
      expect([put.status, put.headers.allow]).toEqual([405, 'GET, HEAD']);
      const logged = await (await fetch(`${edges.issuers.prefixed}/logged`)).json() as string[];
      expect(logged).toEqual([expect.stringContaining('oauth.router is mounted at "/auth"')]);
    });

    it.each([
      ['unset', 'trust-unset', [UNTRUSTED_PROXY]],
      ["'10.0.0.0/8', which misses the loopback proxy", 'trust-list', [UNTRUSTED_PROXY]],
      ['true', 'trust-true', [EVERY_HOP]],
      ['1 hop', 'trust-hop', []],
      ['true in a sub-app under a parent trusting 1 hop', 'trust-sub-true', [EVERY_HOP]],
    ] as const)('trust proxy %s: a limited request with X-Forwarded-For logs each warning it calls for once', async (_setting, name, expected) => {
      const origin = edges.issuers[name];
      for (const address of ['198.51.100.1', '198.51.100.2']) {
        const res = await hostRequest(origin, 'POST', '/oauth2/token', 'grant_type=client_credentials', {
          type: 'application/x-www-form-urlencoded',
          headers: { 'X-Forwarded-For': address, Authorization: `Basic ${Buffer.from('nobody:wrong').toString('base64')}` },
        });
        expect(res.status).toBe(401);
      }
      const logged = await (await fetch(`${origin}/logged`)).json() as string[];
      expect(logged.map((line) => [UNTRUSTED_PROXY, EVERY_HOP].find((warning) => line.includes(warning)) ?? line)).toEqual(expected);
    });

    it('the connected-applications page lists the integration the user allowed, and withdrawing it says so', async () => {
      const agent = request.agent(edges.issuers.root);
      const consent = await signInAndGetConsent(agent, '', authorizeQuery(edges.web, { state: 'edges-allow' }));
      const allowed = await agent.post('/oauth2/consent').type('form').send({
        csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision: 'allow',
      });
      expect(allowed.status).toBe(303);
      expect(new URL(allowed.headers.location!).searchParams.get('code')).toBeTruthy();
      const page = await agent.get('/oauth2/consents');
      expect(page.status).toBe(200);
      expect(page.text).toContain('Acme CRM');
      expect(page.headers['x-powered-by']).toBeUndefined();
      const withdrawn = await agent.post('/oauth2/consents/withdraw').type('form')
        .send({ csrf_token: hiddenField(page.text, 'csrf_token'), client_id: edges.web.clientId });
      expect(withdrawn.status).toBe(303);
      const after = await agent.get(withdrawn.headers.location!);
      expect(after.text).toContain('<bdi>Acme CRM</bdi> no longer has access to your account.');
    });

    it('a Deny whose session ended gets the notice and a Deny that needs no sign-in, which reaches redirect_uri as access_denied', async () => {
      const consent = await signInAndGetConsent(request.agent(edges.issuers.root), '', authorizeQuery(edges.web, { state: 'edges-gone' }));
      const browser = request.agent(edges.issuers.root);
      const denied = await browser.post('/oauth2/consent').type('form').send({
        csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'),
        resume: hiddenField(consent, 'resume'), decision: 'deny',
      });
      expect(denied.status).toBe(403);
      expect(denied.text).toContain('Press Deny again to refuse; no sign-in is needed.');
      expect(denied.text).not.toContain('name="password"');
      const refused = await browser.post('/oauth2/login').type('form')
        .send({ csrf_token: hiddenField(denied.text, 'csrf_token'), request_id: hiddenField(denied.text, 'request_id'), cancel: '1' });
      expect(refused.status).toBe(303);
      const back = new URL(refused.headers.location!);
      expect([back.searchParams.get('error'), back.searchParams.get('state')]).toEqual(['access_denied', 'edges-gone']);
    });
  });
}

describeEdges('(a) the Express 4 ESM host at its edges', 'express4-esm', 'edges.mjs', true);

describe('(b) an Express 5 host in strict TypeScript', () => {
  let host: RunningHost;
  beforeAll(async () => {
    await expectHostClean();
    host = await startHost(hostDir('express5-ts'), 'dist/server.js');
  }, 60_000);
  afterAll(() => host?.stop());

  it('type-checks against @types/express 5 with skipLibCheck off and exactOptionalPropertyTypes, noUncheckedIndexedAccess on (Redis store types included) and runs as compiled', async () => {
    const express = JSON.parse(await readFile(join(hostDir('express5-ts'), 'node_modules', 'express', 'package.json'), 'utf8')) as { version: string };
    expect(express.version).toMatch(/^5\./);
    expect(host.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('client_credentials with Basic gets a token the requireBearer route accepts', async () => {
    await clientCredentialsReachTheApi(host);
  });

  it('the authorization-code flow through the built-in login and consent pages gets user tokens that refresh', async () => {
    await authorizationCodeReachesTheApi(host);
  });
});

describe("README.md's ```ts blocks, each a module of the Express 5 host with the reader's glue (test/package/readme-glue.d.ts)", () => {
  it('every block not compiled, or compared with a published type, is one README.md still has', () => {
    const firstLines = README_BLOCKS.map((block) => block.firstLine);
    expect(README_BLOCKS.length).toBeGreaterThan(10);
    expect(Object.keys({ ...LISTINGS, ...CHECKED_AGAINST_THE_PACKAGE }).filter((key) => !firstLines.includes(key))).toEqual([]);
  });

  it("a listing's records become checks, field by field", () => {
    expect(listedRecordChecks(['TokenRecord { tokenHash, scope: string[],', '  expiresAt: Date, userId? }', 'store.x() → void'])).toEqual([
      "export const listedTokenRecord: Record<keyof import('express-oauth-router').TokenRecord, true> = { tokenHash: true, scope: true, expiresAt: true, userId: true };",
    ]);
    // The Store listing names its six records.
    const listing = README_BLOCKS.find((block) => block.listing !== undefined)!;
    expect(listing.module.match(/^export const listed\w+/gm)).toEqual([
      'export const listedOAuthClient', 'export const listedAuthorizationCodeRecord', 'export const listedTokenRecord',
      'export const listedConsentRecord', 'export const listedSigningKeyRecord', 'export const listedRateLimitCount',
    ]);
  });

  it("the reader's glue type-checks against the tarball (it names the package's types)", async () => {
    expect(await readmeDiagnostics(README_GLUE.file)).toEqual([]);
  }, 60_000);

  for (const block of README_BLOCKS) {
    const name = `README.md line ${block.line} (${block.firstLine.replace(/\s+/g, ' ').trim().slice(0, 60)})`;
    it(`${name} ${block.listing === undefined ? 'type-checks against the tarball' : `lists each record's published fields (${block.listing})`}`, async () => {
      expect(await readmeDiagnostics(block.file), `README.md's block at line ${block.line} no longer compiles`).toEqual([]);
    }, 60_000);
  }
});

describe('(c) a CommonJS host', () => {
  let host: RunningHost;
  beforeAll(async () => { host = await startHost(hostDir('commonjs'), 'server.cjs'); });
  afterAll(() => host?.stop());

  it('require() loads the root and every subpath (no top-level await in any of their module graphs)', async () => {
    const subpaths = ['', '/stores/memory', '/stores/sqlite', '/stores/postgres', '/stores/redis', '/metrics', '/testing/check'];
    const script = `for (const s of ${JSON.stringify(subpaths)}) console.log('express-oauth-router' + s, Object.keys(require('express-oauth-router' + s)).length > 0);`;
    const result = await run(process.execPath, ['-e', script], hostDir('commonjs'));
    expect(result.stdout.trim().split('\n'), result.stderr).toEqual(subpaths.map((s) => `express-oauth-router${s} true`));
    expect(result.code).toBe(0);
  });

  it("require() loads './testing' too, next to the vitest it registers its tests with (in this repository)", async () => {
    const result = await run(process.execPath, ['-e', `console.log(typeof require('express-oauth-router/testing').runStoreConformance)`], ROOT);
    expect(result.stdout.trim()).toBe('function');
  });

  it('client_credentials with Basic gets a token the requireBearer route accepts', async () => {
    await clientCredentialsReachTheApi(host);
  });

  it('the authorization-code flow through the built-in login and consent pages gets user tokens that refresh', async () => {
    await authorizationCodeReachesTheApi(host);
  });

  it('creating a store whose driver is missing names the package to install (synchronously for SQLite)', async () => {
    expect(await driversSay(host)).toEqual(DRIVERS_MISSING);
  });

  it('creating metrics without prom-client (an optional peer) names the package to install', async () => {
    const script = `try { require('express-oauth-router/metrics').createOAuthMetrics(); } catch (e) { console.log(e.message); }`;
    const result = await run(process.execPath, ['-e', script], hostDir('commonjs'));
    expect(result.stdout.trim(), result.stderr).toBe('express-oauth-router/metrics needs prom-client: npm install prom-client@15');
  });

  it('TypeScript compiled to require() type-checks with module nodenext (TS ≥ 5.8) against @types/express 4', async () => {
    expectClean(await checks['commonjs']!);
  }, 60_000);

  it('TypeScript with module commonjs (node10 resolution, subpaths through typesVersions) type-checks', async () => {
    expectClean(await checks['commonjs-classic']!);
  }, 60_000);

  it("the package's declarations type-check under module commonjs without esModuleInterop (no default import of a Node module)", async () => {
    expectClean(await checks['commonjs-no-interop']!);
  }, 60_000);
});

describeEdges('(c) the CommonJS host (Express 4, require()) at its edges', 'commonjs', 'edges.cjs', false);

describe('(d) a host whose better-sqlite3 was installed without running its install script', () => {
  it('opening the SQLite store says how to build the driver, and creates nothing', async () => {
    const dir = hostDir('unbuilt-driver');
    expect(existsSync(join(dir, 'node_modules', 'better-sqlite3', 'build'))).toBe(false);
    const result = await run(process.execPath, ['open-store.mjs'], dir);
    expect(result.stdout.trim(), result.stderr).toBe(DRIVER_NOT_BUILT);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('the admin CLI says the same', async () => {
    const dir = hostDir('unbuilt-driver');
    const result = await run(join(dir, 'node_modules', '.bin', 'oauth-admin'), ['clients', 'create', '--name', 'Nightly Sync', '--flow', 'client_credentials'], dir);
    expect(result.stderr).toContain(DRIVER_NOT_BUILT);
    expect(result.code).not.toBe(0);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });
});
