// Integration copies (SQLite, PostgreSQL, Redis): the token endpoint skips the lookup, and any change counts from its commit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createClient } from 'redis';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REDIRECT_URI, basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { apiStatus, codeTokens, refresh } from '../helpers/token-requests.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createRedisKeys } from '../../src/stores/redis/codec.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import type { CompleteStore, OAuthClient, Store } from '../../src/stores/contract.js';

const postgresUrl = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const redisUrl = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!postgresUrl || !redisUrl) {
  console.info('Integration-copy tests skipped for a missing engine: set OAUTH_TEST_POSTGRES_URL and OAUTH_TEST_REDIS_URL to run them all');
}

const sql = postgresUrl ? new pg.Pool({ connectionString: postgresUrl, max: 2 }) : null;
const redis = createClient({ url: redisUrl || 'redis://127.0.0.1:6379' });
beforeAll(async () => { if (redisUrl) await redis.connect(); });
afterAll(async () => {
  await sql?.end();
  if (redisUrl) await redis.close();
});
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A change of one field written behind the package's back, as a previous version's CLI, a DBA or redis-cli would. */
type Field = 'disabled' | 'clientSecretHash' | 'tokenEndpointAuthMethod' | 'allowedScopes' | 'redirectUris' | 'name';

/** An engine: a store on fresh tables or keys, a raw write to one field, a raw delete, and a count of saved tokens. */
interface Engine {
  open(): Promise<{ store: CompleteStore; other: () => Promise<CompleteStore> }>;
  write(clientId: string, field: Field, value: unknown): Promise<void>;
  remove(clientId: string): Promise<void>;
  tokensOf(clientId: string): Promise<number>;
}

const COLUMNS: Record<Field, string> = {
  disabled: 'disabled', clientSecretHash: 'client_secret_hash', tokenEndpointAuthMethod: 'token_endpoint_auth_method',
  allowedScopes: 'allowed_scopes', redirectUris: 'redirect_uris', name: 'name',
};

let counter = 0;
const unique = (): string => `${process.pid}_${(counter += 1)}_${Math.random().toString(36).slice(2, 8)}`;

function postgres(): Engine {
  let schema = '';
  return {
    async open() {
      schema = `oauth_copies_${unique()}`;
      cleanups.push(() => sql!.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      const make = async () => {
        const store = await createPostgresStore({ connectionString: postgresUrl, schema, sweepIntervalSeconds: 0, logger: { warn: () => undefined } });
        cleanups.push(() => store.close());
        return store;
      };
      return { store: await make(), other: make };
    },
    async write(clientId, field, value) {
      const { rowCount } = await sql!.query(`UPDATE "${schema}".clients SET ${COLUMNS[field]} = $2 WHERE client_id = $1`, [clientId, value]);
      expect(rowCount).toBe(1);
    },
    async remove(clientId) {
      await sql!.query(`DELETE FROM "${schema}".clients WHERE client_id = $1`, [clientId]);
    },
    async tokensOf(clientId) {
      const { rows } = await sql!.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${schema}".tokens WHERE client_id = $1`, [clientId]);
      return Number(rows[0]!.n);
    },
  };
}

/** SQLite: the raw writes come from a connection of their own, as the previous version's CLI or a DBA's shell. */
function sqlite(): Engine {
  let file = '';
  let raw: Database.Database | undefined;
  const connection = (): Database.Database => (raw ??= new Database(file));
  return {
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'oauth-copies-'));
      file = join(dir, 'oauth.sqlite');
      raw = undefined;
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const make = async () => {
        const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
        cleanups.push(() => store.close());
        return store;
      };
      const store = await make();
      cleanups.push(() => raw?.close());
      return { store, other: make };
    },
    async write(clientId, field, value) {
      const stored = typeof value === 'boolean' ? Number(value) : Array.isArray(value) ? JSON.stringify(value) : value;
      const { changes } = connection().prepare(`UPDATE clients SET ${COLUMNS[field]} = ? WHERE client_id = ?`).run(stored, clientId);
      expect(changes).toBe(1);
    },
    async remove(clientId) {
      connection().prepare('DELETE FROM clients WHERE client_id = ?').run(clientId);
    },
    async tokensOf(clientId) {
      return connection().prepare('SELECT count(*) FROM tokens WHERE client_id = ?').pluck().get(clientId) as number;
    },
  };
}

