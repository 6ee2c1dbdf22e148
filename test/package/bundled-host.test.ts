// The packed package inside a host's bundle: esbuild's one CommonJS file, as apps that ship a single file build it.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browseAuthorization } from '../helpers/fetch-browser.js';
import { ESM_JS_HOST, RUNTIME_LOADS } from './host-sources.js';
import { ROOT, createHost, packPackage, run, startHost, type RunningHost } from './packed-host.js';
import { tokenRequest } from './host-token-request.js';

const REDIRECT_URI = 'https://client.example/callback';

let work: string;
let hostDir: string;
let host: RunningHost | undefined;

/**
 * esbuild's common server build: everything in one file but the native driver, which its docs say to keep
 * external. CommonJS output has no `import.meta` (esbuild leaves it empty): what the package loads at run time
 * must be found from `__filename` there.
 */
async function bundle(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [join(hostDir, entry)], outfile: join(hostDir, outfile),
    bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: ['better-sqlite3'], logLevel: 'silent',
  });
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  work = await mkdtemp(join(tmpdir(), 'eor-bundled-'));
  hostDir = join(work, 'esbuild-cjs');
  const tarball = await packPackage(work);
  await createHost(tarball, {
    dir: hostDir, type: 'module', installs: ['express@5', 'prom-client@15'],
    files: { 'server.mjs': ESM_JS_HOST, 'runtime-loads.mjs': RUNTIME_LOADS },
  });
  await bundle('server.mjs', 'bundle/server.cjs');
  await bundle('runtime-loads.mjs', 'bundle/runtime-loads.cjs');
  host = await startHost(hostDir, 'bundle/server.cjs');
}, 120_000);

afterAll(async () => {
  host?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

async function callApi(accessToken: unknown): Promise<unknown> {
  const res = await fetch(`${host!.issuer}/api/me`, { headers: { Authorization: `Bearer ${String(accessToken)}` } });
  return { status: res.status, body: await res.json() };
}

describe('a host bundled by esbuild into one CommonJS file (--bundle --platform=node --format=cjs)', () => {
  it('client_credentials with Basic gets a token the requireBearer route accepts (RFC 6749 §4.4)', async () => {
    const token = await tokenRequest(host!, host!.machine, { grant_type: 'client_credentials' });
    expect(await callApi(token['access_token'])).toEqual({ status: 200, body: { clientId: host!.machine.clientId, userId: null } });
  });

  it('the login and consent pages render from the bundle, and their code gets user tokens (RFC 6749 §4.1)', async () => {
    const authorize = new URL(`${host!.issuer}/oauth2/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code', client_id: host!.web.clientId, redirect_uri: REDIRECT_URI, state: 'bundled-state',
    }).toString();
    const back = await browseAuthorization(authorize);
    expect(back.searchParams.get('state')).toBe('bundled-state');
    const tokens = await tokenRequest(host!, host!.web, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT_URI });
    expect(await callApi(tokens['access_token'])).toEqual({ status: 200, body: { clientId: host!.web.clientId, userId: 'user-alice' } });
  });

  it('a store whose driver is not next to the bundle names the package to install (the bundle has no import.meta)', async () => {
    expect(await (await fetch(`${host!.issuer}/drivers`)).json()).toEqual({
      sqlite: 'The SQLite store needs better-sqlite3: npm install better-sqlite3@12',
      sqliteUrl: 'The SQLite store needs better-sqlite3: npm install better-sqlite3@12',
      postgres: 'The PostgreSQL store needs pg: npm install pg@8',
      redis: 'The Redis store needs redis: npm install redis@5',
    });
  });

  it('prom-client and the bcrypt worker\'s bcryptjs, loaded at run time, are found from the bundle', async () => {
    const result = await run(process.execPath, ['bundle/runtime-loads.cjs'], hostDir);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ metrics: 'created', bcrypt: true });
  });
});

describe('what a bundler reads in dist/', () => {
  it('loads what it loads at run time in ways webpack leaves alone (it cannot bundle a computed name)', async () => {
    const dist = join(hostDir, 'node_modules', 'express-oauth-router', 'dist');
    const files = (await readdir(dist, { recursive: true })).filter((f) => f.endsWith('.js'));
    const found: string[] = [];
    for (const file of files) {
      const text = await readFile(join(dist, file), 'utf8');
      // webpack turns createRequire(import.meta.url)(name) into an empty context ("Cannot find module") and
      // .resolve('bcryptjs') into a module id the worker cannot require; createRequire(other) into undefined.
      if (/import \{[^}]*\bcreateRequire\b[^}]*\} from 'node:module'/.test(text)) found.push(`${file}: createRequire imported`);
      // import() of a computed name becomes webpack's empty async context, unless marked to be left as it is.
      for (const call of text.match(/\bimport\((?!['"])[^)]+\)/g) ?? []) {
        if (!call.includes('webpackIgnore: true')) found.push(`${file}: ${call}`);
      }
    }
    expect(found).toEqual([]);
  });
});
