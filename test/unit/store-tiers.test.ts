// DESIGN §2 and the Store contract's tiers: createOAuthRouter checks what its enabled features need, naming it.
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { disableClient } from '../../src/clients/disable-client.js';
import { withdrawConsent } from '../../src/consents/withdraw-consent.js';
import { missingStoreMethods } from '../../src/stores/check-store.js';
import type { Store } from '../../src/stores/contract.js';
import { basic, createTestUserAuth, ISSUER } from '../helpers/app.js';

const QUIET = { logger: { warn() {}, error() {} }, session: { secret: 'test-session-secret-0123456789' } };

/** The memory store cut down to the required tier: what a minimal custom store implements. */
function requiredOnly(): { store: Store; full: ReturnType<typeof createMemoryStore> } {
  const full = createMemoryStore();
  const { findClient } = full.clients;
  const { saveTokens, findAccessToken, findRefreshToken, revokeAccessToken, revokeGrant } = full.tokens;
  const store: Store = {
    clients: { findClient },
    codes: full.codes,
    tokens: { saveTokens, findAccessToken, findRefreshToken, revokeAccessToken, revokeGrant },
  };
  return { store, full };
}

describe('store tiers', () => {
  it('a store with only the required tier is refused by default, naming every consents method and the options that need them', () => {
    const { store } = requiredOnly();
    expect(() => createOAuthRouter(store, createTestUserAuth(new Set()), { issuer: ISSUER, ...QUIET })).toThrow(
      /store\.consents\.findConsent, store\.consents\.saveConsent, store\.consents\.revokeConsent, store\.consents\.listConsents, store\.tokens\.revokeClientTokens \(tier "consents", needed by rememberConsent and consentsPage/,
    );
  });

  it('a missing required method is named even when no feature is enabled', () => {
    const { store } = requiredOnly();
    const broken = { ...store, codes: { saveCode: store.codes.saveCode } } as unknown as Store;
    expect(() => createOAuthRouter(broken, createTestUserAuth(new Set()), {
      issuer: ISSUER, rememberConsent: false, consentsPage: false, ...QUIET,
    })).toThrow(/store\.codes\.consumeCode \(required\)/);
  });

  it('with rememberConsent and consentsPage off, a required-tier store serves tokens and has no consents page', async () => {
    const { store, full } = requiredOnly();
    const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
      issuer: ISSUER, rememberConsent: false, consentsPage: false, ...QUIET,
    });
    const app = express().use(oauth.router);
    const { client, clientSecret } = await registerClient(full, { name: 'Nightly Sync', flow: 'client_credentials' });
    const res = await request(app).post('/oauth2/token').set('Authorization', basic({ clientId: client.clientId, clientSecret }))
      .type('form').send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    expect((await request(app).get('/oauth2/consents')).status).toBe(404);
  });

  it('administration and consent operations on a store without their tier throw, naming what is missing', async () => {
    const { store } = requiredOnly();
    await expect(registerClient(store, { name: 'X', flow: 'client_credentials' })).rejects.toThrow(/store\.clients\.createClient.*needed by registerClient/);
    await expect(disableClient(store, 'x')).rejects.toThrow(/store\.clients\.updateClient/);
    await expect(withdrawConsent(store, 'u', 'c')).rejects.toThrow(/store\.consents\.revokeConsent/);
  });

  it('every built-in store has every tier', () => {
    const store = createMemoryStore();
    for (const tier of ['required', 'administration', 'consents', 'signingKeys', 'rateLimits'] as const) {
      expect(missingStoreMethods(store, tier)).toEqual([]);
    }
  });
});
