// RFC 7009 §2.1 and RFC 6749 §10.2: disabling, rotating, withdrawing and revoking take effect when the call returns.
import { describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, REDIRECT_URI, USER, type TestApp, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { apiStatus, codeTokens, refresh } from '../helpers/token-requests.js';
import { gateSaveTokens } from '../helpers/gate-save-tokens.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { disableClient } from '../../src/clients/disable-client.js';
import { rotateClientSecret } from '../../src/clients/rotate-client-secret.js';
import { withdrawConsent } from '../../src/consents/withdraw-consent.js';
import { hashToken } from '../../src/crypto/hash-token.js';

const clientCredentials = (app: TestApp['app'], client: TestClient) =>
  request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send({ grant_type: 'client_credentials' });

/** A test app whose first saveTokens waits at a gate the test opens. */
async function gatedApp() {
  const gated = gateSaveTokens(createMemoryStore());
  return { gated, t: await createTestApp({}, gated.store) };
}

/** Resolves once Date.now() is past `ms`: a moment taken then is strictly later, at millisecond precision. */
async function clockPast(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((resolve) => setImmediate(resolve));
}

describe('a revocation overtaking a token request that has passed its checks', () => {
  it('disableClient while a client_credentials request is saving: no token exists, and the request is answered as one sent after it (401 invalid_client)', async () => {
    const { gated, t } = await gatedApp();
    const pending = clientCredentials(t.app, t.credentialsClient).then((r) => r);
    const held = await gated.reached;
    await disableClient(t.store, t.credentialsClient.clientId);
    gated.open();
    const res = await pending;
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(await t.store.tokens.findAccessToken(held.access.tokenHash)).toBeNull();
  });

  it('rotateClientSecret while a client_credentials request is saving: no token exists, and the old secret is answered 401 invalid_client', async () => {
    const { gated, t } = await gatedApp();
    const pending = clientCredentials(t.app, t.credentialsClient).then((r) => r);
    const held = await gated.reached;
    const secret = await rotateClientSecret(t.store, t.credentialsClient.clientId);
    gated.open();
    expect((await pending).body.error).toBe('invalid_client');
    expect(await t.store.tokens.findAccessToken(held.access.tokenHash)).toBeNull();
    const renewed = await clientCredentials(t.app, { clientId: t.credentialsClient.clientId, clientSecret: secret! });
    expect(renewed.status).toBe(200);
  });

  it('withdrawConsent while a refresh is saving (held at the gate): invalid_grant, and nothing of the grant survives', async () => {
    const memory = createMemoryStore();
    const t = await createTestApp({}, memory);
    const tokens = await codeTokens(t.app, t.codeClient);
    // Same store, second router whose next save is held: the refresh runs through it.
    const gated = gateSaveTokens(memory);
    const g = await createTestApp({}, gated.store);
    const pending = refresh(g.app, t.codeClient, tokens.refreshToken).then((r) => r);
    const held = await gated.reached;
    await withdrawConsent(memory, USER.id, t.codeClient.clientId);
    gated.open();
    const res = await pending;
    expect(res.body.error).toBe('invalid_grant');
    expect(await memory.tokens.findAccessToken(held.access.tokenHash)).toBeNull();
    expect(await apiStatus(t.app, tokens.accessToken)).toBe(401);
    expect((await refresh(t.app, t.codeClient, tokens.refreshToken)).body.error).toBe('invalid_grant');
  });
});

describe('codes issued before a revocation', () => {
  it('a code issued before disableClient is refused even after the integration is enabled again', async () => {
    const t = await createTestApp();
    const code = await obtainCode(t.app, t.codeClient);
    await disableClient(t.store, t.codeClient.clientId);
    await t.store.clients.updateClient!(t.codeClient.clientId, { disabled: false });
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    expect(res.body.error).toBe('invalid_grant');
  });

  it('a code issued before rotateClientSecret is refused with the new secret', async () => {
    const t = await createTestApp();
    const code = await obtainCode(t.app, t.codeClient);
    const secret = await rotateClientSecret(t.store, t.codeClient.clientId);
    await clockPast(Date.now());
    const renewed = { clientId: t.codeClient.clientId, clientSecret: secret! };
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(renewed)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    expect(res.body.error).toBe('invalid_grant');
    const fresh = await obtainCode(t.app, renewed);
    const ok = await request(t.app).post('/oauth2/token').set('Authorization', basic(renewed)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code: fresh });
    expect(ok.status).toBe(200);
  });
});

describe('a burst of token requests racing disableClient', () => {
  it('no token answered before, during or after the disable works once disableClient has returned', async () => {
    const t = await createTestApp();
    const issued: string[] = [];
    let disabled = false;
    const loop = async () => {
      for (let i = 0; i < 30 && !disabled; i += 1) {
        const res = await clientCredentials(t.app, t.credentialsClient);
        expect(res.status).toBeLessThan(500);
        if (res.status === 200) issued.push(res.body.access_token as string);
      }
    };
    let finished = false;
    const loops = Promise.all(Array.from({ length: 6 }, loop)).finally(() => { finished = true; });
    // Mid-burst by count, not by time: some tokens are out, more requests are in flight.
    while (issued.length < 10 && !finished) await new Promise((resolve) => setImmediate(resolve));
    await disableClient(t.store, t.credentialsClient.clientId);
    disabled = true;
    await loops;
    expect(issued.length).toBeGreaterThanOrEqual(10);
    const statuses = await Promise.all(issued.map((token) => apiStatus(t.app, token)));
    expect(statuses.every((status) => status === 401)).toBe(true);
    for (const token of issued) expect(await t.store.tokens.findAccessToken(hashToken(token))).toBeNull();
  });
});
