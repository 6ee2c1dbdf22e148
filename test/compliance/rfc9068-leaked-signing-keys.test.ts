// RFC 9068 §4 signing keys that must stop verifying: retired records deleted, and a key replaced as leaked.
import { createPrivateKey } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import express from 'express';
import request from 'supertest';
import { basic, createTestApp, createTestRouter } from '../helpers/app.js';
import { replaceLeakedSigningKeys } from '../../src/jwt/replace-leaked-keys.js';
import { clientCredentialsToken, introspect } from '../helpers/token-requests.js';
import { callApi, decodeJwt, fetchJwks, forgeJwt } from '../helpers/jwt.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { Store } from '../../src/stores/contract.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { SigningKeysReplacementIncompleteError } from '../../src/jwt/replacement-incomplete-error.js';
import type { OAuthRouter } from '../../src/types.js';
import { builtInStores, withOpenedStore } from '../helpers/built-in-stores.js';

const JWT = { accessTokenFormat: 'jwt' } as const;
const HOUR = 3600;
const YEAR = 365 * 86_400;

interface Instance {
  readonly oauth: OAuthRouter;
  readonly app: express.Express;
}

/** Another instance of the same deployment on `store`, as a restart or a second process starts it. */
function instance(store: Store, accessTokenTtl: number): Instance {
  const oauth = createTestRouter(store, { ...JWT, accessTokenTtl });
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
  return { oauth, app };
}

async function storedKids(store: Store): Promise<string[]> {
  return (await store.keys!.listSigningKeys()).map((key) => key.kid);
}

/**
 * An instance `a` on `store` (a wrapped `base`), then another instance's planned rotation it has not read yet (its key
 * was in the store as the leak was found), and a token forged with that planned key's private key (`forged`).
 */
async function forgedByPlannedKey(base: Store, keys: NonNullable<Store['keys']>, store: Store) {
  const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
  const a = instance(store, HOUR);
  const before = await clientCredentialsToken(a.app, t.credentialsClient);
  const planned = await instance(base, HOUR).oauth.rotateSigningKey();
  const kept = (await keys.listSigningKeys()).find((record) => record.kid === planned.kid)!;
  const forged = forgeJwt({ alg: kept.algorithm, typ: 'at+jwt', kid: kept.kid }, { ...decodeJwt(before).claims, exp: Math.floor(Date.now() / 1000) + YEAR },
    createPrivateKey(kept.privateKeyPem));
  return { t, a, before, planned, forged };
}

/**
 * `keys` without `replaceSigningKeys`: the three-step replacement, as the wrapped stores below (which leave it out) run
 * it. Another replacement "at the same moment" must take the same path: an atomic one, made in the same millisecond,
 * could list as older than this one's key and be deleted by it, which no single store could do.
 */
function stepwise(keys: NonNullable<Store['keys']>): NonNullable<Store['keys']> {
  const { listSigningKeys, saveSigningKey, deleteSigningKey } = keys;
  return { listSigningKeys, saveSigningKey, ...(deleteSigningKey ? { deleteSigningKey } : {}) };
}

/**
 * A memory store whose keys take the three-step replacement (no `replaceSigningKeys`): `whileSaving` runs once as the
 * next save completes (something at the same moment), and the first delete (the replacement's step) leaves the store
 * unable to read the keys until `up()`.
 */
function downAfterFirstDelete() {
  const base = createMemoryStore({ sweepIntervalSeconds: 0 });
  const keys = base.keys!;
  let during: (() => Promise<void>) | null = null;
  let down = false;
  const store: Store = { ...base, keys: {
    listSigningKeys: async () => {
      if (down) throw new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
      return keys.listSigningKeys();
    },
    saveSigningKey: async (record, options) => {
      const saved = await keys.saveSigningKey(record, options);
      const then = during;
      during = null;
      if (then) await then();
      return saved;
    },
    deleteSigningKey: async (kid) => {
      const done = await keys.deleteSigningKey!(kid);
      down = true;
      return done;
    },
  } };
  return {
    base, keys, store,
    whileSaving: (then: () => Promise<void>) => { during = then; },
    isDown: () => down,
    up: () => { down = false; },
  };
}

/**
 * A memory store whose keys replace in one atomic step (`replaceSigningKeys`): `whileReplacing` runs once as the next
 * replacement starts, before its commit (something at the same moment); from the commit on, the keys cannot be read
 * until `up()`. With `loseAnswer`, the commit's answer is lost: the call rejects though the store did all of it.
 */
