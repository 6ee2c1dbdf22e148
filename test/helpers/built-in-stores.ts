// The four built-in stores, each opened fresh (a temp file, schema or key prefix of its own) and thrown away after: for tests run on every store alike.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import type { Store } from '../../src/stores/contract.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';

const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';

/** A store and how to throw it away. */
export interface OpenedStore {
  readonly store: Store;
  /** The `OAUTH_STORE` URL of the same store (PostgreSQL and Redis: the CLI and other processes reach it by it). */
  readonly storeUrl?: string;
  dispose(): Promise<void>;
}

async function dropSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}

async function wipePrefix(prefix: string): Promise<void> {
  const admin = createClient({ url: REDIS_URL });
  await admin.connect();
  // SCAN, never KEYS, as an operator would.
  for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    if (keys.length > 0) await admin.del(keys);
  }
  await admin.quit();
}

const withQuery = (url: string, query: string) => `${url}${url.includes('?') ? '&' : '?'}${query}`;

/** `[label, available here, open]`, the shape `describe.each` takes; PostgreSQL and Redis need their URL variables. */
export type StoreCase = readonly [label: string, available: boolean, open: () => Promise<OpenedStore>];

/** Options every persistent built-in store takes alike (the memory store keeps no copies and ignores them). */
export interface SharedStoreOptions {
  readonly maxIntegrationCopies?: number;
}

/** Where the Redis stores' keys go: under a prefix of the caller's (a run keeping to its own keys), then the store's own. */
export interface RedisPrefixOptions {
  readonly redisPrefix?: string;
}

/**
 * `name` made unique to this process, moment and count. The name is cut to 16 characters: the process id, time and
 * count already keep it apart, and a PostgreSQL schema is at most 41 (the store's `schema` rule), so a long name
 * would otherwise fail only where PostgreSQL is set up.
 */
function uniqueName(name: string, count: number): string {
  return `${name.slice(0, 16)}_${process.pid}_${Date.now().toString(36)}_${count}`;
}

/**
 * The memory, SQLite, PostgreSQL and Redis stores, sweeps off; `name` (letters, digits, `_`) names each one's
 * temp directory, schema or key prefix, with the process id and a counter, so parallel files never share data.
 */
export function builtInStores(name: string, shared: SharedStoreOptions = {}, { redisPrefix = '' }: RedisPrefixOptions = {}): readonly StoreCase[] {
  let opened = 0;
  const unique = () => uniqueName(name, (opened += 1));
  return [
    ['memory', true, async () => ({ store: createMemoryStore({ sweepIntervalSeconds: 0 }), dispose: async () => {} })],
    ['SQLite', true, async () => {
      const dir = mkdtempSync(join(tmpdir(), `${name}-`));
      const store = createSqliteStore({ ...shared, filename: join(dir, 'oauth.sqlite'), sweepIntervalSeconds: 0 });
      return { store, dispose: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
    }],
    ['PostgreSQL', POSTGRES_URL !== '', async () => {
      const schema = unique();
      const store = await createPostgresStore({ ...shared, connectionString: POSTGRES_URL, schema, sweepIntervalSeconds: 0 });
      return {
        store,
        storeUrl: withQuery(POSTGRES_URL, `schema=${schema}`),
        dispose: async () => {
          await store.close();
          await dropSchema(schema);
        },
      };
    }],
    ['Redis', REDIS_URL !== '', async () => {
      const prefix = `${redisPrefix}${unique()}:`;
      const store = await createRedisStore({ ...shared, url: REDIS_URL, prefix, sweepIntervalSeconds: 0 });
      return {
        store,
        storeUrl: withQuery(REDIS_URL, `prefix=${encodeURIComponent(prefix)}`),
        dispose: async () => {
          await store.close();
          await wipePrefix(prefix);
        },
      };
    }],
  ];
}

/** Opens a store of `open`, runs `use` on it, and throws the store away whatever `use` did. */
export async function withOpenedStore<T>(open: () => Promise<OpenedStore>, use: (opened: OpenedStore) => Promise<T>): Promise<T> {
  const opened = await open();
  try {
    return await use(opened);
  } finally {
    await opened.dispose();
  }
}

/** A backend several instances share (a SQLite file, a PostgreSQL schema, a Redis key prefix), and how to throw it away. */
export interface SharedBackend {
  /** Opens one more store on the backend, as another app instance or oauth-admin would; the caller closes it. */
  instance(): Promise<Store>;
  dispose(): Promise<void>;
}

/** `[label, available here, make]` for races across instances; the memory store's instances are one object. */
export type SharedBackendCase = readonly [label: string, available: boolean, make: () => Promise<SharedBackend>];

/** The built-in stores as backends shared by several instances; `memory` adds the memory store (one process). */
export function sharedBackends(name: string, { memory = false, redisPrefix = '' }: { readonly memory?: boolean } & RedisPrefixOptions = {}): readonly SharedBackendCase[] {
  let opened = 0;
  const unique = () => uniqueName(name, (opened += 1));
  const cases: SharedBackendCase[] = [
    ['SQLite', true, async () => {
      const dir = mkdtempSync(join(tmpdir(), `${name}-`));
      const filename = join(dir, 'oauth.sqlite');
      return {
        instance: async () => createSqliteStore({ filename, sweepIntervalSeconds: 0 }),
        dispose: async () => rmSync(dir, { recursive: true, force: true }),
      };
    }],
    ['PostgreSQL', POSTGRES_URL !== '', async () => {
      const schema = unique();
      return {
        instance: () => createPostgresStore({ connectionString: POSTGRES_URL, schema, sweepIntervalSeconds: 0 }),
        dispose: () => dropSchema(schema),
      };
    }],
    ['Redis', REDIS_URL !== '', async () => {
      const prefix = `${redisPrefix}${unique()}:`;
      return {
        instance: () => createRedisStore({ url: REDIS_URL, prefix, sweepIntervalSeconds: 0 }),
        dispose: () => wipePrefix(prefix),
      };
    }],
  ];
  if (!memory) return cases;
  return [['memory', true, async () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    // One process: every "instance" is the same store object, closed once, by dispose.
    return { instance: async () => ({ ...store, close: async () => {} }), dispose: () => store.close() };
  }], ...cases];
}

/**
 * Opens `count` instances on a fresh `backend`, registering their closing and the backend's disposal on `cleanup`
 * (run last-first by the caller's afterEach): several app instances sharing one store.
 */
export async function openSharedInstances(
  backend: () => Promise<SharedBackend>, count: number, cleanup: Array<() => Promise<void>>,
): Promise<Store[]> {
  const shared = await backend();
  cleanup.push(() => shared.dispose());
  const stores: Store[] = [];
  for (let i = 0; i < count; i++) {
    const store = await shared.instance();
    cleanup.push(async () => { await store.close?.(); });
    stores.push(store);
  }
  return stores;
}
