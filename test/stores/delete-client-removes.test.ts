// The stores that can reach codes and consents by integration remove them with it: stricter than the
// conformance rule ("gone or inert"), which a store that cannot (Redis) also meets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { AdministrationStore, ConsentsStore, Store } from '../../src/stores/contract.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { buildClient, buildCode, buildConsent } from '../../src/testing/conformance-fixtures.js';

const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const unique = `${process.pid}_${Date.now().toString(36)}`;

/** A store and how to throw it away. */
interface OpenedStore {
  readonly store: Store;
  dispose(): Promise<void>;
}

const STORES: ReadonlyArray<readonly [string, boolean, () => Promise<OpenedStore>]> = [
  ['memory', true, async () => ({ store: createMemoryStore(), dispose: async () => {} })],
  ['SQLite', true, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delete-client-'));
    const store = createSqliteStore({ filename: join(dir, 'oauth.sqlite'), sweepIntervalSeconds: 0 });
    return { store, dispose: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  }],
  ['PostgreSQL', POSTGRES_URL !== '', async () => {
    const schema = `delete_client_${unique}`;
    const store = await createPostgresStore({ connectionString: POSTGRES_URL, schema, sweepIntervalSeconds: 0 });
    return {
      store,
      dispose: async () => {
        await store.close();
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      },
    };
  }],
];

describe.each(STORES)('deleteClient of the %s store', (_name, available, open) => {
  it.skipIf(!available)("removes the integration's codes and consents, not only makes them inert (RFC 7009 §2.1)", async () => {
    const opened = await open();
    try {
      const store = opened.store as AdministrationStore & ConsentsStore;
      const { client } = buildClient();
      const { client: other } = buildClient();
      await store.clients.createClient(client);
      await store.clients.createClient(other);
      const code = buildCode({ clientId: client.clientId });
      await store.codes.saveCode(code);
      await store.consents.saveConsent(buildConsent({ userId: 'alice', clientId: client.clientId }));
      await store.consents.saveConsent(buildConsent({ userId: 'alice', clientId: other.clientId }));
      await store.tokens.revokeClientTokens(client.clientId);
      expect(await store.clients.deleteClient!(client.clientId)).toBe(true);
      expect((await store.codes.consumeCode(code.codeHash)).kind).toBe('not_found');
      expect(await store.consents.findConsent('alice', client.clientId)).toBeNull();
      expect((await store.consents.listConsents('alice')).map((c) => c.clientId)).toEqual([other.clientId]);
    } finally {
      await opened.dispose();
    }
  });
});
