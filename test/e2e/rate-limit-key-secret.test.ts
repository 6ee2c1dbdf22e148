// The rate-limit counters' keys, as a store keeps them: a keyed MAC under a secret every instance shares (session.secret
// or rateLimitKeySecret), so a dictionary does not recover the usernames and addresses they count, and instances under
// one secret still count together; without any secret, the unkeyed SHA-256 of before, and a warning in production.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'express';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFromUrl } from '../../src/stores/from-url.js';
import type { CompleteStore, Store } from '../../src/stores/contract.js';
import { instrumentStore } from '../../src/metrics/instrument-store.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { accountOf, sourceOf } from '../../src/http/rate-limit-keys.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { createTestApp, createTestRouter, USER } from '../helpers/app.js';
import { sharedStoreBackends } from '../helpers/example-app-processes.js';
import { loginAttempt, tokenAttempt } from '../helpers/rate-limit-attempts.js';
import { withConnection } from '../helpers/sqlite-connection.js';

const directory = mkdtempSync(join(tmpdir(), 'eor-limit-keys-'));
const sqliteFile = join(directory, 'oauth.sqlite');
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Every rate-limit key the store holds, read behind its back as an operator (or an intruder) would. */
type RawKeys = (storeUrl: string) => Promise<string[]>;
const rawKeysBy: Record<string, RawKeys> = {
  SQLite: async () => withConnection(sqliteFile, (db) => db.prepare('SELECT key FROM rate_limits').pluck().all() as string[]),
  async PostgreSQL(storeUrl) {
    const url = new URL(storeUrl);
    const schema = url.searchParams.get('schema')!;
    url.searchParams.delete('schema');
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return (await client.query<{ key: string }>(`SELECT key FROM "${schema}".rate_limits`)).rows.map((row) => row.key);
    } finally {
      await client.end();
    }
  },
  async Redis(storeUrl) {
    const url = new URL(storeUrl);
    const prefix = `${url.searchParams.get('prefix')!}rl:`;
    url.searchParams.delete('prefix');
    const client = createClient({ url: url.toString() });
    await client.connect();
    try {
      const keys: string[] = [];
      for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
      return keys.map((key) => key.slice(prefix.length));
    } finally {
      client.destroy();
    }
  },
};
const backends = [
  { name: 'SQLite', enabled: true, storeUrl: `sqlite:${sqliteFile}`, cleanup: async () => undefined },
  ...sharedStoreBackends('limitkeys').filter((backend) => backend.name in rawKeysBy),
];

/** The key an unkeyed SHA-256 gave (the router's keys up to 0.3.0): what a dictionary attack reverses. */
const bareKey = (kind: string, ...parts: string[]): string =>
  `eor:${kind}:${createHash('sha256').update(JSON.stringify(parts)).digest('base64url')}`;

/** Every key a dictionary would try for alice, the client and the test's loopback source, unkeyed. */
function dictionaryKeys(clientId: string): Set<string> {
  const sources = ['127.0.0.1', '::ffff:127.0.0.1', '::1'].map((ip) => sourceOf({ ip } as Request));
  const account = accountOf(USER.username);
  return new Set([
    bareKey('login-account', account),
    ...sources.flatMap((source) => [
      bareKey('login-source', source), bareKey('login-pair', account, source),
      bareKey('client-source', source), bareKey('client-pair', clientId, source),
    ]),
  ]);
}

