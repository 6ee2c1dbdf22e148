// The SQLite store's disk filling up under load (SQLITE_FULL, made portable with PRAGMA max_page_count), through real
// sockets: no token handed out that the file does not hold, no revocation confirmed that did not commit, every refusal
// 503 temporarily_unavailable, and the token endpoint serving again by itself once the file may grow.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/crypto/hash-token.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { REDIRECT_URI, basic, createTestApp, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { clientCredentialsToken, codeTokens } from '../helpers/token-requests.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Requests in all, the one at which the disk fills, and the one at which it has room again. */
const TOTAL = 360;
const FULL_AT = 60;
const ROOM_AT = 280;
const KINDS = ['client_credentials', 'code', 'refresh', 'revoke'] as const;

interface Answer {
  readonly kind: (typeof KINDS)[number];
  /** Whether the disk had room again when the request was sent. */
  readonly afterRoom: boolean;
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** The token a revocation asked to revoke. */
  readonly revoked?: string;
}

describe('SQLite store whose disk fills up under load (RFC 6749 §5.2, RFC 7009 §2.2)', () => {
  it('hands out no token it did not store, confirms no revocation it did not commit, answers 503, and resumes by itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-disk-full-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'oauth.sqlite');
    // A connection of the test's own: max_page_count holds for the connection that sets it.
    const db = new Database(file);
    cleanups.push(() => { if (db.open) db.close(); });
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0, lockTimeoutMs: 1000 });
    const logged: string[] = [];
    const t = await createTestApp({ logger: { warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m) } }, store);

    // Made while the disk has room: codes to exchange, refresh tokens to use, access tokens to revoke.
    const codes: string[] = [];
    for (let i = 0; i < TOTAL / 4; i += 1) codes.push(await obtainCode(t.app, t.codeClient));
    const refreshTokens: string[] = [];
    for (let i = 0; i < 8; i += 1) refreshTokens.push((await codeTokens(t.app, t.codeClient)).refreshToken);
    const toRevoke: string[] = [];
    for (let i = 0; i < TOTAL / 4; i += 1) toRevoke.push(await clientCredentialsToken(t.app, t.credentialsClient));

    const server = t.app.listen(0, '127.0.0.1');
    cleanups.push(() => new Promise((done) => server.close(done)));
    await new Promise((done) => server.once('listening', done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = async (path: string, client: TestClient, form: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
      const text = await res.text();
      return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
    };

    const answers: Answer[] = [];
    let sent = 0;
    let afterRoom = false;
    async function client(): Promise<void> {
      while (sent < TOTAL) {
        const n = sent++;
        // The file may not grow past its present size (pages freed by revocations are still used), then may again.
        if (n === FULL_AT) db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
        if (n === ROOM_AT) {
          db.pragma('max_page_count = 4294967294');
          afterRoom = true;
        }
        const kind = KINDS[n % KINDS.length]!;
        const at = afterRoom;
        if (kind === 'client_credentials') {
          answers.push({ kind, afterRoom: at, ...await post('/oauth2/token', t.credentialsClient, { grant_type: 'client_credentials' }) });
        } else if (kind === 'code') {
          const form = { grant_type: 'authorization_code', code: codes.pop()!, redirect_uri: REDIRECT_URI };
          answers.push({ kind, afterRoom: at, ...await post('/oauth2/token', t.codeClient, form) });
        } else if (kind === 'refresh') {
          const form = { grant_type: 'refresh_token', refresh_token: refreshTokens[n % refreshTokens.length]! };
          answers.push({ kind, afterRoom: at, ...await post('/oauth2/token', t.codeClient, form) });
        } else {
          const token = toRevoke.pop()!;
          answers.push({ kind, afterRoom: at, revoked: token, ...await post('/oauth2/revoke', t.credentialsClient, { token }) });
        }
      }
    }
    await Promise.all(Array.from({ length: 8 }, client));

    expect(answers).toHaveLength(TOTAL);
    for (const answer of answers) {
      expect([200, 503], JSON.stringify(answer.body)).toContain(answer.status);
      if (answer.status === 503) expect(answer.body.error).toBe('temporarily_unavailable');
    }
    // The disk was full for a while (token saves refused), and every request sent once it had room was served.
    expect(answers.filter((a) => a.status === 503 && a.kind !== 'revoke').length).toBeGreaterThan(20);
    expect(answers.filter((a) => a.afterRoom).map((a) => a.status)).toEqual(answers.filter((a) => a.afterRoom).map(() => 200));
    expect(logged).toContain('express-oauth-router: store unavailable: SQLite store unavailable (SQLITE_FULL)');
    for (const line of logged) expect(line).not.toMatch(/\n\s+at /);

    // What the answers confirmed is in the file, as the next start reads it.
    await store.close();
    db.close();
    const reopened = createSqliteStore({ filename: file, fileMustExist: true, sweepIntervalSeconds: 0 });
    cleanups.push(() => reopened.close());
    const missing: string[] = [];
    for (const answer of answers.filter((a) => a.status === 200)) {
      if (answer.kind === 'revoke') {
        if (await reopened.tokens.findAccessToken(hashToken(answer.revoked!))) missing.push('a revocation');
        continue;
      }
      if (!await reopened.tokens.findAccessToken(hashToken(answer.body.access_token as string))) missing.push(`${answer.kind} access token`);
      const refreshToken = answer.body.refresh_token;
      if (typeof refreshToken === 'string' && !await reopened.tokens.findRefreshToken(hashToken(refreshToken))) missing.push('refresh token');
    }
    expect(missing).toEqual([]);
  }, 60_000);
});
