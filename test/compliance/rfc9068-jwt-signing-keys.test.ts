// RFC 9068 signing keys: host-supplied keys of three types, SQLite keys across restarts, first-start convergence, bad options.
import { createPublicKey, createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import express from 'express';
import { ISSUER, createTestApp, createTestRouter, createTestUserAuth } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { callApi, decodeJwt, fetchJwks, verifyWithJwks } from '../helpers/jwt.js';
import { createOAuthRouter } from '../../src/router.js';
import { OptionsError, type OAuthRouterOptions } from '../../src/options.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { migrateSqliteSchema } from '../../src/stores/sqlite/schema.js';
import type { Store } from '../../src/stores/contract.js';
import { jwkThumbprint } from '../../src/jwt/jwk-thumbprint.js';

const JWT = { accessTokenFormat: 'jwt' } as const;
const QUIET = { session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} } };
const ec = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const ed25519 = (): KeyObject => generateKeyPairSync('ed25519').privateKey;
const rsa = (bits = 2048): KeyObject => generateKeyPairSync('rsa', { modulusLength: bits }).privateKey;

describe('RFC 9068 host-supplied signing keys (jwt.signingKeys)', () => {
  const cases = [
    { name: 'EC P-256 KeyObject', alg: 'ES256', key: ec() },
    { name: 'Ed25519 PEM string', alg: 'EdDSA', key: ed25519().export({ format: 'pem', type: 'pkcs8' }).toString() },
    { name: 'RSA 2048 KeyObject', alg: 'RS256', key: rsa() },
  ] as const;

  for (const { name, alg, key } of cases) {
    it(`${name}: signs ${alg} with kid = RFC 7638 thumbprint; verifies via the JWKS and requireBearer`, async () => {
      const t = await createTestApp({ ...JWT, jwt: { signingKeys: [key] } });
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const { header } = decodeJwt(token);
      const jwks = await fetchJwks(t.app);
      expect(header).toEqual({ alg, typ: 'at+jwt', kid: jwks[0]!.kid });
      expect(jwks[0]!.kid).toBe(jwkThumbprint(createPublicKey(key).export({ format: 'jwk' })));
      expect(jwks[0]).not.toHaveProperty('d');
      expect(verifyWithJwks(token, jwks)).toBe(true);
      expect((await callApi(t.app, token)).status).toBe(200);
    });
  }

  it('the first key signs, the rest only verify: host rotation keeps old tokens valid', async () => {
    const [oldKey, newKey] = [ec(), ed25519()];
    const before = await createTestApp({ ...JWT, jwt: { signingKeys: [oldKey] } });
    const old = await clientCredentialsToken(before.app, before.credentialsClient);
    const after = await createTestApp({ ...JWT, jwt: { signingKeys: [newKey, createPublicKey(oldKey)] } });
    expect(decodeJwt(await clientCredentialsToken(after.app, after.credentialsClient)).header.alg).toBe('EdDSA');
    expect((await callApi(after.app, old)).status).toBe(200);
    expect(await fetchJwks(after.app)).toHaveLength(2);
  });

  it('a custom jwt.audience is the aud claim, and required by requireBearer', async () => {
    const key = ec();
    const api = await createTestApp({ ...JWT, jwt: { signingKeys: [key], audience: 'https://api.example' } });
    const token = await clientCredentialsToken(api.app, api.credentialsClient);
    expect(decodeJwt(token).claims.aud).toBe('https://api.example');
    expect((await callApi(api.app, token)).status).toBe(200);
    const other = await createTestApp({ ...JWT, jwt: { signingKeys: [key] } });
    expect((await callApi(other.app, token)).status).toBe(401);
  });

  it('rotateSigningKey rejects when the host supplies the keys', async () => {
    const oauth = createOAuthRouter(createMemoryStore(), createTestUserAuth(new Set()), { issuer: ISSUER, ...QUIET, ...JWT, jwt: { signingKeys: [ec()] } });
    await expect(oauth.rotateSigningKey()).rejects.toThrow(/jwt\.signingKeys/);
  });
});

describe('RFC 9068 store-kept keys across instances and restarts (SQLite)', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  const tempFile = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-jwt-'));
    dirs.push(dir);
    return join(dir, 'oauth.sqlite');
  };
  const open = (file: string): Store => {
    const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    for (const store of stores) await store.close?.();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('keys survive a restart: a new router on the same file verifies an old token and signs with the same kid', async () => {
    const file = tempFile();
    const first = open(file);
    const before = await createTestApp(JWT, first);
    const old = await clientCredentialsToken(before.app, before.credentialsClient);
    await first.close?.();
    const after = await createTestApp(JWT, open(file));
    expect((await callApi(after.app, old)).status).toBe(200);
    expect(decodeJwt(await clientCredentialsToken(after.app, after.credentialsClient)).header.kid).toBe(decodeJwt(old).header.kid);
  });

  it('two routers starting together on one file converge on one key; tokens of each verify at the other', async () => {
    const file = tempFile();
    const [a, b] = [open(file), open(file)];
    const [appA, appB] = [await createTestApp(JWT, a), await createTestApp(JWT, b)];
    const [tokenA, tokenB] = await Promise.all([
      clientCredentialsToken(appA.app, appA.credentialsClient),
      clientCredentialsToken(appB.app, appB.credentialsClient),
    ]);
    expect(decodeJwt(tokenA).header.kid).toBe(decodeJwt(tokenB).header.kid);
    expect(await a.keys!.listSigningKeys()).toHaveLength(1);
    expect((await callApi(appB.app, tokenA)).status).toBe(200);
    expect((await callApi(appA.app, tokenB)).status).toBe(200);
  });

  it('two routers on one memory store converge as well', async () => {
    const store = createMemoryStore();
    const [appA, appB] = await Promise.all([createTestApp(JWT, store), createTestApp(JWT, store)]);
    const tokens = await Promise.all([appA, appB, appA, appB].map((t) => clientCredentialsToken(t.app, t.credentialsClient)));
    expect(new Set(tokens.map((token) => decodeJwt(token).header.kid)).size).toBe(1);
    expect((await callApi(appB.app, tokens[0]!)).status).toBe(200);
  });

  it('a schema-version-1 file migrates to version 2 and gains the signing_keys table', async () => {
    const file = tempFile();
    const db = new Database(file);
    migrateSqliteSchema(db, 1);
    db.close();
    const store = open(file);
    expect(await store.keys!.listSigningKeys()).toEqual([]);
  });
});