function downAfterReplace(loseAnswer = false) {
  const base = createMemoryStore({ sweepIntervalSeconds: 0 });
  const keys = base.keys!;
  let during: (() => Promise<void>) | null = null;
  let down = false;
  const store: Store = { ...base, keys: {
    ...keys,
    listSigningKeys: async () => {
      if (down) throw new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
      return keys.listSigningKeys();
    },
    replaceSigningKeys: async (record) => {
      const then = during;
      during = null;
      if (then) await then();
      const deleted = await keys.replaceSigningKeys!(record);
      down = true;
      if (loseAnswer) throw new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
      return deleted;
    },
  } };
  return {
    base, keys, store,
    whileReplacing: (then: () => Promise<void>) => { during = then; },
    up: () => { down = false; },
  };
}

afterEach(() => { vi.useRealTimers(); });

describe('RFC 9068 §4: a retired key is deleted from the store, so it never verifies again', () => {
  it('the first load after a key retires deletes its record; a longer accessTokenTtl later does not bring it back', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const first = await createTestApp({ ...JWT, accessTokenTtl: YEAR }, store);
    const old = await clientCredentialsToken(first.app, first.credentialsClient);
    const oldKid = decodeJwt(old).header.kid;
    const short = instance(store, HOUR);
    const { kid } = await short.oauth.rotateSigningKey();
    vi.setSystemTime(Date.now() + 2 * HOUR * 1000);
    expect((await callApi(instance(store, HOUR).app, old)).status).toBe(401);
    expect(await storedKids(store)).toEqual([kid]);
    // The deployment goes back to a year: the old key's tokens (a year of `exp`) must stay refused.
    const long = instance(store, YEAR);
    expect((await callApi(long.app, old)).status).toBe(401);
    expect((await fetchJwks(long.app)).map((jwk) => jwk.kid)).not.toContain(oldKid);
  });

  it('a key still verifying is kept: a restart within accessTokenTtl of the switch deletes nothing', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const first = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const old = await clientCredentialsToken(first.app, first.credentialsClient);
    const a = instance(store, HOUR);
    await a.oauth.rotateSigningKey();
    vi.setSystemTime(Date.now() + 30 * 60_000);
    expect((await callApi(instance(store, HOUR).app, old)).status).toBe(200);
    expect(await storedKids(store)).toHaveLength(2);
  });
});

