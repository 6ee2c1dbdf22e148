// RFC 6749 §10.3, §10.5: tokens and codes are kept under keys that grow with time, and those issued by earlier versions keep working.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hash } from 'node:crypto';
import Database from 'better-sqlite3';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, ISSUER, REDIRECT_URI, USER, type TestApp } from '../helpers/app.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createOrderedToken } from '../../src/crypto/ordered-token.js';
import { createRandomToken } from '../../src/crypto/random-token.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { timePrefix } from '../../src/crypto/time-prefix.js';

const ORDERED = /^[0-9a-v]{11}\.[A-Za-z0-9_-]{43}$/;
const KEY = /^[A-Za-z0-9_-]{43}$/;

describe('the shape of tokens and codes, and their keys', () => {
  it('issues 55 characters: the issuing millisecond in base32hex, a dot, then 256 random bits', () => {
    const before = Date.now();
    const token = createOrderedToken();
    const after = Date.now();
    expect(token).toMatch(ORDERED);
    const issuedAt = parseInt(token.slice(0, 11), 32);
    expect(issuedAt).toBeGreaterThanOrEqual(before);
    expect(issuedAt).toBeLessThanOrEqual(after);
    expect(new Set(Array.from({ length: 1000 }, createOrderedToken)).size).toBe(1000);
  });

  it('keys an issued token by its millisecond and the first 192 bits of its SHA-256, 43 characters in all', () => {
    const token = createOrderedToken();
    const key = hashToken(token);
    expect(key).toMatch(KEY);
    expect(key).toBe(token.slice(0, 11) + hash('sha256', token, 'base64url').slice(0, 32));
    expect(key).not.toContain(token.slice(12));
  });

  it('keys any other value by its plain SHA-256, the key earlier versions gave it', () => {
    const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    for (const value of [createRandomToken(), jwt, 'ABCDEFGHIJK.uppercase-is-not-a-time', '0123456789a.', 'x', '']) {
      expect(hashToken(value), value).toBe(hashSecret(value));
    }
  });

  it('writes each millisecond its own prefix, whichever millisecond came before', () => {
    const expected: Array<[number, string]> = [
      [1_800_000_000_000, '001kcc5ok00'], [1_800_000_000_000, '001kcc5ok00'], [1_800_000_000_001, '001kcc5ok01'],
      [1_800_000_000_000, '001kcc5ok00'], [0, '00000000000'],
    ];
    for (const [now, prefix] of expected) expect(timePrefix(now), String(now)).toBe(prefix);
  });

  it('sorts the keys of tokens issued in later milliseconds after the earlier ones', () => {
    const early = hashToken(`${(1_800_000_000_000).toString(32).padStart(11, '0')}.${createRandomToken()}`);
    const late = hashToken(`${(1_800_000_000_001).toString(32).padStart(11, '0')}.${createRandomToken()}`);
    expect(early < late).toBe(true);
  });
});

