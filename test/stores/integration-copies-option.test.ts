// The stores' `maxIntegrationCopies` option: it bounds the integration copies (contract `clientCopies`), and is checked first.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { builtInStores } from '../helpers/built-in-stores.js';
import { registerAndLookUp } from '../helpers/register-and-look-up.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';

const stores = builtInStores('copies_bound', { maxIntegrationCopies: 3 }).filter(([label]) => label !== 'memory');

describe.each(stores)('%s: maxIntegrationCopies bounds the integration copies (RFC 6749 §2.3.1)', (_label, available, open) => {
  it.skipIf(!available)('keeps a copy of each of the last maxIntegrationCopies integrations looked up, and forgets the oldest past it', async () => {
    const { store, dispose } = await open();
    try {
      const ids = await registerAndLookUp(store, 4);
      expect(ids.map((id) => store.clientCopies!.find(id) !== undefined)).toEqual([false, true, true, true]);
    } finally {
      await dispose();
    }
  });
});

describe('SQLite: findClient answers from its copies under the same bound', () => {
  it('reads the integration looked up longest ago again past maxIntegrationCopies, and none of the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'copies-find-'));
    let selects = 0;
    const db = new Database(join(dir, 'oauth.sqlite'), {
      verbose: (sql) => { if (String(sql).startsWith('SELECT * FROM clients WHERE')) selects += 1; },
    });
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0, maxIntegrationCopies: 3 });
    try {
      const ids = await registerAndLookUp(store, 4);
      const before = selects;
      for (const id of ids.slice(1)) await store.clients.findClient(id);
      expect(selects - before, 'the three kept').toBe(0);
      await store.clients.findClient(ids[0]!);
      expect(selects - before, 'the one forgotten').toBe(1);
    } finally {
      await store.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(builtInStores('copies_default').filter(([label]) => label !== 'memory'))('%s: the default bound', (_label, available, open) => {
  it.skipIf(!available)('keeps more than three copies without the option (10,000 by default)', async () => {
    const { store, dispose } = await open();
    try {
      const ids = await registerAndLookUp(store, 4);
      expect(ids.every((id) => store.clientCopies!.find(id) !== undefined)).toBe(true);
    } finally {
      await dispose();
    }
  });
});

describe('maxIntegrationCopies is checked before anything is opened', () => {
  const dir = mkdtempSync(join(tmpdir(), 'copies-option-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const bad: unknown[] = [0, -1, 1.5, Number.NaN, 10_000_001, '100', null];

  it.each(bad)('createSqliteStore refuses %s with a TypeError naming the option, and makes no file', (value) => {
    expect(() => createSqliteStore({ filename: join(dir, 'refused.sqlite'), maxIntegrationCopies: value as number }))
      .toThrow(/createSqliteStore: option "maxIntegrationCopies" must be an integer from 1 to 10000000/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('createPostgresStore and createRedisStore refuse it before connecting (the addresses here accept nothing)', async () => {
    await expect(createPostgresStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none', maxIntegrationCopies: 0 }))
      .rejects.toThrow(/createPostgresStore: option "maxIntegrationCopies"/);
    await expect(createRedisStore({ url: 'redis://127.0.0.1:1', maxIntegrationCopies: 0 }))
      .rejects.toThrow(/createRedisStore: option "maxIntegrationCopies"/);
  });
});
