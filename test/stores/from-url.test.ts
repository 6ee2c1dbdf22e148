// createStoreFromUrl: the OAUTH_STORE syntax picks the store; bad URLs fail with a clear, secret-free message.
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createStoreFromUrl, DEFAULT_STORE_URL } from '../../src/stores/from-url.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import { registerAndLookUp } from '../helpers/register-and-look-up.js';
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

/** Which of `count` integrations registered and looked up in order (`registerAndLookUp`) the store keeps a copy of. */
async function keptCopies(store: CompleteStore, count: number): Promise<boolean[]> {
  const ids = await registerAndLookUp(store, count);
  return ids.map((id) => store.clientCopies!.find(id) !== undefined);
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
    ['no integration copies', 'sqlite:./x.sqlite?max_integration_copies=0', /^OAUTH_STORE: max_integration_copies must be an integer from 1 to 10000000 \(got 0\)$/],
    ['the option\'s name for the parameter', 'sqlite:./x.sqlite?maxIntegrationCopies=5', /unknown sqlite: parameter "maxIntegrationCopies"; known: synchronous, lock_timeout_ms, max_integration_copies/],
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
    await expect(createStoreFromUrl('postgres://127.0.0.1:1/db?table_prefix=a&table_prefix=b')).rejects.toThrow(/"table_prefix" parameter once/);
    await expect(createStoreFromUrl('postgres://127.0.0.1:1/db?table_prefix=x-y')).rejects.toThrow(/option "tablePrefix"/);
  });

  it('?wait_replicas=&wait_timeout_ms= set waitForReplicas on both Redis forms, and are refused half-given, before connecting', async () => {
    // The store's own check of the values answers: the parameters reached createRedisStore, not the driver.
    await expect(createStoreFromUrl('redis://127.0.0.1:1?wait_replicas=0&wait_timeout_ms=100')).rejects.toThrow(/"waitForReplicas.replicas"/);
    await expect(createStoreFromUrl('redis+cluster://127.0.0.1:1,127.0.0.1:2?prefix=a:&wait_replicas=1&wait_timeout_ms=5000'))
      .rejects.toThrow('OAUTH_STORE: wait_timeout_ms must be from 1 to 4999 (milliseconds, below the Redis store\'s command timeout, 5000 ms)');
    // Named as the URL names it: the store's own message names "commandTimeoutMs", which no URL parameter sets.
    await expect(createStoreFromUrl('redis://127.0.0.1:1?wait_replicas=1&wait_timeout_ms=0')).rejects.toThrow(/wait_timeout_ms must be from 1 to 4999/);
    await expect(createStoreFromUrl('redis://127.0.0.1:1?wait_replicas=1')).rejects.toThrow(/"wait_replicas" and "wait_timeout_ms" together/);
    await expect(createStoreFromUrl('redis+cluster://127.0.0.1:1?wait_timeout_ms=100')).rejects.toThrow(/together/);
    await expect(createStoreFromUrl('rediss://127.0.0.1:1?wait_replicas=one&wait_timeout_ms=100')).rejects.toThrow(/whole numbers/);
    await expect(createStoreFromUrl('redis+cluster://127.0.0.1:1?wait_replicas=1&wait_replicas=2&wait_timeout_ms=1')).rejects.toThrow(/"wait_replicas" parameter once/);
  });

  it.each([
    ['sqlite:./x.sqlite', 'a word'],
    ['sqlite:./x.sqlite', '1e3'],
    ['postgres://127.0.0.1:1/db', '0'],
    ['postgresql://127.0.0.1:1/db?schema=a', '10000001'],
    ['postgres://127.0.0.1:1/db', '-1'],
    ['redis://127.0.0.1:1', '2.5'],
    ['rediss://127.0.0.1:1?prefix=a:', '0x10'],
    ['redis+cluster://127.0.0.1:1,127.0.0.1:2', '0'],
  ])('%s with ?max_integration_copies=%s is refused with the option\'s message, naming the parameter, before connecting', async (url, value) => {
    const cwd = process.cwd();
    process.chdir(tempDir());
    try {
      await expect(createStoreFromUrl(withParam(url, `max_integration_copies=${encodeURIComponent(value)}`))).rejects.toThrow(
        new TypeError(`OAUTH_STORE: max_integration_copies must be an integer from 1 to 10000000 (got ${value})`),
      );
      expect(existsSync('x.sqlite')).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });

  it('?max_integration_copies= given twice or empty is refused before connecting', async () => {
    await expect(createStoreFromUrl('postgres://127.0.0.1:1/db?max_integration_copies=5&max_integration_copies=6')).rejects.toThrow(/"max_integration_copies" parameter once/);
    await expect(createStoreFromUrl('redis://127.0.0.1:1?max_integration_copies=')).rejects.toThrow(/"max_integration_copies" parameter once, with a value/);
    await expect(createStoreFromUrl('redis+cluster://127.0.0.1:1?max_integration_copies=1&max_integration_copies=1')).rejects.toThrow(/"max_integration_copies" parameter once/);
  });

  it('sqlite:PATH?max_integration_copies=N bounds the store\'s integration copies', async () => {
    const store = await open(`sqlite:${join(tempDir(), 'copies.sqlite')}?max_integration_copies=3`);
    expect(await keptCopies(store, 4)).toEqual([false, true, true, true]);
  });

  it.each([
    ['postgres://127.0.0.1:1/db?schema=a&tablePrefix=ah_', 'tablePrefix', 'schema, table_prefix, max_integration_copies'],
    ['postgresql://127.0.0.1:1/db?table-prefix=ah_', 'table-prefix', 'schema, table_prefix, max_integration_copies'],
    ['postgres://127.0.0.1:1/db?prefix=ah_', 'prefix', 'schema, table_prefix, max_integration_copies'],
    ['postgres://127.0.0.1:1/db?maxIntegrationCopies=5', 'maxIntegrationCopies', 'schema, table_prefix, max_integration_copies'],
    ['redis://127.0.0.1:1?schema=oauth', 'schema', 'prefix, wait_replicas, wait_timeout_ms, max_integration_copies'],
    ['rediss://127.0.0.1:1?key_prefix=x:', 'key_prefix', 'prefix, wait_replicas, wait_timeout_ms, max_integration_copies'],
    ['redis://127.0.0.1:1?max-integration-copies=5', 'max-integration-copies', 'prefix, wait_replicas, wait_timeout_ms, max_integration_copies'],
    ['redis+cluster://127.0.0.1:1,127.0.0.1:2?table_prefix=x', 'table_prefix', 'prefix, wait_replicas, wait_timeout_ms, max_integration_copies'],
    ['postgres://127.0.0.1:1/db?wait_replicas=1', 'wait_replicas', 'schema, table_prefix, max_integration_copies'],
  ])('another store\'s parameter is refused by name before connecting, not left to the driver to ignore: %s', async (url, name, own) => {
    const scheme = url.slice(0, url.indexOf(':'));
    await expect(createStoreFromUrl(url)).rejects.toThrow(
      new TypeError(`OAUTH_STORE: unknown ${scheme}: parameter "${name}"; this store's own are ${own}`),
    );
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

describe.skipIf(!pgUrl)('createStoreFromUrl: postgres://…?table_prefix=STR, and { mustExist }', () => {
  const schema = `oauth_url_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  /** The tables of the test's schema, by name. */
  async function tablesOfSchema(): Promise<string[]> {
    const { rows } = await admin.query<{ name: string }>(
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema]);
    return rows.map((row) => row.name);
  }

  it('mustExist on a schema without the store\'s tables rejects with ENOENT naming the schema and prefix, and creates nothing', async () => {
    const url = withParam(withParam(pgUrl, `schema=${schema}`), 'table_prefix=ah_');
    const failure = await createStoreFromUrl(url, { mustExist: true }).then(() => undefined, (err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).toMatchObject({ code: 'ENOENT', path: `PostgreSQL schema "${schema}" with table prefix "ah_"` });
    const { rows } = await admin.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    expect(rows).toEqual([]);
  });

  it('table_prefix names the tables; mustExist then opens them, and a store under another prefix is still refused', async () => {
    const url = withParam(withParam(pgUrl, `schema=${schema}`), 'table_prefix=ah_');
    const store = await open(url);
    const { client } = buildClient();
    await store.clients.createClient!(client);
    expect(await tablesOfSchema()).toContain('ah_clients');
    expect((await tablesOfSchema()).filter((name) => !name.startsWith('ah_'))).toEqual([]);
    const existing = await open(url);
    await existing.close?.();
    const reopened = await createStoreFromUrl(url, { mustExist: true });
    opened.push(reopened);
    expect((await reopened.clients.findClient(client.clientId))?.name).toBe(client.name);
    await expect(createStoreFromUrl(withParam(pgUrl, `schema=${schema}`), { mustExist: true }))
      .rejects.toMatchObject({ code: 'ENOENT', path: `PostgreSQL schema "${schema}"` });
    expect((await tablesOfSchema()).filter((name) => !name.startsWith('ah_'))).toEqual([]);
  });

  it('max_integration_copies bounds the store\'s integration copies, and is not passed on to the driver', async () => {
    const store = await open(withParam(withParam(pgUrl, `schema=${schema}`), 'table_prefix=mc_&max_integration_copies=3'));
    expect(await keptCopies(store, 4)).toEqual([false, true, true, true]);
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

  it('?max_integration_copies= bounds the store\'s integration copies', async () => {
    const prefix = `oauth-url-${process.pid}-${Math.random().toString(36).slice(2, 8)}:`;
    const admin = createClient({ url: redisUrl });
    await admin.connect();
    try {
      const store = await open(withParam(redisUrl, `prefix=${encodeURIComponent(prefix)}&max_integration_copies=3`));
      expect(await keptCopies(store, 4)).toEqual([false, true, true, true]);
      const keys: string[] = [];
      for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
      if (keys.length > 0) await admin.del(keys);
    } finally {
      admin.destroy();
    }
  });
});