function redisEngine(): Engine {
  let prefix = '';
  return {
    async open() {
      prefix = `oauth-copies:${unique()}:`;
      cleanups.push(async () => {
        for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await redis.del(keys);
      });
      const make = async () => {
        const store = await createRedisStore({ url: redisUrl, prefix, sweepIntervalSeconds: 0, logger: { warn: () => undefined } });
        cleanups.push(() => store.close());
        return store;
      };
      return { store: await make(), other: make };
    },
    async write(clientId, field, value) {
      await redis.hSet(createRedisKeys(prefix).client(clientId), field, JSON.stringify(value));
    },
    async remove(clientId) {
      await redis.del(createRedisKeys(prefix).client(clientId));
    },
    async tokensOf(clientId) {
      return redis.zCard(createRedisKeys(prefix).clientIndex(clientId));
    },
  };
}

/** A host on a fresh store whose `findClient` calls are counted. */
async function host(engine: Engine): Promise<{ t: TestApp; lookups: () => number; other: () => Promise<CompleteStore> }> {
  const { store, other } = await engine.open();
  let lookups = 0;
  const counted: Store = {
    ...store,
    clients: { ...store.clients, findClient: (id) => { lookups += 1; return store.clients.findClient(id); } },
  };
  return { t: await createTestApp({}, counted), lookups: () => lookups, other };
}