describe('RFC 9068 options (OptionsError names the key)', () => {
  const build = (options: Partial<OAuthRouterOptions>, store: Store = createMemoryStore()) => () =>
    createOAuthRouter(store, createTestUserAuth(new Set()), { issuer: ISSUER, ...QUIET, ...options } as OAuthRouterOptions);
  const cases: [string, Partial<OAuthRouterOptions> | Record<string, unknown>, string][] = [
    ['not a PEM', { ...JWT, jwt: { signingKeys: ['not a pem'] } }, 'jwt.signingKeys[0]'],
    ['an EC P-384 key', { ...JWT, jwt: { signingKeys: [generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey] } }, 'jwt.signingKeys[0]'],
    ['a 1024-bit RSA key', { ...JWT, jwt: { signingKeys: [rsa(1024)] } }, 'jwt.signingKeys[0]'],
    ['an HMAC secret', { ...JWT, jwt: { signingKeys: [createSecretKey(Buffer.alloc(32, 1))] } }, 'jwt.signingKeys[0]'],
    ['a public key first', { ...JWT, jwt: { signingKeys: [createPublicKey(ec())] } }, 'jwt.signingKeys[0]'],
    ['a bad second key', { ...JWT, jwt: { signingKeys: [ec(), 42] } }, 'jwt.signingKeys[1]'],
    ['the same key twice', { ...JWT, jwt: { signingKeys: ((k) => [k, k])(ec()) } }, 'jwt.signingKeys'],
    ['signingKeys not a list', { ...JWT, jwt: { signingKeys: 'pem' } }, 'jwt.signingKeys'],
    ['an empty audience', { ...JWT, jwt: { audience: '' } }, 'jwt.audience'],
    ['an unknown jwt key', { ...JWT, jwt: { signingKey: ec() } }, 'jwt.signingKey'],
    ['checkRevocation not a boolean', { ...JWT, jwt: { checkRevocation: 'yes' } }, 'jwt.checkRevocation'],
    ['an unknown format', { accessTokenFormat: 'JWT' }, 'accessTokenFormat'],
  ];
  for (const [name, options, key] of cases) {
    it(`${name} → OptionsError naming "${key}"`, () => {
      expect(build(options as Partial<OAuthRouterOptions>)).toThrow(OptionsError);
      expect(build(options as Partial<OAuthRouterOptions>)).toThrow(`"${key}"`);
    });
  }

  it('jwt format with no host keys and a store without a keys part → OptionsError naming "jwt.signingKeys"', () => {
    const { keys: _unused, ...withoutKeys } = createMemoryStore();
    expect(build(JWT, withoutKeys)).toThrow(OptionsError);
    expect(build(JWT, withoutKeys)).toThrow('"jwt.signingKeys"');
    expect(build({ ...JWT, jwt: { signingKeys: [ec()] } }, withoutKeys)).not.toThrow();
  });
});

describe('RFC 9068 §4: a retired key verifies nothing more, also on an instance that verified its tokens before', () => {
  afterEach(() => { vi.useRealTimers(); });

  it('a token signed under a longer accessTokenTtl is refused once the key retires, cached or not', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const before = await createTestApp({ ...JWT, accessTokenTtl: 365 * 86_400 }, store);
    const old = await clientCredentialsToken(before.app, before.credentialsClient);
    // The same deployment restarted with an hour, then a rotation: the old key retires an hour (and the delays) after the switch.
    const restarted = (): { oauth: ReturnType<typeof createTestRouter>; app: express.Express } => {
      const oauth = createTestRouter(store, { ...JWT, accessTokenTtl: 3600 });
      const app = express();
      app.use(oauth.router);
      app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
      return { oauth, app };
    };
    const after = restarted();
    expect((await callApi(after.app, old)).status).toBe(200);
    await after.oauth.rotateSigningKey();
    vi.setSystemTime(Date.now() + 2 * 3600_000);
    const fresh = restarted();
    expect((await callApi(fresh.app, old)).status).toBe(401);
    // The instance that verified the token before answers alike: its memory of verified tokens ended with the key.
    expect((await callApi(after.app, old)).status).toBe(401);
  });
});