describe('RFC 9068 §4, RFC 9700 §4.10: rotateSigningKey({ leaked: true })', () => {
  it('the new key signs at once, every older record is deleted, and the old keys\' tokens, even forged ones, are refused here at once', async () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    // A planned rotation still being published: its key existed before the leak, so it goes too.
    const planned = await a.oauth.rotateSigningKey();
    const leaked = (await store.keys!.listSigningKeys())[0]!;
    const forged = forgeJwt({ alg: 'ES256', typ: 'at+jwt', kid: leaked.kid }, { ...decodeJwt(before).claims, exp: Math.floor(Date.now() / 1000) + YEAR },
      createPrivateKey(leaked.privateKeyPem));
    expect((await callApi(a.app, forged)).status).toBe(200);

    const seen: unknown[] = [];
    a.oauth.events.on('event', (event) => { seen.push(event); });
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(new Set(replaced.deleted)).toEqual(new Set([leaked.kid, planned.kid]));
    expect(seen).toEqual([{ type: 'signing_keys.replaced', time: expect.any(Date), issuer: null, ip: null, kid: replaced.kid, signingKid: replaced.kid, deleted: replaced.deleted, complete: true }]);
    expect(await storedKids(store)).toEqual([replaced.kid]);
    for (const token of [before, forged]) expect((await callApi(a.app, token)).status).toBe(401);
    const after = await clientCredentialsToken(a.app, t.credentialsClient);
    expect(decodeJwt(after).header.kid).toBe(replaced.kid);
    expect((await callApi(a.app, after)).status).toBe(200);
    expect((await fetchJwks(a.app)).map((jwk) => jwk.kid)).toEqual([replaced.kid]);
  });

  it('another instance stops verifying the deleted keys when it next reads the store, its memory of verified tokens too', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const [a, b, c] = [instance(store, HOUR), instance(store, HOUR), instance(store, HOUR)];
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    for (const other of [b, c]) expect((await callApi(other.app, before)).status).toBe(200);
    const { kid } = await a.oauth.rotateSigningKey({ leaked: true });
    const after = await clientCredentialsToken(a.app, t.credentialsClient);
    // An unknown kid makes b read the store at once: the new key's tokens verify there without waiting.
    expect((await callApi(b.app, after)).status).toBe(200);
    expect((await callApi(b.app, before)).status).toBe(401);
    expect((await fetchJwks(b.app)).map((jwk) => jwk.kid)).toEqual([kid]);
    // c sees only old tokens: its first check past a minute reads the store in the background, and refuses from then on.
    vi.advanceTimersByTime(61_000);
    await callApi(c.app, before);
    await vi.waitFor(async () => { expect((await callApi(c.app, before)).status).toBe(401); });
  });

  it('a token of a key replaced here is refused without reading the store: presenting old tokens does not make the instance read its keys', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    let reads = 0;
    const keys = base.keys!;
    const store: Store = { ...base, keys: { ...keys, listSigningKeys: () => { reads += 1; return keys.listSigningKeys(); } } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    await a.oauth.rotateSigningKey({ leaked: true });
    reads = 0;
    for (let i = 0; i < 3; i++) expect((await callApi(a.app, before)).status).toBe(401);
    expect((await introspect(a.app, t.credentialsClient, { token: before })).body).toEqual({ active: false });
    expect(reads, 'the replaced kid is known here: no store read to look for it').toBe(0);
  });

  it('with jwt.checkRevocation, a token of a deleted key is refused though requireBearer\'s cache holds its record', async () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const checked = { ...JWT, accessTokenTtl: HOUR, jwt: { checkRevocation: true } } as const;
    const t = await createTestApp(checked, store);
    const oauth = createTestRouter(store, checked);
    const app = express();
    app.use(oauth.router);
    app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
    const before = await clientCredentialsToken(app, t.credentialsClient);
    // Verified once: the token is now in the bearer cache (by its record) and in the verifier's memory.
    expect((await callApi(app, before)).status).toBe(200);
    await oauth.rotateSigningKey({ leaked: true });
    expect((await callApi(app, before)).status).toBe(401);
    const after = await clientCredentialsToken(app, t.credentialsClient);
    expect((await callApi(app, after)).status).toBe(200);
    expect((await callApi(app, after)).status).toBe(200);
  });

  it('a replacement done though reading the keys again right after fails resolves, is audited, and uses no deleted key here', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    const keys = base.keys!;
    // Armed, a delete (the replacement's last step) makes the next read of the keys fail: the instance's own re-read.
    let armed = false;
    let failNextList = false;
    const store: Store = { ...base, keys: {
      listSigningKeys: async () => {
        if (failNextList) {
          failNextList = false;
          throw new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
        }
        return keys.listSigningKeys();
      },
      saveSigningKey: (record, options) => keys.saveSigningKey(record, options),
      deleteSigningKey: async (kid) => {
        const done = await keys.deleteSigningKey!(kid);
        failNextList = armed;
        return done;
      },
    } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    expect((await callApi(a.app, before)).status).toBe(200);
    const seen: unknown[] = [];
    a.oauth.events.on('event', (event) => { seen.push(event); });
    armed = true;
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(replaced.deleted).toHaveLength(1);
    expect(seen).toEqual([expect.objectContaining({ type: 'signing_keys.replaced', kid: replaced.kid })]);
    expect((await callApi(a.app, before)).status).toBe(401);
    expect((await fetchJwks(a.app)).map((jwk) => jwk.kid)).toEqual([replaced.kid]);
    const after = await clientCredentialsToken(a.app, t.credentialsClient);
    expect(decodeJwt(after).header.kid).toBe(replaced.kid);
  });

  it('a replacement whose leaked key another replacement deleted first (the CLI at the same moment), the store unreadable right after: that key neither signs nor verifies here', async () => {
    // Once this instance's replacement has saved its key, another replacement (oauth-admin keys replace-leaked on another
    // machine) runs to its end, deleting the leaked key first; this one's last delete leaves the store unreadable.
    const { keys, store, whileSaving, up } = downAfterFirstDelete();
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    const leakedKid = decodeJwt(before).header.kid;
    expect((await callApi(a.app, before)).status).toBe(200);
    whileSaving(async () => { await replaceLeakedSigningKeys(stepwise(keys)); });
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    // The other replacement deleted the leaked key, and this one's own: its newer key signs.
    expect(replaced.deleted).not.toContain(leakedKid);
    expect(replaced.signingKid).not.toBe(replaced.kid);
    expect((await callApi(a.app, before)).status).toBe(401);
    // No token while the keys cannot be read, rather than one signed with the leaked key.
    const during = await request(a.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    if (during.status === 200) expect(decodeJwt((during.body as { access_token: string }).access_token).header.kid).not.toBe(leakedKid);
    else expect(during.status).toBe(503);
    up();
    expect(decodeJwt(await clientCredentialsToken(a.app, t.credentialsClient)).header.kid).toBe(replaced.signingKid);
  });

  it('a replacement whose leaked key another replacement deleted first, as a read of the keys already under way fails, the store unreadable right after: that key neither signs nor verifies here', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    const keys = base.keys!;
    let armed = false;
    let down = false;
    // The next read of the keys hangs until `blip` is called, then fails: a read under way as the replacement starts.
    let hangNext = false;
    let blip = (): void => {};
    const store: Store = { ...base, keys: {
      listSigningKeys: async () => {
        if (hangNext) {
          hangNext = false;
          await new Promise<void>((resolve) => { blip = resolve; });
          throw new StoreUnavailableError('PostgreSQL store unavailable (connection reset)');
        }
        if (down) throw new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
        return keys.listSigningKeys();
      },
      saveSigningKey: async (record, options) => {
        const saved = await keys.saveSigningKey(record, options);
        if (armed) {
          armed = false;
          await replaceLeakedSigningKeys(stepwise(keys));
        }
        return saved;
      },
      deleteSigningKey: async (kid) => {
        const done = await keys.deleteSigningKey!(kid);
        down = true;
        blip();
        return done;
      },
    } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    const leakedKid = decodeJwt(before).header.kid;
    expect((await callApi(a.app, before)).status).toBe(200);
    // A token of a kid this instance does not know: it reads the keys again, and that read is under way.
    hangNext = true;
    const unknownKid = callApi(a.app, forgeJwt({ alg: 'ES256', typ: 'at+jwt', kid: 'not-a-kid-of-ours' }, {}, Buffer.from('x'))).then((res) => res.status);
    await vi.waitFor(() => expect(hangNext).toBe(false));
    armed = true;
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(replaced.deleted).not.toContain(leakedKid);
    expect(await unknownKid).not.toBe(200);
    expect((await callApi(a.app, before)).status).toBe(401);
    const during = await request(a.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    if (during.status === 200) expect(decodeJwt((during.body as { access_token: string }).access_token).header.kid).not.toBe(leakedKid);
    else expect(during.status).toBe(503);
    down = false;
    expect(decodeJwt(await clientCredentialsToken(a.app, t.credentialsClient)).header.kid).toBe(replaced.signingKid);
  });

  it('a replacement whose leaked keys include one this instance first read during it (another instance\'s planned rotation), another replacement deleting them first, the store unreadable right after: that key does not verify here', async () => {
    const { base, keys, store, whileSaving, up } = downAfterFirstDelete();
    const { a, planned, forged } = await forgedByPlannedKey(base, keys, store);
    whileSaving(async () => {
      // As this replacement saves its key: a token of the planned key makes this instance read the keys (it learns the
      // planned key), then another replacement (the CLI) runs to its end, deleting every key, the planned one too.
      expect((await callApi(a.app, forged)).status).toBe(200);
      await replaceLeakedSigningKeys(stepwise(keys));
    });
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(replaced.deleted).not.toContain(planned.kid);
    expect(await storedKids(base)).toEqual([replaced.signingKid]);
    // The store unreadable: the planned key, leaked with the others and deleted, is refused here all the same.
    expect((await callApi(a.app, forged)).status).toBe(401);
    up();
    expect((await callApi(a.app, forged)).status).toBe(401);
  });

  it('a replacement in one atomic step whose leaked keys include one this instance first read during it, another replacement deleting them first, the store unreadable right after: that key does not verify here', async () => {
    const { base, keys, store, whileReplacing, up } = downAfterReplace();
    const { t, a, before, planned, forged } = await forgedByPlannedKey(base, keys, store);
    whileReplacing(async () => {
      // Before this replacement commits: a token of the planned key makes this instance read the keys (it learns the
      // planned key), then another replacement (the CLI) commits, deleting every key, the planned one too.
      expect((await callApi(a.app, forged)).status).toBe(200);
      await replaceLeakedSigningKeys(keys);
    });
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(replaced.deleted).not.toContain(planned.kid);
    expect(await storedKids(base)).toEqual([replaced.kid]);
    // The store unreadable: the planned key, leaked with the others and deleted by the other replacement, is refused here.
    expect((await callApi(a.app, forged)).status).toBe(401);
    expect((await callApi(a.app, before)).status).toBe(401);
    up();
    expect((await callApi(a.app, forged)).status).toBe(401);
    expect(decodeJwt(await clientCredentialsToken(a.app, t.credentialsClient)).header.kid).toBe(replaced.kid);
  });

  it('a replacement in one atomic step whose answer is lost after its commit, the store unreadable since: no leaked key signs or verifies here until the store answers', async () => {
    const { base, keys, store, up } = downAfterReplace(true);
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    const leakedKid = decodeJwt(before).header.kid;
    const leaked = (await keys.listSigningKeys())[0]!;
    const forged = forgeJwt({ alg: leaked.algorithm, typ: 'at+jwt', kid: leaked.kid }, { ...decodeJwt(before).claims, exp: Math.floor(Date.now() / 1000) + YEAR },
      createPrivateKey(leaked.privateKeyPem));
    expect((await callApi(a.app, forged)).status).toBe(200);
    await expect(a.oauth.rotateSigningKey({ leaked: true })).rejects.toBeInstanceOf(StoreUnavailableError);
    const [left] = await storedKids(base);
    expect(left).not.toBe(leakedKid);
    // The store did all of it, and cannot be read: the key set held here is the leaked one, which must not be used (a
    // 503 while the instance tries to read the keys again, a 401 after).
    for (const token of [before, forged, forged]) expect([401, 503]).toContain((await callApi(a.app, token)).status);
    const during = await request(a.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    if (during.status === 200) expect(decodeJwt((during.body as { access_token: string }).access_token).header.kid).not.toBe(leakedKid);
    else expect(during.status).toBe(503);
    up();
    expect(decodeJwt(await clientCredentialsToken(a.app, t.credentialsClient)).header.kid).toBe(left);
    for (const token of [before, forged]) expect((await callApi(a.app, token)).status).toBe(401);
  });

  it('a replacement in one atomic step whose answer is lost after its commit, the store unreadable since: the JWKS is a 503, not an empty key set a resource server would cache', async () => {
    const { store, up } = downAfterReplace(true);
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    await clientCredentialsToken(a.app, t.credentialsClient);
    await expect(a.oauth.rotateSigningKey({ leaked: true })).rejects.toBeInstanceOf(StoreUnavailableError);
    // Every key held here is refused until the store answers: there is no key set to publish (RFC 7517 §5), and one
    // served empty would be cached for its max-age by every resource server, refusing the new key's tokens meanwhile.
    const during = await request(a.app).get('/oauth2/jwks');
    expect(during.status).toBe(503);
    expect(during.headers['cache-control']).toBe('no-store');
    up();
    expect(await fetchJwks(a.app)).toHaveLength(1);
  });

  it('a replacement in one atomic step whose listing of the keys failed (nothing written), the store unreadable since: the keys held verify here, as a JWT needs no store', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    const keys = base.keys!;
    let down = false;
    const store: Store = { ...base, keys: { ...keys, listSigningKeys: async () => {
      if (down) throw new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
      return keys.listSigningKeys();
    } } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    down = true;
    await expect(a.oauth.rotateSigningKey({ leaked: true })).rejects.toBeInstanceOf(StoreUnavailableError);
    // The replacement failed before its atomic step: the store's keys are as they were, and the token verifies.
    for (let i = 0; i < 3; i += 1) expect((await callApi(a.app, before)).status).toBe(200);
    down = false;
    expect((await callApi(a.app, before)).status).toBe(200);
  });

  it('a replacement in one atomic step the store refused before running it, the store readable: the keys it held verify and sign here again at the next read, as the store holds them', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    const keys = base.keys!;
    const store: Store = { ...base, keys: { ...keys, replaceSigningKeys: () => Promise.reject(new StoreUnavailableError('PostgreSQL store unavailable (lock timeout)')) } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    await expect(a.oauth.rotateSigningKey({ leaked: true })).rejects.toBeInstanceOf(StoreUnavailableError);
    // Nothing was done: a token of the key the store still holds is accepted once it has been read again.
    expect((await callApi(a.app, before)).status).toBe(200);
    expect(decodeJwt(await clientCredentialsToken(a.app, t.credentialsClient)).header.kid).toBe(decodeJwt(before).header.kid);
  });

  it('a replacement whose key set was read again during it (leaked keys and the new one), the store unreadable right after: the new key signs here, not a 503', async () => {
    const { store, whileSaving, isDown } = downAfterFirstDelete();
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    const leakedKid = decodeJwt(before).header.kid;
    // As the replacement saves its key, a token of a kid this instance does not know makes it read the keys: it then
    // holds the leaked key and the new one, the leaked key signing (the new one is not yet published, as it reads it).
    whileSaving(async () => {
      expect((await callApi(a.app, forgeJwt({ alg: 'ES256', typ: 'at+jwt', kid: 'not-a-kid-of-ours' }, {}, Buffer.from('x')))).status).toBe(401);
    });
    const replaced = await a.oauth.rotateSigningKey({ leaked: true });
    expect(replaced.deleted).toEqual([leakedKid]);
    expect(isDown(), 'the store stays unreadable').toBe(true);
    const token = await clientCredentialsToken(a.app, t.credentialsClient);
    expect(decodeJwt(token).header.kid).toBe(replaced.kid);
    expect((await callApi(a.app, token)).status).toBe(200);
    expect((await callApi(a.app, before)).status).toBe(401);
  });

  it('a replacement the store fails midway (new key saved, one old key deleted, the next delete failing) rejects and is audited with complete: false', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    const keys = base.keys!;
    let deletes = 0;
    const store: Store = { ...base, keys: {
      listSigningKeys: () => keys.listSigningKeys(),
      saveSigningKey: (record, options) => keys.saveSigningKey(record, options),
      deleteSigningKey: async (kid) => {
        deletes += 1;
        if (deletes === 2) throw new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
        return keys.deleteSigningKey!(kid);
      },
    } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    await a.oauth.rotateSigningKey();
    const [first, second] = await storedKids(store);
    const seen: unknown[] = [];
    a.oauth.events.on('event', (event) => { seen.push(event); });
    const failed = await a.oauth.rotateSigningKey({ leaked: true }).then(() => null, (error: unknown) => error);
    expect(failed).toBeInstanceOf(SigningKeysReplacementIncompleteError);
    const { kid } = failed as SigningKeysReplacementIncompleteError;
    expect(failed).toMatchObject({ deleted: [first] });
    expect(await storedKids(store)).toEqual([second, kid]);
    expect(seen).toEqual([{ type: 'signing_keys.replaced', time: expect.any(Date), issuer: null, ip: null, kid, signingKid: null, deleted: [first], complete: false }]);
    // The deleted key's tokens are refused here at once. This instance's next read of the keys (for a token, signed
    // with the new key) deletes the leaked record left; a replacement run again then replaces the new key alone.
    expect((await callApi(a.app, before)).status).toBe(401);
    expect(decodeJwt(await clientCredentialsToken(a.app, t.credentialsClient)).header.kid).toBe(kid);
    expect(await storedKids(store)).toEqual([kid]);
    const again = await a.oauth.rotateSigningKey({ leaked: true });
    expect(again.deleted).toEqual([kid]);
    const replacements = seen.filter((event) => (event as { type: string }).type === 'signing_keys.replaced');
    expect(replacements).toHaveLength(2);
    expect(replacements[1]).toMatchObject({ kid: again.kid, complete: true });
  });

  it('a store without keys.deleteSigningKey refuses it, naming the method, and writes nothing', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    const { listSigningKeys, saveSigningKey } = base.keys!;
    const store: Store = { ...base, keys: { listSigningKeys, saveSigningKey } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const token = await clientCredentialsToken(a.app, t.credentialsClient);
    const kids = await storedKids(store);
    await expect(a.oauth.rotateSigningKey({ leaked: true })).rejects.toThrow('store.keys.deleteSigningKey');
    expect(await storedKids(store)).toEqual(kids);
    expect((await callApi(a.app, token)).status).toBe(200);
  });

  it('host-supplied keys are rotated by the host: leaked or not, the call rejects', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const oauth = createTestRouter(createMemoryStore(), { ...JWT, jwt: { signingKeys: [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey] } });
    await expect(oauth.rotateSigningKey({ leaked: true })).rejects.toThrow('jwt.signingKeys');
  });

  it('host-supplied keys over a store that still holds keys (kept before the host supplied its own): the call rejects and the store keys stay, which the app does not sign with', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const before = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    await clientCredentialsToken(before.app, before.credentialsClient);
    const kids = await storedKids(store);
    expect(kids).toHaveLength(1);
    const oauth = createTestRouter(store, { ...JWT, jwt: { signingKeys: [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey] } });
    for (const rotation of [{ leaked: true }, {}]) {
      await expect(oauth.rotateSigningKey(rotation)).rejects.toThrow('jwt.signingKeys are supplied by the host');
    }
    expect(await storedKids(store)).toEqual(kids);
  });
});

