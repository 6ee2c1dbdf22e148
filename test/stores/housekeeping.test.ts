// Housekeeping: 100,000 short-lived tokens go back out of every store while real HTTP requests keep being served.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, ISSUER, type TestApp } from '../helpers/app.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import type { CompleteStore, TokenRecord } from '../../src/stores/contract.js';

const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
const CHURN = 100_000;
/** Tokens that must outlive the sweep: saved with an hour to live, next to the churn. */
const SURVIVORS = 500;
const unique = `${process.pid}_${randomBytes(3).toString('hex')}`;

/** What a store family gives the test: the store, how big it is, and how to make it purge. */
interface Subject {
  readonly store: CompleteStore;
  /** Figures of the store's size; `records` is the one compared before and after. */
  size(): Promise<{ records: number } & Record<string, number>>;
  /** Runs the store's purge (a sweep, or for Redis waiting for its TTLs) and resolves when it is done. */
  purge(): Promise<void>;
  dispose(): Promise<void>;
}

interface Family {
  readonly name: string;
  readonly enabled: boolean;
  /** Lifetime of the churned tokens: the issuing finishes within it, then the test waits it out. */
  readonly shortTtlMs: number;
  open(): Promise<Subject>;
}

const families: Family[] = [
  {
    name: 'memory',
    enabled: true,
    shortTtlMs: 4000,
    async open() {
      const store = createMemoryStore({ sweepIntervalSeconds: 0 });
      return {
        store,
        size: async () => ({ records: store.recordCount() }),
        purge: () => store.sweepExpired(),
        dispose: () => store.close(),
      };
    },
  },
  {
    name: 'SQLite',
    enabled: true,
    shortTtlMs: 4000,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'housekeeping-'));
      const filename = join(dir, 'oauth.sqlite');
      // 'normal' only to issue 100k tokens quickly; the sweep does the same either way.
      const store = createSqliteStore({ filename, sweepIntervalSeconds: 0, synchronous: 'normal' });
      const reader = new Database(filename, { readonly: true });
      return {
        store,
        async size() {
          const count = (table: string) => (reader.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
          return {
            records: count('tokens') + count('codes') + count('rate_limits'),
            tokens: count('tokens'),
            pageCount: reader.pragma('page_count', { simple: true }) as number,
            freelistCount: reader.pragma('freelist_count', { simple: true }) as number,
          };
        },
        purge: () => store.sweepExpired(),
        async dispose() {
          reader.close();
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    enabled: Boolean(PG_URL),
    shortTtlMs: 10_000,
    async open() {
      const schema = `housekeeping_${unique}`;
      const store = await createPostgresStore({ connectionString: PG_URL, schema, sweepIntervalSeconds: 0, maxConnections: 10 });
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      const count = async (table: string) => Number((await admin.query(`SELECT count(*) AS n FROM "${schema}".${table}`)).rows[0].n);
      return {
        store,
        async size() {
          const tokens = await count('tokens');
          return { records: tokens + (await count('codes')) + (await count('rate_limits')), tokens };
        },
        async purge() {
          // A run takes at most 100 batches per table; run again until a run finds nothing more.
          for (let before = -1, now = await count('tokens'); now !== before; before = now, now = await count('tokens')) {
            await store.sweepExpired();
          }
        },
        async dispose() {
          await store.close();
          await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
          await admin.end();
        },
      };
    },
  },
  {
    name: 'Redis',
    enabled: Boolean(REDIS_URL),
    shortTtlMs: 10_000,
    async open() {
      const prefix = `housekeeping-${unique}:`;
      const store = await createRedisStore({ url: REDIS_URL, prefix, commandTimeoutMs: 5000, sweepIntervalSeconds: 0 });
      const admin = createClient({ url: REDIS_URL });
      await admin.connect();
      // SCAN also makes Redis drop the expired keys it passes (on top of its own active expiry).
      const keys = async () => {
        let n = 0;
        for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) n += batch.length;
        return n;
      };
      // Bytes of the prefix's own keys: INFO's used_memory counts every other test sharing this Redis too.
      const prefixBytes = async () => {
        let bytes = 0;
        for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
          for (const key of batch) bytes += Number(await admin.memoryUsage(key)) || 0;
        }
        return bytes;
      };
      return {
        store,
        size: async () => ({ records: await keys(), prefixBytes: await prefixBytes() }),
        async purge() {
          // Every token key carries a TTL: wait, a scan at a time, until the prefix is back to what lives.
          let last = Number.POSITIVE_INFINITY;
          for (let n = await keys(); n < last; n = await keys()) {
            last = n;
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          // The index sets the survivors keep alive still name 100,000 expired tokens: the sweep prunes them.
          await store.sweepExpired();
        },
        async dispose() {
          await store.close();
          for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (batch.length) await admin.del(batch);
          await admin.quit();
        },
      };
    },
  },
];

