// oauth-admin run on a machine whose clock is off from its network store's (libfaketime on the built CLI): refused, nothing recorded.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { basic, createTestRouter, type TestClient } from '../helpers/app.js';
import { runCliWith, type CliResult } from '../helpers/run-cli.js';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';

// Set by .ci/run (Debian's faketime package); a machine without it skips this file unless it is set.
const FAKETIME = process.env.OAUTH_TEST_FAKETIME ?? '';
if (!FAKETIME) console.info('oauth-admin clock-skew test skipped: set OAUTH_TEST_FAKETIME to a faketime binary to run it');
const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');

/** Runs the built oauth-admin with its clock moved by `offset` (faketime's `+2h`, `-2h`); never rejects. */
function runCliAt(offset: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  if (!existsSync(FAKETIME)) throw new Error(`OAUTH_TEST_FAKETIME=${FAKETIME} is not a faketime binary`);
  return new Promise((done) => {
    execFile(FAKETIME, ['-f', offset, process.execPath, CLI, ...args], { env }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The network stores, each opened here and reached by the CLI through its URL (storeUrl). */
const BACKENDS = builtInStores('oauth_clock').filter(([label]) => label === 'PostgreSQL' || label === 'Redis');

describe.each(BACKENDS)('oauth-admin on a machine whose clock is off from the %s server\'s (RFC 7009 §2.1, RFC 6749 §4.4)', (_label, reachable, open) => {
  const available = reachable && FAKETIME !== '';
  let backend: OpenedStore;
  let env: NodeJS.ProcessEnv;
  let app: express.Express;
  let client: TestClient;

  beforeAll(async () => {
    if (!available) return;
    backend = await open();
    env = { ...process.env, OAUTH_STORE: backend.storeUrl! };
    app = express();
    app.use(createTestRouter(backend.store).router);
    const created = await runCliWith(['clients', 'create', '--name', 'Nightly sync', '--flow', 'client_credentials', '--scope', 'envelopes:read', '--scope', 'envelopes:sign', '--json'], { env });
    expect(created.code, created.stderr).toBe(0);
    const json = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
    client = { clientId: json.client_id, clientSecret: json.client_secret };
  });

  afterAll(async () => {
    await backend?.dispose();
  });

  /** The integration's client_credentials token request, as its next cron run makes it. */
  const tokenRequest = () => request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send({ grant_type: 'client_credentials' });

  it.skipIf(!available)('every command that would record a revocation moment refuses a clock 2 h ahead, naming both times, and the integration keeps getting tokens', { timeout: 60_000 }, async () => {
    const before = await tokenRequest();
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    const stored = await backend.store.clients.findClient(client.clientId);

    const commands = [
      ['tokens', 'revoke', '--client', client.clientId],
      ['clients', 'disable', client.clientId],
      ['clients', 'rotate-secret', client.clientId],
      ['clients', 'update', client.clientId, '--scope', 'envelopes:read'],
      ['clients', 'delete', client.clientId, '--yes'],
    ];
    for (const args of commands) {
      const refused = await runCliAt('+2h', [...args, '--json'], env);
      expect(refused.code, `${args.join(' ')}: ${refused.stderr}`).toBe(1);
      expect(refused.stdout).toBe('');
      const error = JSON.parse(refused.stderr.trim().split('\n').at(-1)!) as { error: string; message: string };
      expect(error.error, error.message).toBe('clock_skew');
      // Both clocks, as ISO 8601 instants, and which way this one is off.
      expect(error.message).toMatch(/this machine's clock reads \d{4}-\d\d-\d\dT[\d:.]+Z .* store's server reads \d{4}-\d\d-\d\dT[\d:.]+Z/);
      expect(error.message).toMatch(/this clock is 2 h 0 min ahead/);
    }

    // Nothing was recorded: the integration is as it was, its token still works, and its next request gets one.
    expect(await backend.store.clients.findClient(client.clientId)).toEqual(stored);
    expect((await request(app).post('/oauth2/introspect').set('Authorization', basic(client)).type('form').send({ token: before.body.access_token })).body).toMatchObject({ active: true });
    const after = await tokenRequest();
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  });

  it.skipIf(!available)('a clock 2 h behind is refused too (its moment would let codes issued in those 2 h be exchanged); reads still run', { timeout: 30_000 }, async () => {
    const behind = await runCliAt('-2h', ['tokens', 'revoke', '--client', client.clientId], env);
    expect(behind.code).toBe(1);
    expect(behind.stderr).toMatch(/^oauth-admin: this machine's clock reads .* behind/);
    // A read records nothing, so it is not refused.
    const shown = await runCliAt('+2h', ['clients', 'show', client.clientId, '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ client_id: client.clientId });
  });

  it.skipIf(!available)('keys replace-leaked from a clock 2 h ahead is refused, saying what it would do to the signing keys, and writes no key', { timeout: 30_000 }, async () => {
    await backend.store.keys!.saveSigningKey(generateSigningKeyRecord(new Date()));
    const kids = (await backend.store.keys!.listSigningKeys()).map((key) => key.kid);
    const refused = await runCliAt('+2h', ['keys', 'replace-leaked', '--yes', '--json'], env);
    expect(refused.code, refused.stderr).toBe(1);
    const error = JSON.parse(refused.stderr.trim().split('\n').at(-1)!) as { error: string; message: string };
    expect(error.error).toBe('clock_skew');
    // The reason is the key's, not a revocation's (this command records none).
    expect(error.message).toMatch(/2 h 0 min ahead: the new signing key's creation time/);
    expect(error.message).not.toContain('revocation');
    expect((await backend.store.keys!.listSigningKeys()).map((key) => key.kid)).toEqual(kids);
  });

  it.skipIf(!available)('a clock in step revokes as before, and the integration\'s next token request is served', { timeout: 30_000 }, async () => {
    const issued = await tokenRequest();
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const old = issued.body.access_token as string;
    const revoked = await runCliWith(['tokens', 'revoke', '--client', client.clientId], { env });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await request(app).post('/oauth2/introspect').set('Authorization', basic(client)).type('form').send({ token: old })).body).toEqual({ active: false });
    const next = await tokenRequest();
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect((await backend.store.clients.findClient(client.clientId))!.clientSecretHash).toBe(hashSecret(client.clientSecret));
  });
});
