// A router whose store was closed (a host shutting down, a test's app torn down) answers 503, never 500, on every store.
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';
import { createTestApp, basic } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { isStoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

describe.each(builtInStores('closed_store'))('%s store, once closed', (_label, available, open) => {
  let opened: OpenedStore | undefined;
  afterEach(async () => {
    await opened?.dispose();
    opened = undefined;
  });

  it.skipIf(!available)('rejects each call with StoreUnavailableError (a 503 outage, not a bug\'s 500)', async () => {
    opened = await open();
    const { store } = opened;
    await store.close?.();
    const failure = await store.clients.findClient('any-client').then(() => null, (err: unknown) => err);
    expect(isStoreUnavailableError(failure), String(failure)).toBe(true);
    // A second close() after the first is harmless (shutdown hooks run it twice).
    await expect(store.close?.()).resolves.toBeUndefined();
  });

  it.skipIf(!available)('resolves a close() called while another runs only once that one has closed the store (two shutdown hooks)', async () => {
    opened = await open();
    const { store } = opened;
    await store.clients.findClient('any-client');
    const resolved: string[] = [];
    await Promise.all([
      store.close?.().then(() => { resolved.push('first'); }),
      store.close?.().then(() => { resolved.push('second'); }),
    ]);
    expect(resolved).toEqual(['first', 'second']);
  });

  it.skipIf(!available)('answers the token, revocation and bearer requests that arrive after close() with 503 temporarily_unavailable (RFC 6749 §5.2)', async () => {
    opened = await open();
    const h = await createTestApp({}, opened.store);
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await opened.store.close?.();
    const tokenRes = await request(h.app).post('/oauth2/token').set('Authorization', basic(h.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(tokenRes.status).toBe(503);
    expect(tokenRes.body.error).toBe('temporarily_unavailable');
    const revokeRes = await request(h.app).post('/oauth2/revoke').set('Authorization', basic(h.credentialsClient)).type('form')
      .send({ token });
    expect(revokeRes.status).toBe(503);
    const bearerRes = await request(h.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(bearerRes.status).toBe(503);
  });
});
