// `oauth-admin keys list` and `keys replace-leaked`, against the SQLite file of a running JWT host (RFC 9068 §4).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import express from 'express';
import { createTestApp, createTestRouter, type TestApp } from '../helpers/app.js';
import { runCli, runCliWith } from '../helpers/run-cli.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { callApi, decodeJwt, fetchJwks } from '../helpers/jwt.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';

const JWT = { accessTokenFormat: 'jwt', accessTokenTtl: 3600 } as const;

let dir: string;
let storeFile: string;
let store: SqliteStore;
let host: TestApp;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-keys-'));
  storeFile = join(dir, 'oauth.sqlite');
  store = createSqliteStore({ filename: storeFile, sweepIntervalSeconds: 0 });
  host = await createTestApp(JWT, store);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A restarted instance of the host on the same file. */
function restarted(): express.Express {
  const oauth = createTestRouter(store, JWT);
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
  return app;
}

describe('oauth-admin keys list', () => {
  it('lists each kid, algorithm and creation time, oldest first, and never a private key', async () => {
    const token = await clientCredentialsToken(host.app, host.credentialsClient);
    const result = await runCli(storeFile, ['keys', 'list', '--json']);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('PRIVATE KEY');
    const listed = JSON.parse(result.stdout) as { kid: string; algorithm: string; created_at: string }[];
    expect(listed).toEqual([{ kid: decodeJwt(token).header.kid, algorithm: 'ES256', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    const text = await runCli(storeFile, ['keys', 'list']);
    expect(text.stdout).toMatch(/^KID\s+ALGORITHM\s+CREATED_AT\n/);
  });
});

describe('oauth-admin keys replace-leaked (RFC 9068 §4, RFC 9700 §4.10)', () => {
  it('without --yes it is a usage error (exit 2) and changes nothing', async () => {
    await clientCredentialsToken(host.app, host.credentialsClient);
    const before = await store.keys.listSigningKeys();
    const result = await runCli(storeFile, ['keys', 'replace-leaked', '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'usage_error' });
    expect(await store.keys.listSigningKeys()).toEqual(before);
  });

  it('a store without signing keys (a mistyped Redis ?prefix=, an opaque-token deployment) is refused, exit 1, and gets none', async () => {
    const empty = join(dir, 'opaque.sqlite');
    const opaque = createSqliteStore({ filename: empty, sweepIntervalSeconds: 0 });
    await createTestApp({}, opaque);
    const result = await runCli(empty, ['keys', 'replace-leaked', '--yes', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'failure', message: expect.stringContaining('no signing keys') });
    expect(await opaque.keys.listSigningKeys()).toEqual([]);
    await opaque.close();
  });

  it('a new key signs at once, the old one is deleted, and its tokens are refused by a restarted instance and, on meeting the new kid, by the running one', async () => {
    const old = await clientCredentialsToken(host.app, host.credentialsClient);
    const oldKid = decodeJwt(old).header.kid;
    const audit = join(dir, 'audit.log');
    const result = await runCliWith(['keys', 'replace-leaked', '--yes', '--json'], {
      env: { ...process.env, OAUTH_STORE: `sqlite:${storeFile}`, OAUTH_AUDIT_LOG: audit },
    });
    expect(result.code).toBe(0);
    const replaced = JSON.parse(result.stdout) as { kid: string; signing_kid: string; deleted: string[] };
    expect(replaced.deleted).toEqual([oldKid]);
    // Uncontested: the key it made is the key that signs.
    expect(replaced.signing_kid).toBe(replaced.kid);
    // The audit trail has it, with public kids only (no private key).
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ event: 'signing_keys.replaced', kid: replaced.kid, signingKid: replaced.kid, deleted: [oldKid] })]);
    expect((await store.keys.listSigningKeys()).map((key) => key.kid)).toEqual([replaced.kid]);
    const fresh = restarted();
    expect((await callApi(fresh, old)).status).toBe(401);
    const after = await clientCredentialsToken(fresh, host.credentialsClient);
    expect(decodeJwt(after).header.kid).toBe(replaced.kid);
    expect((await fetchJwks(fresh)).map((jwk) => jwk.kid)).toEqual([replaced.kid]);
    // The running host reads the keys on meeting the unknown kid: from then on the old key is gone there too.
    expect((await callApi(host.app, after)).status).toBe(200);
    expect((await callApi(host.app, old)).status).toBe(401);
  });
});
