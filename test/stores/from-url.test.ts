// createStoreFromUrl: the OAUTH_STORE syntax picks the store; bad URLs fail with a clear, secret-free message.
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { createStoreFromUrl, DEFAULT_STORE_URL } from '../../src/stores/from-url.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import type { CompleteStore, Store } from '../../src/stores/contract.js';

const pgUrl = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const redisUrl = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!pgUrl || !redisUrl) {
  console.info(`createStoreFromUrl ?schema=/?prefix= tests skipped: set ${[
    ...(pgUrl ? [] : ['OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test']),
    ...(redisUrl ? [] : ['OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379']),
  ].join(' and ')} to run them`);
}

/** Appends a query parameter to a URL that may already have a query. */
function withParam(url: string, param: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${param}`;
}

const opened: Store[] = [];
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-from-url-'));
  dirs.push(dir);
  return dir;
}

async function open(url: string): Promise<CompleteStore> {
  const store = await createStoreFromUrl(url);
  opened.push(store);
  return store;
}

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close?.();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('createStoreFromUrl', () => {
  it('DEFAULT_STORE_URL is the SQLite file under ./data', () => {
    expect(DEFAULT_STORE_URL).toBe('sqlite:./data/oauth.sqlite');
  });

  it('memory: opens an empty in-memory store', async () => {
    const store = await open('memory:');
    expect(await store.clients.listClients()).toEqual([]);
  });

  it('sqlite:/abs/path opens that file and creates its missing parent directory', async () => {
    const file = join(tempDir(), 'nested', 'dir', 'oauth.sqlite');
    const store = await open(`sqlite:${file}`);
    const { client } = buildClient();
    await store.clients.createClient!(client);
    expect(existsSync(file)).toBe(true);
  });

  it('{ mustExist: true } opens an existing SQLite file and its data', async () => {
    const file = join(tempDir(), 'existing.sqlite');
    const { client } = buildClient();
    await (await open(`sqlite:${file}`)).clients.createClient!(client);
    const store = await createStoreFromUrl(`sqlite:${file}`, { mustExist: true });
    opened.push(store);
    expect((await store.clients.findClient(client.clientId))?.name).toBe(client.name);
  });

  it('{ mustExist: true } on a missing SQLite file rejects with ENOENT and creates neither file nor directory', async () => {
    const dir = tempDir();
    const file = join(dir, 'nested', 'oauth.sqlite');
    const error = await createStoreFromUrl(`sqlite:${file}`, { mustExist: true }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'ENOENT', path: file, message: `createSqliteStore: no database file at ${file}` });
    expect(existsSync(join(dir, 'nested'))).toBe(false);
  });

  it('sqlite:./relative resolves against the working directory', async () => {
    const file = join(tempDir(), 'rel.sqlite');
    await open(`sqlite:${relative(process.cwd(), file)}`);
    expect(existsSync(file)).toBe(true);
  });

  it('sqlite:///abs/path (URL style) is read as the absolute path', async () => {
    const file = join(tempDir(), 'url-style.sqlite');
    await open(`sqlite://${file}`);
    expect(existsSync(file)).toBe(true);
  });

  it('the scheme is case-insensitive and surrounding spaces are ignored', async () => {
    const store = await open('  MEMORY:  ');
    expect(await store.clients.listClients()).toEqual([]);
  });

  it('sqlite:PATH?synchronous=…&lock_timeout_ms=… opens that file, the query not being part of its name', async () => {
    const file = join(tempDir(), 'options.sqlite');
    const store = await open(`sqlite:${file}?synchronous=normal&lock_timeout_ms=250`);
    await store.clients.createClient!(buildClient().client);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}?synchronous=normal&lock_timeout_ms=250`)).toBe(false);
    // What synchronous=normal changes on disk is checked under strace (sqlite-sync-order.test.ts).
  });

  it.each([
    ['an unknown parameter', 'sqlite:./x.sqlite?synchronus=normal', /unknown sqlite: parameter "synchronus"; known: synchronous, lock_timeout_ms/],
    ['a level SQLite offers but the store does not', 'sqlite:./x.sqlite?synchronous=off', /synchronous must be full or normal/],
    ['a lock timeout that is not a whole number', 'sqlite:./x.sqlite?lock_timeout_ms=1e3', /lock_timeout_ms must be a whole number/],
    ['a parameter given twice', 'sqlite:./x.sqlite?synchronous=full&synchronous=normal', /give the "synchronous" parameter once/],
    ['an empty parameter', 'sqlite:./x.sqlite?synchronous=', /give the "synchronous" parameter once, with a value/],
  ])('sqlite: with %s is refused before any file is made', async (_label, url, message) => {
    const cwd = process.cwd();
    const dir = tempDir();
    process.chdir(dir);
    try {
      await expect(createStoreFromUrl(url)).rejects.toThrow(message);
      expect(existsSync(join(dir, 'x.sqlite'))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });

  it('sqlite: without a path is refused', async () => {
    await expect(createStoreFromUrl('sqlite:')).rejects.toThrow(/file path/);
  });

  it('an unknown scheme fails naming the supported ones', async () => {
    await expect(createStoreFromUrl('mongodb://db/oauth')).rejects.toThrow(
      /unsupported store scheme "mongodb:".*sqlite:PATH.*memory:.*postgres.*redis/,
    );
  });

  it('a URL without a scheme fails without echoing what could be a password', async () => {
    const error = await createStoreFromUrl('//admin:hunter2@db').then(() => null, (e: unknown) => e as Error);
    expect(error?.message).toMatch(/supported: sqlite:PATH/);
    expect(error?.message).not.toContain('hunter2');
    await expect(createStoreFromUrl('./data/oauth.sqlite')).rejects.toThrow(/supported/);
  });

  it('?schema= and ?prefix= given twice or empty are refused before connecting', async () => {
    await expect(createStoreFromUrl('postgres://127.0.0.1:1/db?schema=a&schema=b')).rejects.toThrow(/"schema" parameter once/);
    await expect(createStoreFromUrl('postgres://127.0.0.1:1/db?schema=')).rejects.toThrow(TypeError);
    await expect(createStoreFromUrl('redis://127.0.0.1:1?prefix=')).rejects.toThrow(/"prefix" parameter once/);
    // Spliced into SQL: only plain identifiers pass, checked before any connection is made.
    await expect(createStoreFromUrl('postgres://127.0.0.1:1/db?schema=x%22%3Bdrop')).rejects.toThrow(/option "schema"/);
  });
});

describe.skipIf(!pgUrl)('createStoreFromUrl: postgres://…?schema=NAME', () => {
  it('puts the tables in that schema and passes the other parameters on to the driver', async () => {
    const schema = `oauth_url_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
    try {
      const store = await open(withParam(withParam(pgUrl, `schema=${schema}`), 'application_name=from-url-test'));
      const { client } = buildClient();
      await store.clients.createClient!(client);
      const { rows } = await admin.query<{ n: string }>(
        'SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1', [schema]);
      expect(Number(rows[0]!.n)).toBeGreaterThan(0);
      const found = await admin.query(`SELECT 1 FROM "${schema}".clients WHERE client_id = $1`, [client.clientId]);
      expect(found.rowCount).toBe(1);
      expect((await store.clients.findClient(client.clientId))?.name).toBe(client.name);
    } finally {
      for (const store of opened.splice(0)) await store.close?.();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});

describe.skipIf(!redisUrl)('createStoreFromUrl: redis://…?prefix=STR', () => {
  it('keeps every key under that prefix', async () => {
    const prefix = `oauth-url-${process.pid}-${Math.random().toString(36).slice(2, 8)}:`;
    const admin = createClient({ url: redisUrl });
    await admin.connect();
    try {
      const store = await open(withParam(redisUrl, `prefix=${encodeURIComponent(prefix)}`));
      const { client } = buildClient();
      await store.clients.createClient!(client);
      const keys: string[] = [];
      for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
      expect(keys).toContain(`${prefix}client:${client.clientId}`);
      expect((await store.clients.findClient(client.clientId))?.name).toBe(client.name);
      if (keys.length > 0) await admin.del(keys);
    } finally {
      admin.destroy();
    }
  });
});