describe('through HTTP, on the SQLite store', () => {
  let dir: string;
  let file: string;
  let t: TestApp;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-token-keys-'));
    file = join(dir, 'oauth.sqlite');
    t = await createTestApp({}, createSqliteStore({ filename: file, sweepIntervalSeconds: 0 }));
  });
  afterAll(async () => {
    await t.store.close?.();
    rmSync(dir, { recursive: true, force: true });
  });
  const token = () => request(t.app).post('/oauth2/token').type('form');
  const me = (bearer: string) => request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${bearer}`);

  it('saves each token under hashToken, so the token index takes new keys in issuing order', async () => {
    const issued: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const res = await token().set('Authorization', basic(t.credentialsClient)).send({ grant_type: 'client_credentials' });
      expect(res.status).toBe(200);
      expect(res.body.access_token).toMatch(ORDERED);
      issued.push(res.body.access_token as string);
    }
    const db = new Database(file, { readonly: true });
    try {
      const keys = db.prepare('SELECT token_hash FROM tokens ORDER BY rowid').pluck().all() as string[];
      const ours = keys.slice(-20);
      expect(ours).toEqual(issued.map(hashToken));
      const prefixes = ours.map((key) => key.slice(0, 11));
      expect(prefixes).toEqual([...prefixes].sort());
    } finally {
      db.close();
    }
  });

  it('still serves an access token of an earlier version, kept under its plain SHA-256: bearer, introspection, revocation', async () => {
    const legacy = createRandomToken();
    const record = {
      tokenHash: hashSecret(legacy), grantId: `legacy-${createRandomToken()}`, clientId: t.credentialsClient.clientId, userId: null,
      scope: ['envelopes:read'], issuer: ISSUER, expiresAt: new Date(Date.now() + 3_600_000),
    };
    expect(await t.store.tokens.saveTokens(record, null, { authorizedAt: new Date() })).toBe(true);
    expect((await me(legacy)).status).toBe(200);
    const introspected = await request(t.app).post('/oauth2/introspect').set('Authorization', basic(t.credentialsClient)).type('form').send({ token: legacy });
    expect(introspected.body).toMatchObject({ active: true, client_id: t.credentialsClient.clientId });
    expect((await request(t.app).post('/oauth2/revoke').set('Authorization', basic(t.credentialsClient)).type('form').send({ token: legacy })).status).toBe(200);
    const refused = await me(legacy);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_token');
  });

  it('still redeems a code and a refresh token of an earlier version', async () => {
    const code = createRandomToken();
    const grantId = `legacy-${createRandomToken()}`;
    const now = Date.now();
    await t.store.codes.saveCode({
      codeHash: hashSecret(code), grantId, clientId: t.codeClient.clientId, userId: USER.id, redirectUri: REDIRECT_URI,
      scope: ['envelopes:read'], codeChallenge: null, issuer: ISSUER, issuedAt: new Date(now), expiresAt: new Date(now + 600_000),
    });
    const exchanged = await token().set('Authorization', basic(t.codeClient)).send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.refresh_token).toMatch(ORDERED);

    const legacyRefresh = createRandomToken();
    const access = {
      tokenHash: hashSecret(createRandomToken()), grantId: `legacy-${createRandomToken()}`, clientId: t.codeClient.clientId, userId: USER.id,
      scope: ['envelopes:read'], issuer: ISSUER, expiresAt: new Date(now + 3_600_000),
    };
    const refresh = { ...access, tokenHash: hashSecret(legacyRefresh), expiresAt: new Date(now + 86_400_000) };
    expect(await t.store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
    const refreshed = await token().set('Authorization', basic(t.codeClient)).send({ grant_type: 'refresh_token', refresh_token: legacyRefresh });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).toMatch(ORDERED);
    expect((await me(refreshed.body.access_token as string)).status).toBe(200);
  });
});

describe('orderedTokens: false, for a rolling upgrade beside a version before ordered tokens', () => {
  let dir: string;
  let file: string;
  let t: TestApp;
  /** Another process's store on the same file, looking tokens up as versions before ordered tokens do: plain SHA-256. */
  let earlier: ReturnType<typeof createSqliteStore>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-plain-tokens-'));
    file = join(dir, 'oauth.sqlite');
    t = await createTestApp({ orderedTokens: false }, createSqliteStore({ filename: file, sweepIntervalSeconds: 0 }));
    earlier = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  });
  afterAll(async () => {
    await t.store.close?.();
    await earlier.close?.();
    rmSync(dir, { recursive: true, force: true });
  });
  const me = (bearer: string) => request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${bearer}`);

  it('issues access tokens, refresh tokens and codes of 43 characters, kept under their plain SHA-256, which an earlier version finds and revokes', async () => {
    const { obtainCode } = await import('../helpers/browser-flow.js');
    const code = await obtainCode(t.app, t.codeClient);
    expect(code).toMatch(KEY);
    const consumed = await earlier.codes.consumeCode(hashSecret(code));
    expect(consumed).toMatchObject({ kind: 'consumed', record: { clientId: t.codeClient.clientId, userId: USER.id } });

    const issued = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', code: await obtainCode(t.app, t.codeClient), redirect_uri: REDIRECT_URI });
    expect(issued.status).toBe(200);
    const { access_token: access, refresh_token: refresh } = issued.body as { access_token: string; refresh_token: string };
    expect(access).toMatch(KEY);
    expect(refresh).toMatch(KEY);
    expect(await earlier.tokens.findAccessToken(hashSecret(access))).toMatchObject({ clientId: t.codeClient.clientId, userId: USER.id });
    expect(await earlier.tokens.findRefreshToken(hashSecret(refresh))).not.toBeNull();

    // Served (and cached) here, revoked by the earlier version's key in another connection: refused on the next request.
    expect((await me(access)).status).toBe(200);
    await earlier.tokens.revokeAccessToken(hashSecret(access));
    expect((await me(access)).status).toBe(401);
    const refreshed = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'refresh_token', refresh_token: refresh });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).toMatch(KEY);
  });

  it('still accepts the ordered tokens this version issued before it was set', async () => {
    const ordered = await createTestApp({}, t.store);
    const res = await request(ordered.app).post('/oauth2/token').set('Authorization', basic(ordered.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(res.body.access_token).toMatch(ORDERED);
    expect((await me(res.body.access_token as string)).status).toBe(200);
  });
});
