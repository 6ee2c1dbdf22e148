// SPEC §4.3 through a store with `codeRedemption`: one store call per exchange, the same answers as with two.
import { describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, REDIRECT_URI, type TestApp, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { registerSpecClient } from '../helpers/spec-client.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { disableClient } from '../../src/clients/disable-client.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { CodeRedemption, Store } from '../../src/stores/contract.js';

type Calls = Record<'peekCode' | 'redeemCode' | 'consumeCode' | 'saveTokens', number>;

/**
 * The memory store with every call of the exchange counted. `hold` makes the first `redeemCode` wait until
 * `open()`: `reached` resolves once it waits, before it has touched the code. `withRedemption: false` takes the
 * part away, for the two-call way to compare with.
 */
function countedStore(withRedemption = true) {
  const inner = createMemoryStore();
  const calls: Calls = { peekCode: 0, redeemCode: 0, consumeCode: 0, saveTokens: 0 };
  let open!: () => void;
  const gate = new Promise<void>((resolve) => { open = resolve; });
  let signal!: () => void;
  const reached = new Promise<void>((resolve) => { signal = resolve; });
  let held = false;
  let holding = false;
  const redemption: CodeRedemption = {
    peekCode: (codeHash) => { calls.peekCode += 1; return inner.codeRedemption.peekCode(codeHash); },
    async redeemCode(...args) {
      calls.redeemCode += 1;
      if (holding && !held) {
        held = true;
        signal();
        await gate;
      }
      return inner.codeRedemption.redeemCode(...args);
    },
  };
  const { codeRedemption: _part, ...rest } = inner;
  const store: Store = {
    ...rest,
    codes: { ...inner.codes, consumeCode: (codeHash) => { calls.consumeCode += 1; return inner.codes.consumeCode(codeHash); } },
    tokens: { ...inner.tokens, saveTokens: (...args) => { calls.saveTokens += 1; return inner.tokens.saveTokens(...args); } },
    ...(withRedemption ? { codeRedemption: redemption } : {}),
  };
  return { store, calls, hold: () => { holding = true; }, reached, open };
}

function exchange(t: TestApp, client: TestClient, code: string, extra: Record<string, string> = {}) {
  return request(t.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'authorization_code', client_id: client.clientId, redirect_uri: REDIRECT_URI, code, ...extra });
}

/** Whether the store still has the code unused: consuming it now would win. */
async function codeIsLive(store: Store, code: string): Promise<boolean> {
  return (await store.codes.consumeCode(hashToken(code))).kind === 'consumed';
}