// OAUTH_TEST_REDIS_PREFIX: a run that shares its Redis with others keeps its keys under a prefix of its own.
const STORES = builtInStores('leaked_key_partial', {}, { redisPrefix: process.env.OAUTH_TEST_REDIS_PREFIX ?? '' });

/** Where a replacement's store fails, after its new key is saved: the second read of the keys, or the second delete. */
const FAULTS = [
  ['reading the keys again after its save', 'list'],
  ['its second delete', 'delete'],
] as const;

describe.each(STORES)('RFC 9700 §4.10: a leaked-key replacement the %s store fails midway', (_label, available, open) => {
  it.skipIf(!available).each(FAULTS)('failing at %s: the new key signs here at once, and no key it replaced signs or verifies here, deleted or not', async (_where, fault) => {
    await withOpenedStore(open, async ({ store: real }) => {
      const keys = real.keys!;
      // Armed for the replacement alone: its second call of the faulty method throws, after the new key was saved.
      let armed = false;
      let calls = 0;
      const failing = (method: typeof fault): void => {
        if (!armed || method !== fault) return;
        calls += 1;
        if (calls === 2) throw new StoreUnavailableError('store unavailable (connection lost)');
      };
      const store: Store = { ...real, keys: {
        listSigningKeys: async () => { failing('list'); return keys.listSigningKeys(); },
        saveSigningKey: (record, options) => keys.saveSigningKey(record, options),
        deleteSigningKey: async (kid) => { failing('delete'); return keys.deleteSigningKey!(kid); },
      } };
      const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
      const a = instance(store, HOUR);
      const before = await clientCredentialsToken(a.app, t.credentialsClient);
      // A planned rotation still being published: it leaked with the first key, and its record outlives the failure.
      const planned = await a.oauth.rotateSigningKey();
      const kept = (await keys.listSigningKeys()).find((record) => record.kid === planned.kid)!;
      const forged = forgeJwt({ alg: kept.algorithm, typ: 'at+jwt', kid: kept.kid }, { ...decodeJwt(before).claims, exp: Math.floor(Date.now() / 1000) + YEAR },
        createPrivateKey(kept.privateKeyPem));

      armed = true;
      const failed = await a.oauth.rotateSigningKey({ leaked: true }).then(() => null, (error: unknown) => error);
      armed = false;
      expect(failed).toBeInstanceOf(SigningKeysReplacementIncompleteError);
      const { kid } = failed as SigningKeysReplacementIncompleteError;
      // Left: the planned rotation's leaked key (and, failing before any delete, the first key too), beside the new one.
      expect(await storedKids(store)).toEqual([...(fault === 'list' ? [decodeJwt(before).header.kid] : []), planned.kid, kid]);

      const after = await clientCredentialsToken(a.app, t.credentialsClient);
      expect(decodeJwt(after).header.kid).toBe(kid);
      expect((await callApi(a.app, after)).status).toBe(200);
      for (const token of [before, forged]) expect((await callApi(a.app, token)).status).toBe(401);
      // Introspection answers as requireBearer: a forged token has no record, and a genuine one a leaked key signed is
      // inactive though its record is found (rfc7662-introspection-signing-keys.test.ts).
      for (const token of [before, forged]) expect((await introspect(a.app, t.credentialsClient, { token })).body).toEqual({ active: false });
      expect((await fetchJwks(a.app)).map((jwk) => jwk.kid)).toEqual([kid]);
      // The store answering again, this instance's read of the keys (for the token above) deleted the leaked records
      // the failure left: another instance, reading the keys, signs with the new key and refuses the leaked ones.
      expect(await storedKids(store)).toEqual([kid]);
      const b = instance(store, HOUR);
      expect(decodeJwt(await clientCredentialsToken(b.app, t.credentialsClient)).header.kid).toBe(kid);
      expect((await callApi(b.app, forged)).status).toBe(401);
    });
  });
});

