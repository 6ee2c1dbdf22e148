// A planned rotation (rotateSigningKey()) on one instance at the same moment as a leaked-key replacement on another: the
// two are not serialised with each other (on PostgreSQL the rotation's INSERT takes no advisory lock), and need not be.
import { afterEach, describe, expect, it } from 'vitest';
import express from 'express';
import pg from 'pg';
import type { SigningKeyRecord, SigningKeyStore, Store } from '../../src/stores/contract.js';
import type { OAuthRouter } from '../../src/types.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { openSharedInstances, sharedBackends } from '../helpers/built-in-stores.js';
import { createTestApp, createTestRouter, type TestClient } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { callApi, decodeJwt, fetchJwks } from '../helpers/jwt.js';

const JWT = { accessTokenFormat: 'jwt', accessTokenTtl: 3600 } as const;
const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const BACKENDS = sharedBackends('rotation_vs_replace', { memory: true, redisPrefix: process.env.OAUTH_TEST_REDIS_PREFIX ?? '' });

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

interface Instance {
  readonly oauth: OAuthRouter;
  readonly app: express.Express;
}

/** One instance of the deployment on `store`, as a second process or a restart starts it. */
function instance(store: Store): Instance {
  const oauth = createTestRouter(store, JWT);
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
  return { oauth, app };
}

/** `keys` whose next plain save (a planned rotation's) tells `saving` it has its record, then waits for `release()`. */
function heldRotationSave(keys: SigningKeyStore): { readonly keys: SigningKeyStore; readonly saving: Promise<void>; release(): void } {
  let release!: () => void;
  let saving!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const reached = new Promise<void>((resolve) => { saving = resolve; });
  return {
    keys: {
      ...keys,
      saveSigningKey: async (record, options) => {
        if (options?.onlyIfNone !== true) {
          saving();
          await held;
        }
        return keys.saveSigningKey(record, options);
      },
    },
    saving: reached,
    release,
  };
}

/**
 * What must hold once a planned rotation and a leaked-key replacement have both committed, whichever went first: the
 * leaked key is gone from the store and refused by every instance; the store holds the replacement's key and the
 * rotation's (a key made after the leak, kept) or only the replacement's (the rotation's deleted with the leaked one,
 * and then reported deleted); and every instance reading the store now signs with one key, the older of the two (the
 * first key of a store signs at once, a later one once published), never a leaked one.
 */
async function expectSafe(store: Store, client: TestClient, leaked: { kid: string; token: string }, replaced: { kid: string; deleted: readonly string[] },
  planned: string, instances: readonly Instance[]): Promise<SigningKeyRecord[]> {
  const records = [...await store.keys!.listSigningKeys()];
  const kids = records.map((record) => record.kid);
  expect(kids, 'the leaked key is gone from the store, not brought back').not.toContain(leaked.kid);
  expect(kids, 'the replacement\'s key is kept').toContain(replaced.kid);
  if (kids.includes(planned)) {
    expect(kids, 'kept beside the replacement\'s key: the rotation\'s, which never sat beside the leaked one in the store').toHaveLength(2);
    expect(replaced.deleted, 'a kept key is not reported deleted').not.toContain(planned);
  } else {
    expect(kids).toEqual([replaced.kid]);
    expect(replaced.deleted, 'the rotation\'s key, deleted with the leaked one, is reported').toContain(planned);
  }
  expect(replaced.deleted).toContain(leaked.kid);
  // Every instance that has read the store since both committed signs with the same key: the oldest one left.
  const signing = records[0]!.kid;
  for (const [i, one] of instances.entries()) {
    expect((await callApi(one.app, leaked.token)).status, `instance ${i}: the leaked key's token is refused`).toBe(401);
    expect((await fetchJwks(one.app)).map((jwk) => jwk.kid), `instance ${i}: the leaked key is not published`).not.toContain(leaked.kid);
    expect(decodeJwt(await clientCredentialsToken(one.app, client)).header.kid, `instance ${i}: signs with the oldest key left`).toBe(signing);
  }
  return records;
}

