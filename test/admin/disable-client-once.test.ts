// A disable is reported once: retried, or run by several instances at the same moment, only the call that disabled it publishes client.disabled.
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { builtInStores } from '../helpers/built-in-stores.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';

const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
/** Instances racing, each with its own store object on the shared backend, as app instances and oauth-admin are. */
const INSTANCES = 4;
const ROUNDS = 10;

/** Opens one store on a shared backend (a SQLite file, a PostgreSQL schema, a Redis key prefix): one instance of an app. */
type Instance = () => Promise<Store>;

/** `[label, available, backend]`: the backend is made, then each call of its Instance opens another store on it. */
const SHARED_BACKENDS: ReadonlyArray<readonly [string, boolean, () => Promise<{ instance: Instance; dispose(): Promise<void> }>]> = [
  ['SQLite', true, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcar-disable-'));
    const filename = join(dir, 'oauth.sqlite');
    return { instance: async () => createSqliteStore({ filename, sweepIntervalSeconds: 0 }), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  }],
  ['PostgreSQL', POSTGRES_URL !== '', async () => {
    const schema = `hcar_disable_${process.pid}_${Date.now().toString(36)}`;
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
  ['Redis', REDIS_URL !== '', async () => {
    const prefix = `hcar:disable:${process.pid}:${Date.now().toString(36)}:`;
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

describe.each(builtInStores('hcar_disable_once'))('disableClient on the %s store: client.disabled once per disable (README "Audit events")', (_label, available, open) => {
  it.skipIf(!available)('a retried disable publishes no second client.disabled, and says it was disabled already', async () => {
    const opened = await open();
    cleanup.push(() => opened.dispose());
    const events = new OAuthEvents();
    const seen: string[] = [];
    events.on('event', (event: OAuthEvent) => seen.push(event.type));
    const admin = createOAuthAdmin(opened.store, { events });
    const { client } = await registerClient(opened.store, { name: 'Partner sync', flow: 'client_credentials' });
    const first = await admin.disableClient(client.clientId);
    const retried = await admin.disableClient(client.clientId);
    expect(seen).toEqual(['client.disabled', 'token.revoked', 'token.revoked']);
    expect([first, retried]).toEqual([{ alreadyDisabled: false }, { alreadyDisabled: true }]);
    await admin.enableClient(client.clientId);
    expect(await admin.disableClient(client.clientId)).toEqual({ alreadyDisabled: false });
    expect(seen.filter((type) => type === 'client.disabled')).toHaveLength(2);
  });

});

describe.each(SHARED_BACKENDS)('disableClient through several instances of the %s store (README "Audit events")', (_label, available, backend) => {
  it.skipIf(!available)(`${INSTANCES} instances disabling one integration at once publish exactly one client.disabled, in each of ${ROUNDS} rounds`, async () => {
    const shared = await backend();
    cleanup.push(() => shared.dispose());
    const peers: Store[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const peer = await shared.instance();
      cleanup.push(async () => { await peer.close?.(); });
      peers.push(peer);
    }
    const events = new OAuthEvents();
    const disabled: string[] = [];
    events.on('client.disabled', (event) => disabled.push(event.clientId));
    const admins = peers.map((store) => createOAuthAdmin(store, { events }));
    // Warm, as a running server's pools are: a cold pool serialises the racers while it connects.
    await Promise.all(peers.map((store) => store.clients.findClient('warm-up')));
    for (let round = 0; round < ROUNDS; round++) {
      const { client } = await registerClient(peers[0]!, { name: `Partner ${round}`, flow: 'client_credentials' });
      const results = await Promise.all(admins.map((admin) => admin.disableClient(client.clientId)));
      expect(disabled.filter((id) => id === client.clientId), `round ${round}: client.disabled events`).toHaveLength(1);
      expect(results.filter((result) => !result.alreadyDisabled), `round ${round}`).toHaveLength(1);
    }
  });
});
