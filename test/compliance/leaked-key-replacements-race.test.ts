// Two leaked-key replacements at the same moment (two instances, or an instance and oauth-admin) leave exactly one key, and their results account for every kid once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import type { SigningKeyStore, Store } from '../../src/stores/contract.js';
import { replaceLeakedSigningKeys, type ReplacedSigningKeys } from '../../src/jwt/replace-leaked-keys.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';

const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
const ROUNDS = 10;
const RACERS = 3;

/** A backend, and how to open one more instance's store on it. */
interface Backend {
  instance(): Promise<Store>;
  dispose(): Promise<void>;
}

const BACKENDS: ReadonlyArray<readonly [string, boolean, () => Backend]> = [
  ['memory', true, () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    // One process: every "instance" is the same store object.
    return { instance: async () => ({ ...store, close: async () => {} }), dispose: () => store.close() };
  }],
  ['SQLite', true, () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcar-keys-'));
    return {
      instance: async () => createSqliteStore({ filename: join(dir, 'oauth.sqlite'), sweepIntervalSeconds: 0 }),
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }],
  ['PostgreSQL', POSTGRES_URL !== '', () => {
    const schema = `hcar_keys_${process.pid}_${Date.now().toString(36)}`;
    return {
      instance: () => createPostgresStore({ connectionString: POSTGRES_URL, schema, sweepIntervalSeconds: 0 }),
      async dispose() {
        const db = new pg.Client({ connectionString: POSTGRES_URL });
        await db.connect();
        await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db.end();
      },
    };
  }],
  ['Redis', REDIS_URL !== '', () => {
    const prefix = `hcar:keys:${process.pid}:${Date.now().toString(36)}:`;
    return {
      instance: () => createRedisStore({ url: REDIS_URL, prefix, sweepIntervalSeconds: 0 }),
      async dispose() {
        const redis = createClient({ url: REDIS_URL });
        await redis.connect();
        for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length > 0) await redis.del(keys);
        await redis.quit();
      },
    };
  }],
];

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

async function open(backend: () => Backend, count: number): Promise<SigningKeyStore[]> {
  const shared = backend();
  cleanup.push(() => shared.dispose());
  const keys: SigningKeyStore[] = [];
  for (let i = 0; i < count; i++) {
    const store = await shared.instance();
    cleanup.push(async () => { await store.close?.(); });
    keys.push(store.keys!);
  }
  return keys;
}

/** What every replacement's result must say together: each kid deleted by one call at most, and all but the one left. */
async function expectExactlyOneLeft(keys: SigningKeyStore, results: readonly ReplacedSigningKeys[], leaked: readonly string[], where: string): Promise<void> {
  const left = (await keys.listSigningKeys()).map((key) => key.kid);
  expect(left, `${where}: keys left`).toHaveLength(1);
  const made = results.map((result) => result.kid);
  expect(made, `${where}: the key left is one a replacement made`).toContain(left[0]);
  const deleted = results.flatMap((result) => result.deleted);
  expect(new Set(deleted).size, `${where}: a kid reported deleted twice`).toBe(deleted.length);
  expect([...deleted].sort(), `${where}: every other kid is reported deleted, once`).toEqual([...leaked, ...made].filter((kid) => kid !== left[0]).sort());
}

describe.each(BACKENDS)('RFC 9700 §4.10: leaked-key replacements at the same moment on the %s store', (_label, available, backend) => {
  it.skipIf(!available)('one that lists before the other saves, the other making the newer key: exactly one key is left, its own', async () => {
    const [a, b] = await open(backend, 2);
    const leaked = generateSigningKeyRecord(new Date(Date.now() - 60_000));
    await a!.saveSigningKey(leaked);
    // A reads the keys and picks its key's createdAt, then its save is held until B has run to its end: B's key is
    // newer, and B listed before A's key was there.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const slowA: SigningKeyStore = {
      listSigningKeys: () => a!.listSigningKeys(),
      saveSigningKey: async (record, options) => { await held; return a!.saveSigningKey(record, options); },
      deleteSigningKey: (kid) => a!.deleteSigningKey!(kid),
    };
    const first = replaceLeakedSigningKeys(slowA);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await replaceLeakedSigningKeys(b!);
    release();
    const results = [await first, second];
    await expectExactlyOneLeft(a!, results, [leaked.kid], 'held');
    expect((await a!.listSigningKeys()).map((key) => key.kid)).toEqual([second.kid]);
    expect(results[0]!.deleted, "A deleted its own key: B's newer one signs").toEqual([results[0]!.kid]);
  });

  it.skipIf(!available)(`${RACERS} replacements through ${RACERS} instances at once leave exactly one key, in each of ${ROUNDS} rounds`, async () => {
    const instances = await open(backend, RACERS);
    await Promise.all(instances.map((keys) => keys.listSigningKeys()));
    const first = generateSigningKeyRecord(new Date(Date.now() - 60_000));
    await instances[0]!.saveSigningKey(first);
    let leaked = [first.kid];
    for (let round = 0; round < ROUNDS; round++) {
      const results = await Promise.all(instances.map((keys) => replaceLeakedSigningKeys(keys)));
      await expectExactlyOneLeft(instances[0]!, results, leaked, `round ${round}`);
      leaked = (await instances[0]!.listSigningKeys()).map((key) => key.kid);
    }
  });
});