describe.each(BACKENDS)('RFC 9068 §4, RFC 9700 §4.14: a planned rotation at the same moment as a leaked-key replacement on the %s store', (_label, available, backend) => {
  const openStores = (count: number): Promise<Store[]> => openSharedInstances(backend, count, cleanup);

  it.skipIf(!available)('a rotation that read the leaked key and saves only after the replacement committed: its key is new and kept, the leaked key is not brought back, and every instance that reads the store signs with one key', async () => {
    const [storeA, storeB, storeC] = await openStores(3);
    const t = await createTestApp(JWT, storeA!);
    const a = instance(storeA!);
    const token = await clientCredentialsToken(a.app, t.credentialsClient);
    const leaked = { kid: decodeJwt(token).header.kid as string, token };
    // B has read the keys (the leaked one only) and its planned rotation has picked its key's createdAt from them.
    const slow = heldRotationSave(storeB!.keys!);
    const b = instance({ ...storeB!, keys: slow.keys });
    expect(decodeJwt(await clientCredentialsToken(b.app, t.credentialsClient)).header.kid).toBe(leaked.kid);
    const rotating = b.oauth.rotateSigningKey();
    await slow.saving;
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(replaced).toEqual({ kid: replaced.kid, signingKid: replaced.kid, deleted: [leaked.kid] });
    slow.release();
    const planned = await rotating;
    // A restarted instance reads the store after both; B read it again as its rotation ended.
    const records = await expectSafe(storeA!, t.credentialsClient, leaked, replaced, planned.kid, [b, instance(storeC!)]);
    expect(records.map((record) => record.kid).sort(), 'the rotation\'s key, saved after the commit, is kept').toEqual([replaced.kid, planned.kid].sort());
  });

  it.skipIf(!available)('a rotation saved before the replacement lists the keys: the replacement deletes it with the leaked key and reports it', async () => {
    const [storeA, storeB, storeC] = await openStores(3);
    const t = await createTestApp(JWT, storeA!);
    const a = instance(storeA!);
    const token = await clientCredentialsToken(a.app, t.credentialsClient);
    const leaked = { kid: decodeJwt(token).header.kid as string, token };
    const b = instance(storeB!);
    const planned = await b.oauth.rotateSigningKey();
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(new Set(replaced.deleted)).toEqual(new Set([leaked.kid, planned.kid]));
    await expectSafe(storeA!, t.credentialsClient, leaked, replaced, planned.kid, [a, instance(storeC!)]);
  });
});

/**
 * The transaction of `replaceSigningKeys` on PostgreSQL takes the advisory lock, a plain `saveSigningKey` does not:
 * a rotation's INSERT can commit while the replacement's DELETE, its snapshot taken, waits on a row lock. READ
 * COMMITTED then leaves the new row alone and resolves only what the statement deleted: the outcome of the rotation
 * run just after the replacement, which a lock on the insert would only have made certain.
 */
describe('RFC 9068 §4, RFC 9700 §4.14: on PostgreSQL, a planned rotation that commits inside a replacement\'s transaction', () => {
  it.skipIf(POSTGRES_URL === '')('is kept and not reported deleted: the same as the rotation run just after the replacement', async () => {
    const schema = `rot_vs_replace_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    cleanup.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    const open = async (): Promise<Store> => {
      const store = await createPostgresStore({ connectionString: POSTGRES_URL, schema, sweepIntervalSeconds: 0 });
      cleanup.push(() => store.close());
      return store;
    };
    const [storeA, storeB, storeC] = [await open(), await open(), await open()];
    const t = await createTestApp(JWT, storeA);
    const a = instance(storeA);
    const token = await clientCredentialsToken(a.app, t.credentialsClient);
    const leaked = { kid: decodeJwt(token).header.kid as string, token };
    const b = instance(storeB);
    await clientCredentialsToken(b.app, t.credentialsClient);
    // Another session holds the leaked key's row: the replacement's statement, its snapshot taken, waits on it.
    const holder = new pg.Client({ connectionString: POSTGRES_URL });
    await holder.connect();
    cleanup.push(() => holder.end());
    await holder.query('BEGIN');
    await holder.query(`SELECT kid FROM "${schema}".signing_keys WHERE kid = $1 FOR UPDATE`, [leaked.kid]);
    const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const replacing = a.oauth.rotateSigningKey({ leaked: true });
    // Bounded by query round trips, not by time: the replacement's statement is waiting on the holder's row lock.
    let waiting = false;
    for (let i = 0; i < 10_000 && !waiting; i++) {
      const { rows } = await admin.query<{ waiting: boolean }>(
        'SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))) AS waiting', [pid]);
      waiting = rows[0]!.waiting;
    }
    expect(waiting, 'the replacement waits inside its transaction').toBe(true);
    const planned = await b.oauth.rotateSigningKey();
    await holder.query('COMMIT');
    const replaced = await replacing;
    expect(replaced).toEqual({ kid: replaced.kid, signingKid: replaced.kid, deleted: [leaked.kid] });
    const records = await expectSafe(storeA, t.credentialsClient, leaked, replaced, planned.kid, [a, instance(storeC)]);
    expect(records.map((record) => record.kid).sort()).toEqual([replaced.kid, planned.kid].sort());
  });
});