/** Where the store fails the atomic replacement itself: before it runs (nothing written), or after its commit (its answer lost). */
const ATOMIC_FAULTS = [
  ['before it runs (nothing written)', 'before'],
  ['after its commit (its answer lost)', 'after'],
] as const;

describe.each(STORES)('RFC 9700 §4.14: a leaked-key replacement on the %s store, in one atomic step (keys.replaceSigningKeys)', (_label, available, open) => {
  /** A planned rotation still being published beside the first key, and a token of each kind the replacement must stop. */
  async function leakedKeys(store: Store) {
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const a = instance(store, HOUR);
    const before = await clientCredentialsToken(a.app, t.credentialsClient);
    const planned = await a.oauth.rotateSigningKey();
    const kept = (await store.keys!.listSigningKeys()).find((record) => record.kid === planned.kid)!;
    const forged = forgeJwt({ alg: kept.algorithm, typ: 'at+jwt', kid: kept.kid }, { ...decodeJwt(before).claims, exp: Math.floor(Date.now() / 1000) + YEAR },
      createPrivateKey(kept.privateKeyPem));
    return { t, a, leaked: await storedKids(store), stopped: [before, forged] };
  }

  /** Each instance, this one and one started now, signs with `kid` and refuses every token of a leaked key. */
  async function expectSigningOnlyWith(store: Store, t: Awaited<ReturnType<typeof createTestApp>>, a: Instance, kid: string, stopped: readonly string[]) {
    for (const app of [a.app, instance(store, HOUR).app]) {
      expect(decodeJwt(await clientCredentialsToken(app, t.credentialsClient)).header.kid).toBe(kid);
      for (const token of stopped) expect((await callApi(app, token)).status).toBe(401);
    }
  }

  it.skipIf(!available)('the store going down right after the replacement\'s first write leaves one key, the new one, which every instance signs with at once', async () => {
    await withOpenedStore(open, async ({ store: real }) => {
      const keys = real.keys!;
      // Armed for the replacement alone: once its first write has answered, every later call of the keys part fails.
      let armed = false;
      let down = false;
      const reach = (): void => { if (down) throw new StoreUnavailableError('store unavailable (connection lost)'); };
      const write = async <T>(call: () => Promise<T>): Promise<T> => {
        reach();
        try {
          return await call();
        } finally {
          if (armed) down = true;
        }
      };
      const store: Store = { ...real, keys: {
        listSigningKeys: async () => { reach(); return keys.listSigningKeys(); },
        saveSigningKey: (record, options) => write(() => keys.saveSigningKey(record, options)),
        deleteSigningKey: (kid) => write(() => keys.deleteSigningKey!(kid)),
        ...(keys.replaceSigningKeys ? { replaceSigningKeys: (record: Parameters<NonNullable<typeof keys.replaceSigningKeys>>[0]) => write(() => keys.replaceSigningKeys!(record)) } : {}),
      } };
      const { t, a, leaked, stopped } = await leakedKeys(store);
      armed = true;
      // Its own re-read of the keys fails: the replacement is done all the same, and resolves (logged, not thrown).
      const replaced = await a.oauth.rotateSigningKey({ leaked: true });
      armed = false;
      down = false;
      expect(await storedKids(store)).toEqual([replaced.kid]);
      expect(replaced).toEqual({ kid: replaced.kid, signingKid: replaced.kid, deleted: expect.any(Array) });
      expect([...replaced.deleted].sort()).toEqual([...leaked].sort());
      await expectSigningOnlyWith(store, t, a, replaced.kid, stopped);
    });
  });

  it.skipIf(!available).each(ATOMIC_FAULTS)('the store failing the replacement %s: the call rejects with the store\'s error, and no key is left beside a leaked one', async (_where, fault) => {
    await withOpenedStore(open, async ({ store: real }) => {
      const keys = real.keys!;
      let armed = false;
      const store: Store = { ...real, keys: {
        ...keys,
        listSigningKeys: () => keys.listSigningKeys(),
        saveSigningKey: (record, options) => keys.saveSigningKey(record, options),
        deleteSigningKey: (kid) => keys.deleteSigningKey!(kid),
        replaceSigningKeys: async (record) => {
          if (armed && fault === 'before') throw new StoreUnavailableError('store unavailable (connection lost)');
          const deleted = await keys.replaceSigningKeys!(record);
          if (armed) throw new StoreUnavailableError('store unavailable (connection lost)');
          return deleted;
        },
      } };
      const { t, a, leaked, stopped } = await leakedKeys(store);
      armed = true;
      const failed = await a.oauth.rotateSigningKey({ leaked: true }).then(() => null, (error: unknown) => error);
      armed = false;
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect(failed).not.toBeInstanceOf(SigningKeysReplacementIncompleteError);
      const left = await storedKids(store);
      if (fault === 'before') {
        // Nothing happened: the keys are as they were, and the same replacement again does all of it.
        expect(left).toEqual(leaked);
        const again = await a.oauth.rotateSigningKey({ leaked: true });
        expect([...again.deleted].sort()).toEqual([...leaked].sort());
        expect(await storedKids(store)).toEqual([again.kid]);
        await expectSigningOnlyWith(store, t, a, again.kid, stopped);
      } else {
        // All of it happened: one key, none of the leaked ones, which this instance too signs with at its next token.
        expect(left).toHaveLength(1);
        expect(leaked).not.toContain(left[0]);
        await expectSigningOnlyWith(store, t, a, left[0]!, stopped);
      }
    });
  });
});