/** POST /oauth2/token with grant_type=authorization_code, Basic, the test redirect URI. */
function exchange(t: TestApp, code: string, client: TestClient = t.codeClient): request.Test {
  return request(t.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
}

function clientCredentials(t: TestApp, client: TestClient = t.credentialsClient, scope?: string): request.Test {
  return request(t.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
}

/** Changes that make a lookup refuse the client: label, field, value written, status, error. */
const REFUSING_CHANGES = [
    ['disabled', 'disabled', true, 401, 'invalid_client'],
    ['given a new secret (an unplanned rotation)', 'clientSecretHash', hashSecret('a new secret'), 401, 'invalid_client'],
    ['restricted to client_secret_post', 'tokenEndpointAuthMethod', 'client_secret_post', 401, 'invalid_client'],
] as const;

const ENGINES = [
  ['SQLite', true, sqlite],
  ['PostgreSQL', postgresUrl !== '', postgres],
  ['Redis', redisUrl !== '', redisEngine],
] as const;

describe.each(ENGINES)('%s store: token requests from integration copies (issue 10; RFC 6749 §2.3.1, §4.4, §6)', (_name, available, engineOf) => {
  const engine = engineOf();

  it.skipIf(!available)('a client_credentials request whose copy is current looks nothing up', async () => {
    const { t, lookups } = await host(engine);
    expect((await clientCredentials(t)).status).toBe(200);
    const after = lookups();
    for (let i = 0; i < 3; i += 1) expect((await clientCredentials(t)).status).toBe(200);
    expect(lookups(), 'served from the copy').toBe(after);
  });

  it.skipIf(!available).each([
    ...REFUSING_CHANGES,
    ['narrowed to envelopes:read', 'allowedScopes', ['envelopes:read'], 400, 'invalid_scope'],
  ] as const)("an integration %s behind the store's back is refused by the next request, with no token saved", async (_label, field, value, status, error) => {
    const { t } = await host(engine);
    const client = t.credentialsClient;
    expect((await clientCredentials(t, client, 'envelopes:sign')).status).toBe(200);
    const saved = await engine.tokensOf(client.clientId);
    await engine.write(client.clientId, field, value);
    const res = await clientCredentials(t, client, 'envelopes:sign');
    expect(res.status).toBe(status);
    expect(res.body.error).toBe(error);
    expect(await engine.tokensOf(client.clientId), 'no token saved under the stale copy').toBe(saved);
  });

  it.skipIf(!available).each(REFUSING_CHANGES)('an integration %s stays refused once its copy is current: a copy that refuses never authenticates', async (_label, field, value, status, error) => {
    const { t } = await host(engine);
    const client = t.credentialsClient;
    expect((await clientCredentials(t, client)).status).toBe(200);
    const saved = await engine.tokensOf(client.clientId);
    await engine.write(client.clientId, field, value);
    // The first refusal looks the integration up, which leaves a copy of it as it now is; the next ones meet that copy.
    for (let i = 0; i < 3; i += 1) {
      const res = await clientCredentials(t, client);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error).toBe(error);
    }
    expect(await engine.tokensOf(client.clientId)).toBe(saved);
  });

  it.skipIf(!available)('a deleted integration is refused by the next request', async () => {
    const { t } = await host(engine);
    expect((await clientCredentials(t)).status).toBe(200);
    await engine.remove(t.credentialsClient.clientId);
    const res = await clientCredentials(t);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  it.skipIf(!available)('a copy never refuses what the stored integration allows: a widened scope, a re-enabled integration, a new secret', async () => {
    const { t } = await host(engine);
    const client = t.credentialsClient;
    expect((await clientCredentials(t, client)).status).toBe(200);
    await engine.write(client.clientId, 'allowedScopes', ['envelopes:read', 'envelopes:sign', 'envelopes:admin']);
    const widened = await clientCredentials(t, client, 'envelopes:admin');
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    await engine.write(client.clientId, 'disabled', true);
    expect((await clientCredentials(t, client)).status).toBe(401);
    await engine.write(client.clientId, 'disabled', false);
    expect((await clientCredentials(t, client)).status).toBe(200);
    await engine.write(client.clientId, 'clientSecretHash', hashSecret('the next secret'));
    expect((await clientCredentials(t, { clientId: client.clientId, clientSecret: 'the next secret' })).status).toBe(200);
    expect((await clientCredentials(t, client)).status).toBe(401);
  });

  it.skipIf(!available)("a refresh whose integration was disabled behind the store's back is refused, and one after a harmless change succeeds", async () => {
    const { t } = await host(engine);
    const client = t.codeClient;
    const { refreshToken } = await codeTokens(t.app, client);
    expect((await refresh(t.app, client, refreshToken)).status).toBe(200);
    await engine.write(client.clientId, 'name', 'Acme CRM, renamed');
    expect((await refresh(t.app, client, refreshToken)).status).toBe(200);
    await engine.write(client.clientId, 'disabled', true);
    const res = await refresh(t.app, client, refreshToken);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  it.skipIf(!available)("a refresh of a grant wider than the integration narrowed behind the store's back is invalid_grant; a copy narrower than the store refuses nothing", async () => {
    const { t } = await host(engine);
    const client = t.codeClient;
    const { refreshToken } = await codeTokens(t.app, client);
    await engine.write(client.clientId, 'allowedScopes', ['envelopes:read']);
    const refused = await refresh(t.app, client, refreshToken);
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    // The lookup above left a copy holding only envelopes:read; the scope is given back behind the store's back.
    await engine.write(client.clientId, 'allowedScopes', ['envelopes:read', 'envelopes:sign']);
    const served = await refresh(t.app, client, refreshToken);
    expect(served.status, JSON.stringify(served.body)).toBe(200);
  });

  it.skipIf(!available)("another instance's change through the package counts at this instance's next request", async () => {
    const { t, other } = await host(engine);
    const instance = await other();
    const client = t.credentialsClient;
    expect((await clientCredentials(t, client)).status).toBe(200);
    // updateClient alone: a change that leaves no tombstone (the admin API adds one to a disable, not to this).
    const changed: OAuthClient | null = await instance.clients.updateClient(client.clientId, { tokenEndpointAuthMethod: 'client_secret_post' });
    expect(changed?.tokenEndpointAuthMethod).toBe('client_secret_post');
    expect((await clientCredentials(t, client)).status).toBe(401);
    const post = await request(t.app).post('/oauth2/token').type('form')
      .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });
    expect(post.status, JSON.stringify(post.body)).toBe(200);
  });
});

describe.each(ENGINES)('%s store: code exchanges from integration copies (issue 10; RFC 6749 §4.1.3, §4.1.2, §2.3.1)', (_name, available, engineOf) => {
  const engine = engineOf();

  it.skipIf(!available)('a code exchange whose copy is current looks nothing up', async () => {
    const { t, lookups } = await host(engine);
    const code = await obtainCode(t.app, t.codeClient);
    const before = lookups();
    const res = await exchange(t, code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(lookups(), 'served from the copy the authorization request read').toBe(before);
  });

  it.skipIf(!available)('a change that refuses nothing still gets its tokens, after one lookup', async () => {
    const { t, lookups } = await host(engine);
    const code = await obtainCode(t.app, t.codeClient);
    await engine.write(t.codeClient.clientId, 'name', 'Acme CRM, renamed');
    const before = lookups();
    const res = await exchange(t, code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(lookups(), 'the save refused the copy; the lookup settled it').toBe(before + 1);
    expect(await engine.tokensOf(t.codeClient.clientId)).toBe(2);
  });

  it.skipIf(!available).each([
    ...REFUSING_CHANGES,
    ['without the redirect URI the code was issued for', 'redirectUris', ['https://client.example/elsewhere'], 400, 'invalid_grant'],
    ['narrowed to envelopes:read, where the code has both scopes', 'allowedScopes', ['envelopes:read'], 400, 'invalid_grant'],
  ] as const)("an integration %s behind the store's back after the code was issued: the answer a lookup gives, no token saved", async (_label, field, value, status, error) => {
    const { t } = await host(engine);
    const code = await obtainCode(t.app, t.codeClient);
    await engine.write(t.codeClient.clientId, field, value);
    const res = await exchange(t, code);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.error).toBe(error);
    expect(await engine.tokensOf(t.codeClient.clientId), 'no token saved under the stale copy').toBe(0);
  });

  it.skipIf(!available)('a copy narrower than the stored integration refuses no code: judged again after a lookup', async () => {
    const { t } = await host(engine);
    const client = t.codeClient;
    const code = await obtainCode(t.app, client);
    await engine.write(client.clientId, 'allowedScopes', ['envelopes:read']);
    await t.store.clients.findClient(client.clientId); // the copy now holds envelopes:read alone
    await engine.write(client.clientId, 'allowedScopes', ['envelopes:read', 'envelopes:sign']);
    const res = await exchange(t, code);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await engine.tokensOf(client.clientId)).toBe(2);
  });

  it.skipIf(!available)('a replay presenting a secret that only the stale copy still accepts revokes nothing', async () => {
    const { t } = await host(engine);
    const client = t.codeClient;
    const code = await obtainCode(t.app, client);
    const first = await exchange(t, code);
    expect(first.status).toBe(200);
    const accessToken = first.body.access_token as string;
    await engine.write(client.clientId, 'clientSecretHash', hashSecret('the next secret'));
    const replay = await exchange(t, code);
    expect(replay.status, JSON.stringify(replay.body)).toBe(401);
    expect(replay.body.error).toBe('invalid_client');
    expect(await apiStatus(t.app, accessToken), "the grant's access token stands").toBe(200);
    // The same replay with the integration's current secret is a replay: the grant goes (RFC 6749 §4.1.2).
    const current = await exchange(t, code, { clientId: client.clientId, clientSecret: 'the next secret' });
    expect(current.status).toBe(400);
    expect(current.body.error).toBe('invalid_grant');
    expect(await apiStatus(t.app, accessToken)).toBe(401);
  });

  it.skipIf(!available).each([
    ['an unknown code', (t: TestApp) => exchange(t, 'no-such-code')],
    ['an unknown refresh token', (t: TestApp) => refresh(t.app, t.codeClient, 'no-such-refresh-token')],
  ] as const)('%s, presented with a secret only the stale copy accepts, is answered invalid_client, as a lookup answers', async (_label, send) => {
    const { t } = await host(engine);
    await codeTokens(t.app, t.codeClient);
    await engine.write(t.codeClient.clientId, 'clientSecretHash', hashSecret('the next secret'));
    const res = await send(t);
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});