describe('SPEC §4.3 with Store.codeRedemption (RFC 6749 §4.1.2, §4.1.3)', () => {
  it('a code that passes every check is consumed and its tokens saved in one redeemCode call, with no consumeCode or saveTokens', async () => {
    const counted = countedStore();
    const t = await createTestApp({}, counted.store);
    const code = await obtainCode(t.app, t.codeClient);
    const res = await exchange(t, t.codeClient, code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ expires_in: 3600, token_type: 'Bearer' });
    expect(counted.calls).toEqual({ peekCode: 1, redeemCode: 1, consumeCode: 0, saveTokens: 0 });
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.body).toMatchObject({ clientId: t.codeClient.clientId, userId: 'user-alice' });
    expect(await t.store.tokens.findRefreshToken(hashToken(res.body.refresh_token))).not.toBeNull();
  });

  // Each refusal, with and without the part: the same status, error and description, and the code used up.
  const refusals: { rule: string; make(t: TestApp): Promise<{ client: TestClient; code: string; extra?: Record<string, string> }> }[] = [
    { rule: 'a redirect_uri other than the authorization request\'s', make: async (t) => ({ client: t.codeClient, code: await obtainCode(t.app, t.codeClient), extra: { redirect_uri: 'http://localhost:8080/cb?tenant=a%20b' } }) },
    { rule: 'a code of another integration', make: async (t) => ({ client: await registerSpecClient(t.store, 'authorization_code'), code: await obtainCode(t.app, t.codeClient) }) },
    { rule: 'a code_verifier for a code issued without a challenge', make: async (t) => ({ client: t.codeClient, code: await obtainCode(t.app, t.codeClient), extra: { code_verifier: 'a'.repeat(43) } }) },
    { rule: 'a code whose user was deleted', make: async (t) => { const code = await obtainCode(t.app, t.codeClient); t.deletedUsers.add('user-alice'); return { client: t.codeClient, code }; } },
  ];
  for (const { rule, make } of refusals) {
    it(`${rule}: invalid_grant exactly as without codeRedemption, and the code is used up (no redeemCode)`, async () => {
      const answers = [];
      for (const withRedemption of [true, false]) {
        const counted = countedStore(withRedemption);
        const t = await createTestApp({}, counted.store);
        const { client, code, extra } = await make(t);
        const res = await exchange(t, client, code, extra);
        answers.push({ status: res.status, body: res.body });
        expect(counted.calls.redeemCode).toBe(0);
        expect(counted.calls.consumeCode).toBe(1);
        expect(await codeIsLive(t.store, code)).toBe(false);
      }
      expect(answers[0]!.status).toBe(400);
      expect(answers[0]!.body.error).toBe('invalid_grant');
      expect(answers[0]).toEqual(answers[1]);
    });
  }

  it('an unknown code: invalid_grant, as without the part', async () => {
    const counted = countedStore();
    const t = await createTestApp({}, counted.store);
    const res = await exchange(t, t.codeClient, 'not-a-code');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: 'authorization code is invalid or expired' });
  });

  it('a replay of a redeemed code is refused and revokes the tokens the first redemption got', async () => {
    const counted = countedStore();
    const t = await createTestApp({}, counted.store);
    const code = await obtainCode(t.app, t.codeClient);
    const first = await exchange(t, t.codeClient, code);
    expect(first.status).toBe(200);
    const replay = await exchange(t, t.codeClient, code);
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_grant', error_description: 'authorization code has already been used' });
    expect((await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${first.body.access_token}`)).status).toBe(401);
    expect(await t.store.tokens.findRefreshToken(hashToken(first.body.refresh_token))).toBeNull();
  });

  it('two redemptions racing past their peeks: the first to redeem gets tokens, the other is a replay that revokes them', async () => {
    const counted = countedStore();
    const t = await createTestApp({}, counted.store);
    const code = await obtainCode(t.app, t.codeClient);
    counted.hold();
    const held = exchange(t, t.codeClient, code).then((r) => r);
    await counted.reached;
    const second = await exchange(t, t.codeClient, code);
    expect(second.status).toBe(200);
    counted.open();
    const first = await held;
    expect(first.status).toBe(400);
    expect(first.body).toMatchObject({ error: 'invalid_grant', error_description: 'authorization code has already been used' });
    expect((await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${second.body.access_token}`)).status).toBe(401);
    expect(await t.store.tokens.findRefreshToken(hashToken(second.body.refresh_token))).toBeNull();
  });

  it('an integration disabled between the peek and the redemption: invalid_grant, the code used up, no token saved', async () => {
    const counted = countedStore();
    const t = await createTestApp({}, counted.store);
    const code = await obtainCode(t.app, t.codeClient);
    counted.hold();
    const held = exchange(t, t.codeClient, code).then((r) => r);
    await counted.reached;
    await disableClient(t.store, t.codeClient.clientId);
    counted.open();
    const res = await held;
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(await codeIsLive(t.store, code)).toBe(false);
    expect(counted.calls.saveTokens).toBe(0);
  });

  it('a store that fails the peek: 503 temporarily_unavailable, and the code stays unused', async () => {
    const counted = countedStore();
    const failing: Store = {
      ...counted.store,
      codeRedemption: { ...counted.store.codeRedemption!, peekCode: () => Promise.reject(new StoreUnavailableError('the store is down')) },
    };
    const t = await createTestApp({}, failing);
    const code = await obtainCode(t.app, t.codeClient);
    const res = await exchange(t, t.codeClient, code);
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');
    expect(await codeIsLive(t.store, code)).toBe(true);
  });
});