function token(clientId: string, userId: string, expiresAt: Date, grantId: string): TokenRecord {
  return { tokenHash: randomBytes(32).toString('base64url'), grantId, clientId, userId, scope: ['envelopes:read'], issuer: ISSUER, expiresAt };
}

/** Saves `pairs` grants of an access and a refresh token each, `ttlMs` to live, 1000 calls at a time. */
async function saveMany(store: CompleteStore, clientId: string, userId: string, pairs: number, ttlMs: number): Promise<TokenRecord[]> {
  const saved: TokenRecord[] = [];
  for (let i = 0; i < pairs; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, pairs - i) }, () => {
      const grantId = randomBytes(12).toString('base64url');
      const expiresAt = new Date(Date.now() + ttlMs);
      return [token(clientId, userId, expiresAt, grantId), token(clientId, userId, expiresAt, grantId)] as const;
    });
    const results = await Promise.all(batch.map(([a, r]) => store.tokens.saveTokens(a, r, { authorizedAt: new Date() })));
    expect(results.every(Boolean)).toBe(true);
    for (const [a] of batch) saved.push(a);
  }
  return saved;
}

/** Real HTTP through the router until `stop()`: token requests, then the API with the token; counts failures. */
function requestLoop(base: string, t: TestApp): { stop(): Promise<{ ok: number; failed: string[] }> } {
  let running = true;
  let ok = 0;
  const failed: string[] = [];
  const loop = (async () => {
    while (running) {
      const res = await fetch(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: basic(t.credentialsClient), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&scope=envelopes%3Aread',
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || !body.access_token) {
        failed.push(`token ${res.status}`);
        continue;
      }
      const api = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${body.access_token}` } });
      await api.arrayBuffer();
      if (api.status === 200) ok += 1;
      else failed.push(`api ${api.status}`);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { ok, failed };
    },
  };
}

function listen(t: TestApp): Promise<{ server: Server; base: string }> {
  return new Promise((resolve) => {
    const server = t.app.listen(0, '127.0.0.1', () => {
      resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    });
  });
}

const report: string[] = [];
afterAll(() => {
  if (report.length) console.info(`housekeeping measurements:\n${report.join('\n')}`);
});

for (const family of families) {
  describe.skipIf(!family.enabled)(`housekeeping of the ${family.name} store`, () => {
    it('purges 100,000 expired tokens back to near the starting size while HTTP requests keep succeeding', { timeout: 120_000 }, async () => {
      const subject = await family.open();
      const t = await createTestApp({}, subject.store);
      // A second router on the same store whose tokens live one second: churn through real HTTP too.
      const shortLived = await createTestApp({ accessTokenTtl: 1 }, subject.store);
      const { server, base } = await listen(t);
      const short = await listen(shortLived);
      try {
        const before = await subject.size();

        // Another user than the churn's: on Redis a user's index set lives as long as its longest-lived token.
        const survivors = await saveMany(subject.store, t.codeClient.clientId, 'user-survivor', SURVIVORS / 2, 3_600_000);
        const issuing = performance.now();
        await saveMany(subject.store, t.codeClient.clientId, 'user-churn', CHURN / 2, family.shortTtlMs);
        for (let i = 0; i < 50; i++) {
          const res = await fetch(`${short.base}/oauth2/token`, {
            method: 'POST',
            headers: { authorization: basic(shortLived.credentialsClient), 'content-type': 'application/x-www-form-urlencoded' },
            body: 'grant_type=client_credentials',
          });
          expect(res.status).toBe(200);
        }
        const now = new Date();
        for (let i = 0; i < 200; i++) {
          await subject.store.codes.saveCode({
            codeHash: randomBytes(32).toString('base64url'), grantId: `g-${i}`, clientId: t.codeClient.clientId, userId: 'user-churn',
            redirectUri: 'https://client.example/callback', scope: ['envelopes:read'], codeChallenge: null, issuer: ISSUER,
            issuedAt: now, expiresAt: new Date(now.getTime() + 1000),
          });
          await subject.store.rateLimits?.hit(`churn-${i}`, 1000, now);
        }
        const issuedMs = performance.now() - issuing;
        const full = await subject.size();
        // Every churned token has expired (the last ones were saved just now, with shortTtlMs to live).
        await new Promise((resolve) => setTimeout(resolve, family.shortTtlMs + 100));

        const loop = requestLoop(base, t);
        const delay = monitorEventLoopDelay({ resolution: 10 });
        delay.enable();
        const sweeping = performance.now();
        await subject.purge();
        const sweepMs = performance.now() - sweeping;
        delay.disable();
        const { ok, failed } = await loop.stop();
        const after = await subject.size();

        report.push(
          `${family.name}: issued ${CHURN} in ${issuedMs.toFixed(0)} ms; size before ${JSON.stringify(before)}, full ${JSON.stringify(full)}, ` +
            `after ${JSON.stringify(after)}; purge ${sweepMs.toFixed(0)} ms, max event-loop delay ${(delay.max / 1e6).toFixed(1)} ms, ` +
            `p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms; ${ok} HTTP round trips during it`,
        );
        expect(failed).toEqual([]);
        expect(ok).toBeGreaterThan(0);
        // Back near the start: what lives now is the survivors and the tokens the request loop was issued.
        expect(after.records).toBeLessThan(before.records + 3 * (SURVIVORS + ok) + 10);
        if (after.prefixBytes !== undefined) expect(after.prefixBytes).toBeLessThan((full.prefixBytes ?? 0) / 10);
        // A token not yet expired is never swept.
        for (const survivor of survivors) expect(await subject.store.tokens.findAccessToken(survivor.tokenHash)).not.toBeNull();
        // And the indexes still name it: revoking the integration's tokens finds and removes every survivor.
        await subject.store.tokens.revokeClientTokens?.(t.codeClient.clientId);
        for (const survivor of survivors) expect(await subject.store.tokens.findAccessToken(survivor.tokenHash)).toBeNull();
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await new Promise((resolve) => short.server.close(resolve));
        await subject.dispose();
      }
    });
  });
}

describe('housekeeping of the SQLite store: tombstones and counters', () => {
  it('deletes tombstones past their retention and ended rate-limit windows, and keeps live ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'housekeeping-tombstones-'));
    const filename = join(dir, 'oauth.sqlite');
    const store = createSqliteStore({ filename, sweepIntervalSeconds: 0 });
    const db = new Database(filename);
    try {
      const now = Date.now();
      // Written as a revocation a day ago left them (the retention has just run out), next to live ones.
      const past = now - 1000;
      const later = now + 3_600_000;
      for (const [id, expiresAt] of [['old', past], ['new', later]] as const) {
        db.prepare('INSERT INTO revoked_grants (grant_id, expires_at) VALUES (?, ?)').run(`g-${id}`, expiresAt);
        db.prepare('INSERT INTO revoked_clients (client_id, revoked_at, expires_at) VALUES (?, ?, ?)').run(`c-${id}`, now, expiresAt);
        db.prepare('INSERT INTO revoked_client_users (client_id, user_id, revoked_at, expires_at) VALUES (?, ?, ?, ?)').run(`c-${id}`, 'u', now, expiresAt);
        db.prepare('INSERT INTO rate_limits (key, count, expires_at) VALUES (?, 1, ?)').run(`k-${id}`, expiresAt);
      }
      await store.sweepExpired();
      for (const [table, key] of [['revoked_grants', 'grant_id'], ['revoked_clients', 'client_id'], ['revoked_client_users', 'client_id'], ['rate_limits', 'key']]) {
        const left = db.prepare(`SELECT ${key} AS id FROM ${table}`).all() as { id: string }[];
        expect(left.map((row) => row.id), table).toEqual([`${key === 'key' ? 'k' : key === 'grant_id' ? 'g' : 'c'}-new`]);
      }
    } finally {
      db.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