const limits = { loginRateLimit: { max: 3 }, clientAuthRateLimit: { max: 3 } } satisfies Partial<OAuthRouterOptions>;

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`rate-limit counter keys in ${backend.name}`, () => {
    const opened: CompleteStore[] = [];
    const open = async (): Promise<CompleteStore> => {
      const store = await createStoreFromUrl(backend.storeUrl);
      opened.push(store);
      return store;
    };
    const rawKeys = async (): Promise<string[]> => rawKeysBy[backend.name]!(backend.storeUrl);
    // Each test starts from no counters: the routers of one test share the store, those of two tests must not.
    afterEach(async () => {
      await Promise.all(opened.splice(0).map(async (store) => {
        for (const key of await rawKeys()) await store.rateLimits.reset(key);
        await store.close?.();
      }));
    });
    afterAll(() => backend.cleanup());

    it('a key under session.secret is a keyed MAC: no dictionary of usernames, client_ids and addresses finds it', async () => {
      const a = await createTestApp(limits, await open());
      expect(await loginAttempt(a, 'wrong')).toBe(400);
      expect(await tokenAttempt(a, a.credentialsClient.clientId, 'wrong')).toBe(401);
      const keys = await rawKeys();
      // Still short printable ASCII of one shape, one per counter: eor:<kind>:<43 base64url characters>.
      expect(keys.map((key) => key.split(':')[1]).sort()).toEqual(
        ['client-pair', 'client-source', 'login-account', 'login-pair', 'login-source']);
      for (const key of keys) expect(key).toMatch(/^eor:[a-z-]+:[A-Za-z0-9_-]{43}$/);
      // The kind is MACed too: one source's sign-in and client counters do not show as one digest.
      expect(new Set(keys.map((key) => key.split(':')[2])).size).toBe(keys.length);
      const dictionary = dictionaryKeys(a.credentialsClient.clientId);
      expect(keys.filter((key) => dictionary.has(key))).toEqual([]);
    });

    it('two routers under one rateLimitKeySecret count together, whatever their session secrets', async () => {
      const shared = { ...limits, rateLimitKeySecret: 'rate-limit-key-secret-0123456789' };
      const a = await createTestApp({ ...shared, session: { secret: 'session-secret-of-a-0123456789' } }, await open());
      const b = await createTestApp({ ...shared, session: { secret: 'session-secret-of-b-0123456789' } }, await open());
      expect([await loginAttempt(a, 'wrong'), await loginAttempt(a, 'wrong')]).toEqual([400, 400]);
      expect([await loginAttempt(b, 'wrong'), await loginAttempt(b, USER.password)]).toEqual([400, 429]);
      const { clientId } = a.credentialsClient;
      for (const t of [a, a, b]) expect(await tokenAttempt(t, clientId, 'wrong')).toBe(401);
      expect(await tokenAttempt(b, clientId, 'wrong')).toBe(429);
    });

    it('two routers under different secrets count apart (a secret change starts the counters afresh)', async () => {
      const a = await createTestApp({ ...limits, session: { secret: 'session-secret-of-a-0123456789' } }, await open());
      const b = await createTestApp({ ...limits, session: { secret: 'session-secret-of-b-0123456789' } }, await open());
      expect([await loginAttempt(a, 'wrong'), await loginAttempt(a, 'wrong')]).toEqual([400, 400]);
      expect(await loginAttempt(b, 'wrong')).toBe(400);
      expect(await loginAttempt(b, USER.password)).toBe(303);
      const { clientId } = a.credentialsClient;
      for (const t of [a, a, b, b]) expect(await tokenAttempt(t, clientId, 'wrong')).toBe(401);
    });

    it('without any secret, keys stay the unkeyed SHA-256 of before, so instances still count together', async () => {
      const a = await createTestApp({ ...limits, session: {} }, await open());
      const b = await createTestApp({ ...limits, session: {} }, await open());
      expect([await loginAttempt(a, 'wrong'), await loginAttempt(a, 'wrong')]).toEqual([400, 400]);
      expect([await loginAttempt(b, 'wrong'), await loginAttempt(b, USER.password)]).toEqual([400, 429]);
      expect((await rawKeys()).filter((key) => key.startsWith('eor:login-account:'))).toEqual([bareKey('login-account', accountOf(USER.username))]);
    });
  });
}

describe('no secret for the rate-limit keys under NODE_ENV=production', () => {
  const nodeEnv = process.env.NODE_ENV;
  afterEach(() => {
    process.env.NODE_ENV = nodeEnv;
  });

  /** The rateLimitKeySecret warnings a router over `store` gives as it starts, as a host's logger receives them. */
  const warningsOf = (options: Partial<OAuthRouterOptions>, store: Store = sharedCounters): string[] => {
    const warnings: string[] = [];
    process.env.NODE_ENV = 'production';
    createTestRouter(store, { session: { hostSession: true }, logger: { warn: (m) => warnings.push(m), error() {} }, ...options });
    return warnings.filter((warning) => warning.includes('rateLimitKeySecret'));
  };
  /** A SQLite file: its counters' keys are rows every process on the file (and a backup, a query log) reads. */
  let sharedCounters: Store;
  beforeAll(async () => {
    sharedCounters = await createStoreFromUrl(`sqlite:${join(directory, 'warning.sqlite')}`);
  });
  afterAll(async () => sharedCounters.close?.());

  it('warns once at start-up, naming rateLimitKeySecret, when a limit counts in a store under unkeyed keys', () => {
    expect(warningsOf({})).toEqual([expect.stringMatching(/unkeyed SHA-256/)]);
    expect(warningsOf({ loginRateLimit: false })).toHaveLength(1);
  });

  it('says nothing with rateLimitKeySecret, or with both limits off', () => {
    expect(warningsOf({ rateLimitKeySecret: 'rate-limit-key-secret-0123456789' })).toEqual([]);
    expect(warningsOf({ loginRateLimit: false, clientAuthRateLimit: false })).toEqual([]);
  });

  it('says nothing when the counters never leave the process: the memory store, or a store without the rateLimits tier', () => {
    expect(warningsOf({}, createMemoryStore())).toEqual([]);
    // Metrics time the calls without taking the counters anywhere (a call's labels never hold an argument).
    expect(warningsOf({}, instrumentStore(createMemoryStore(), () => undefined))).toEqual([]);
    const { rateLimits: _counters, ...withoutCounters } = createMemoryStore();
    expect(warningsOf({}, withoutCounters)).toEqual([]);
  });
});
