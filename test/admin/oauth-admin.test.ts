// The programmatic admin API (`oauth.admin`): audit events, and stores that cannot do an operation.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { basic, createTestApp, type TestClient } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { createOAuthRouter } from '../../src/router.js';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { inspect } from 'node:util';
import { RevocationIncompleteError, StoreCapabilityError, UnknownClientError } from '../../src/clients/client-errors.js';
import { registerClient } from '../../src/clients/register-client.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { ClientChanges, OAuthClient, Store } from '../../src/stores/contract.js';

/** A store that hands out the very objects it keeps, as a plain-JS store may: findClient and listClients share them. */
function sharedObjectStore(): Store {
  const inner = createMemoryStore();
  const kept = new Map<string, OAuthClient>();
  const keep = (client: OAuthClient): OAuthClient => {
    if (!kept.has(client.clientId)) kept.set(client.clientId, client);
    return kept.get(client.clientId)!;
  };
  return {
    ...inner,
    clients: {
      ...inner.clients,
      findClient: async (clientId: string) => {
        const client = await inner.clients.findClient(clientId);
        return client && keep(client);
      },
      listClients: async () => (await inner.clients.listClients!()).map(keep),
    },
  };
}

/** A store as written for contract v1: it knows neither deleteClient nor the previous secret's fields. */
function contractV1Store(): Store {
  const inner = createMemoryStore();
  const { findClient, createClient, listClients, updateClient } = inner.clients;
  return {
    ...inner,
    clients: {
      findClient, createClient, listClients,
      updateClient: (clientId: string, changes: ClientChanges) => {
        const { previousClientSecretHash: _hash, previousClientSecretExpiresAt: _until, ...known } = changes;
        return updateClient(clientId, known);
      },
    },
  };
}

function tokenStatus(app: Parameters<typeof request>[0], client: TestClient): Promise<number> {
  return request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'client_credentials' }).then((res) => res.status);
}

describe('createOAuthAdmin (RFC 6749 §2, RFC 7009 §2.1)', () => {
  it('an update checks only the redirect URIs it adds: one stored before a rule refused it stays, and the integration can still change', async () => {
    const store = createMemoryStore();
    const oauth = createOAuthRouter(store, { verifyCredentials: async () => null }, {
      issuer: 'http://auth.test', session: { secret: 'test-session-secret-0123456789' },
    });
    const { client } = await oauth.admin.createClient({ name: 'Old', flow: 'authorization_code', redirectUris: ['https://good.example/cb'] });
    // Written before registration refused backslashes (RFC 3986 §2), as a tool writing the store could.
    const legacy = 'https://good.example\\@evil.example/cb';
    await store.clients.updateClient!(client.clientId, { redirectUris: ['https://good.example/cb', legacy] });
    await oauth.admin.updateClient(client.clientId, { addRedirectUris: ['https://good.example/cb2'] });
    expect((await store.clients.findClient(client.clientId))!.redirectUris).toEqual(['https://good.example/cb', legacy, 'https://good.example/cb2']);
    await expect(oauth.admin.updateClient(client.clientId, { addRedirectUris: ['https://good.example\\@other.example/cb'] }))
      .rejects.toThrow(/which a URI may not hold/);
  });

  it('oauth.admin publishes client.* and token.revoked events with ids and field names only, issuer and ip null', async () => {
    const events = new OAuthEvents();
    const seen: OAuthEvent[] = [];
    events.on('event', (event) => seen.push(event));
    const host = await createTestApp({ events });
    const oauth = createOAuthRouter(host.store, { verifyCredentials: async () => null }, {
      issuer: 'http://auth.test', session: { secret: 'test-session-secret-0123456789' }, events,
    });
    const { client, clientSecret } = await oauth.admin.createClient({ name: 'Acme', flow: 'client_credentials' });
    await oauth.admin.updateClient(client.clientId, { name: 'Acme 2', tokenEndpointAuthMethod: 'client_secret_basic' });
    // Values it has already: no change, so no event.
    expect(await oauth.admin.updateClient(client.clientId, { name: 'Acme 2', tokenEndpointAuthMethod: 'client_secret_basic' })).toMatchObject({ fields: [], tokensRevoked: false });
    // Scoping an all-access integration narrows it: its tokens go, for a cause of their own (not `admin`'s revokeTokens).
    expect(await oauth.admin.updateClient(client.clientId, { allowedScopes: ['envelopes:read'] })).toMatchObject({ tokensRevoked: true });
    const rotated = await oauth.admin.rotateSecret(client.clientId, { gracePeriodSeconds: 60 });
    await oauth.admin.rotateSecret(client.clientId);
    await oauth.admin.disableClient(client.clientId);
    await oauth.admin.enableClient(client.clientId);
    await oauth.admin.revokeTokens({ userId: 'user-alice' });
    await oauth.admin.deleteClient(client.clientId);
    const summary = seen.map((e) => [e.type, 'cause' in e ? e.cause : null, 'extent' in e ? e.extent : null]);
    expect(summary).toEqual([
      ['client.created', null, null],
      ['client.updated', null, null],
      ['client.updated', null, null],
      ['token.revoked', 'client_scopes_narrowed', 'client'],
      ['client.secret_rotated', null, null],
      ['client.secret_rotated', null, null],
      ['token.revoked', 'client_secret_rotated', 'client'],
      ['client.disabled', null, null],
      ['token.revoked', 'client_disabled', 'client'],
      ['client.enabled', null, null],
      ['token.revoked', 'admin', 'user'],
      ['token.revoked', 'client_deleted', 'client'],
      ['client.deleted', null, null],
    ]);
    expect(seen[1]).toMatchObject({ clientId: client.clientId, fields: ['name', 'tokenEndpointAuthMethod'] });
    expect(seen[2]).toMatchObject({ clientId: client.clientId, fields: ['allowedScopes'] });
    expect(seen[3]).toMatchObject({ clientId: client.clientId, userId: null, grantId: null });
    expect(seen[4]).toMatchObject({ previousSecretValidUntil: rotated.previousSecretValidUntil });
    expect(seen[5]).toMatchObject({ previousSecretValidUntil: null });
    expect(seen[10]).toMatchObject({ clientId: null, userId: 'user-alice', grantId: null });
    for (const event of seen) {
      expect(event).toMatchObject({ issuer: null, ip: null });
      expect(event.time).toBeInstanceOf(Date);
      expect(JSON.stringify(event)).not.toContain(clientSecret);
      expect(JSON.stringify(event)).not.toContain(rotated.clientSecret);
    }
  });

  it('an update to the values an integration has already writes nothing: no field changed, no token revoked, its copies kept', async () => {
    const host = await createTestApp();
    const admin = createOAuthAdmin(host.store);
    const { client, clientSecret } = await admin.createClient({ name: 'Acme', flow: 'client_credentials', allowedScopes: ['read', 'write'] });
    const { client: web } = await admin.createClient({
      name: 'Acme web', flow: 'authorization_code', redirectUris: ['https://acme.example/a', 'https://acme.example/b'],
    });
    const writes: ClientChanges[] = [];
    const updateClient = host.store.clients.updateClient!.bind(host.store.clients);
    host.store.clients.updateClient = (clientId, changes) => {
      writes.push(changes);
      return updateClient(clientId, changes);
    };
    const token = await request(host.app).post('/oauth2/token').set('Authorization', basic({ clientId: client.clientId, clientSecret }))
      .type('form').send({ grant_type: 'client_credentials' });
    expect(token.status).toBe(200);
    const same = await admin.updateClient(client.clientId, {
      name: 'Acme', allowedScopes: ['write', 'read'], requirePkce: client.requirePkce, tokenEndpointAuthMethod: null,
    });
    expect(same).toEqual({ client, fields: [], tokensRevoked: false });
    const sameUris = await admin.updateClient(web.clientId, { redirectUris: ['https://acme.example/b', 'https://acme.example/a'] });
    expect(sameUris).toEqual({ client: web, fields: [], tokensRevoked: false });
    expect(writes, 'nothing written').toEqual([]);
    const partly = await admin.updateClient(client.clientId, { name: 'Acme', tokenEndpointAuthMethod: 'client_secret_basic' });
    expect(partly.fields, 'only what changed').toEqual(['tokenEndpointAuthMethod']);
    expect(writes).toEqual([{ tokenEndpointAuthMethod: 'client_secret_basic' }]);
    const guarded = await request(host.app).get('/api/v1/me').set('Authorization', `Bearer ${String(token.body.access_token)}`);
    expect(guarded.status, 'the token still works').toBe(200);
  });

  it("disable ends a planned rotation's grace period: after enable only the new secret authenticates", async () => {
    const host = await createTestApp();
    const admin = createOAuthAdmin(host.store);
    const { client, clientSecret: oldSecret } = await admin.createClient({ name: 'Acme', flow: 'client_credentials' });
    const { clientSecret: newSecret } = await admin.rotateSecret(client.clientId, { gracePeriodSeconds: 3600 });
    expect(await tokenStatus(host.app, { clientId: client.clientId, clientSecret: oldSecret }), 'in grace').toBe(200);
    await admin.disableClient(client.clientId);
    await admin.enableClient(client.clientId);
    expect(await tokenStatus(host.app, { clientId: client.clientId, clientSecret: oldSecret }), 'the old secret stays gone').toBe(401);
    expect(await tokenStatus(host.app, { clientId: client.clientId, clientSecret: newSecret })).toBe(200);
    expect(await admin.getClient(client.clientId)).not.toHaveProperty('previousClientSecretHash');
  });

  it('mutations of an unknown client_id reject with UnknownClientError; getClient resolves null', async () => {
    const admin = createOAuthAdmin(createMemoryStore());
    expect(await admin.getClient('nope')).toBeNull();
    for (const call of [
      () => admin.updateClient('nope', { name: 'x' }), () => admin.rotateSecret('nope'), () => admin.rotateSecret('nope', { gracePeriodSeconds: 5 }),
      () => admin.disableClient('nope'), () => admin.enableClient('nope'), () => admin.deleteClient('nope'),
      () => admin.revokeTokens({ clientId: 'nope' }),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(UnknownClientError);
    }
    const long = 'x'.repeat(100_000);
    const refused: unknown = await admin.disableClient(long).then(() => null, (error: unknown) => error);
    expect(refused).toBeInstanceOf(UnknownClientError);
    expect((refused as UnknownClientError).clientId, 'the error keeps the id').toBe(long);
    expect((refused as UnknownClientError).message.length, 'its message shows it cut').toBeLessThan(300);
  });

  it('a chosen clientId outside VSCHAR (RFC 6749 Appendix A.1: %x20-7E) is a TypeError that says so, and nothing is stored', async () => {
    const admin = createOAuthAdmin(createMemoryStore());
    for (const clientId of ['café-partner', 'tab\there', 'del\u007fid', 'nul\u0000id', 'nbsp\u00a0id', 'emoji-\u{1F600}', 'line\nbreak', '', 'x'.repeat(256)]) {
      const refused: unknown = await admin.createClient({ name: 'Acme', flow: 'client_credentials', clientId }).then(() => null, (error: unknown) => error);
      expect(refused, JSON.stringify(clientId)).toBeInstanceOf(TypeError);
      expect((refused as TypeError).message).toBe('clientId must be 1–255 characters from %x20-7E (printable ASCII and space: RFC 6749 Appendix A.1 VSCHAR)');
    }
    expect(await admin.listClients()).toEqual([]);
    // Every VSCHAR is accepted, the characters Basic credentials must encode (RFC 6749 §2.3.1) too.
    for (const clientId of ['tenant:partner', 'partner+7%41', 'spaced partner', '~!"#$&\'()*,./;<=>?@[\\]^_`{|}-', 'x'.repeat(255)]) {
      expect((await admin.createClient({ name: 'Acme', flow: 'client_credentials', clientId })).client.clientId).toBe(clientId);
    }
  });

  it('an imported row whose client_id is outside VSCHAR is invalid, with the same message', async () => {
    const admin = createOAuthAdmin(createMemoryStore());
    const row = (clientId: string) => ({ line: 1, fields: { client_id: clientId, client_secret: 'partner secret', name: 'Partner', flow: 'client_credentials', credentials_issued_at: '2020-01-01' } });
    const report = await admin.importClients([row('café-partner')]);
    expect(report.refused).toBe(true);
    expect(report.rows).toEqual([expect.objectContaining({ outcome: 'invalid', message: expect.stringContaining('client_id must be 1–255 characters from %x20-7E') })]);
    expect(await admin.listClients()).toEqual([]);
  });

  it('a grace period longer than 30 days, or not whole seconds, is a TypeError and changes nothing', async () => {
    const admin = createOAuthAdmin(createMemoryStore());
    const { client } = await admin.createClient({ name: 'Acme', flow: 'client_credentials' });
    await expect(admin.rotateSecret(client.clientId, { gracePeriodSeconds: 30 * 86_400 + 1 })).rejects.toBeInstanceOf(TypeError);
    await expect(admin.rotateSecret(client.clientId, { gracePeriodSeconds: 1.5 })).rejects.toBeInstanceOf(TypeError);
    expect(await admin.getClient(client.clientId)).toEqual(client);
  });

  it('a name is 1–200 characters counted in code points, and well-formed text: 200 emoji are a name, a lone surrogate is not', async () => {
    const admin = createOAuthAdmin(createMemoryStore());
    const emoji = '\u{1F4DD}'.repeat(200);
    const { client } = await admin.createClient({ name: emoji, flow: 'client_credentials' });
    expect(client.name).toBe(emoji);
    await expect(admin.createClient({ name: `${emoji}x`, flow: 'client_credentials' })).rejects.toThrow('name must be 1–200 characters');
    for (const lone of ['Acme \uD83D', '\uDC1D Acme']) {
      await expect(admin.createClient({ name: lone, flow: 'client_credentials' })).rejects.toThrow('lone surrogates');
      await expect(admin.updateClient(client.clientId, { name: lone })).rejects.toThrow('lone surrogates');
    }
    expect(await admin.getClient(client.clientId)).toEqual(client);
  });

  it('a name shows something: only zero-width, blank or space characters are refused, as on create so on update', async () => {
    const admin = createOAuthAdmin(createMemoryStore());
    const { client } = await admin.createClient({ name: 'Acme', flow: 'client_credentials' });
    for (const invisible of ['\u200B', '\u200B\u200C\u200D\u2060', '\u3164', ' \u115F\u1160 ', '\u2800\u2800', '\uFFA0\u00A0', '\u0301']) {
      await expect(admin.createClient({ name: invisible, flow: 'client_credentials' })).rejects.toThrow('name must show at least one');
      await expect(admin.updateClient(client.clientId, { name: invisible })).rejects.toThrow('name must show at least one');
    }
    expect(await admin.getClient(client.clientId)).toEqual(client);
    for (const visible of ['.', '\u200BAcme', '\u{1F4DD}', '\u3164x', 'تطبيق', '\u4E2D']) {
      expect((await admin.createClient({ name: visible, flow: 'client_credentials' })).client.name).toBe(visible);
    }
  });

  it('a contract-v1 store refuses a grace period with StoreCapabilityError, and the old secret keeps working over HTTP', async () => {
    const store = contractV1Store();
    const host = await createTestApp({}, store);
    const admin = createOAuthAdmin(store);
    const client = host.credentialsClient;
    await expect(admin.rotateSecret(client.clientId, { gracePeriodSeconds: 3600 })).rejects.toBeInstanceOf(StoreCapabilityError);
    expect(await tokenStatus(host.app, client)).toBe(200);
    await clientCredentialsToken(host.app, client);
  });

  it('listClients and getClient answer copies: a host trimming them for display leaves the integration working', async () => {
    const store = sharedObjectStore();
    const host = await createTestApp({}, store);
    const admin = createOAuthAdmin(store);
    const client = host.credentialsClient;
    for (const shown of [...await admin.listClients(), await admin.getClient(client.clientId)]) {
      const record = shown as { -readonly [K in keyof OAuthClient]?: OAuthClient[K] } & { redirectUris?: string[] };
      delete record.clientSecretHash;
      record.redirectUris?.push('https://attacker.example/cb');
    }
    const stored = await store.clients.findClient(client.clientId);
    expect(stored?.clientSecretHash).toMatch(/./);
    expect(stored?.redirectUris).not.toContain('https://attacker.example/cb');
    expect(await tokenStatus(host.app, client)).toBe(200);
  });

  it('a disable or a narrowing whose revocation fails rejects with RevocationIncompleteError, the change made and reported, and a second disable revokes', async () => {
    const inner = createMemoryStore();
    let failures = 0;
    const store: Store = {
      ...inner,
      tokens: {
        ...inner.tokens,
        revokeClientTokens: async (clientId: string, userId?: string) => {
          if (failures > 0) {
            failures -= 1;
            throw new StoreUnavailableError('SQLite store unavailable (SQLITE_FULL)');
          }
          return inner.tokens.revokeClientTokens!(clientId, userId);
        },
      },
    };
    const events = new OAuthEvents();
    const seen: string[] = [];
    events.on('event', (event: OAuthEvent) => seen.push(event.type));
    const host = await createTestApp({}, store);
    const admin = createOAuthAdmin(store, { events });
    const client = host.credentialsClient;
    const token = await clientCredentialsToken(host.app, client);
    failures = 1;
    const disabled = await admin.disableClient(client.clientId).then(() => null, (error: unknown) => error);
    expect(disabled).toBeInstanceOf(RevocationIncompleteError);
    expect(disabled).toMatchObject({ clientId: client.clientId, clientSecret: null });
    expect((disabled as Error).message).toMatch(/^".+" was disabled, but revoking the tokens obtained before failed \(SQLite store unavailable \(SQLITE_FULL\)\)/);
    expect((await store.clients.findClient(client.clientId))?.disabled).toBe(true);
    expect(seen).toEqual(['client.disabled']);
    // Disabled, not revoked: the token still works until a second disable revokes it.
    expect((await store.tokens.findAccessToken(hashToken(token)))).not.toBeNull();
    expect(await admin.disableClient(client.clientId)).toEqual({ alreadyDisabled: true });
    expect((await store.tokens.findAccessToken(hashToken(token)))).toBeNull();
    // The retry disabled nothing (the first call did, and said so): it reports the revocation it finished, alone.
    expect(seen).toEqual(['client.disabled', 'token.revoked']);

    const scoped = await registerClient(store, { name: 'Scoped', flow: 'client_credentials', allowedScopes: ['envelopes:read', 'envelopes:sign'] });
    failures = 1;
    const updates: unknown[] = [];
    events.on('event', (event: OAuthEvent) => {
      if (event.type === 'client.updated') updates.push(event);
    });
    const narrowed = await admin.updateClient(scoped.client.clientId, { name: 'Scoped, read only', allowedScopes: ['envelopes:read'] })
      .then(() => null, (error: unknown) => error);
    expect(narrowed).toBeInstanceOf(RevocationIncompleteError);
    expect((narrowed as Error).message).toMatch(/^the scopes of ".+" were narrowed, but revoking the tokens obtained before failed/);
    expect((narrowed as RevocationIncompleteError).fields).toEqual(['name', 'allowedScopes']);
    expect((await store.clients.findClient(scoped.client.clientId))?.allowedScopes).toEqual(['envelopes:read']);
    // The change was written, so the audit trail has it, as a disable whose revocation failed has its event.
    expect(updates).toEqual([expect.objectContaining({ type: 'client.updated', clientId: scoped.client.clientId, fields: ['name', 'allowedScopes'] })]);

    // A rotation's new secret rides on the error, readable but not enumerable: a host logging the error object
    // (console.error, util.inspect, pino's err serializer, JSON) does not write it to its log.
    failures = 1;
    const rotated = await admin.rotateSecret(scoped.client.clientId).then(() => null, (error: unknown) => error) as RevocationIncompleteError;
    expect(rotated).toBeInstanceOf(RevocationIncompleteError);
    expect(rotated.clientSecret).toMatch(/^[A-Za-z0-9_-]{20,}/);
    expect(Object.keys(rotated)).not.toContain('clientSecret');
    expect(inspect(rotated, { depth: 5 })).not.toContain(rotated.clientSecret!);
    expect(JSON.stringify({ ...rotated })).not.toContain(rotated.clientSecret!);
  });

  it('a store without deleteClient refuses delete with StoreCapabilityError and leaves the integration as it was', async () => {
    const store = contractV1Store();
    const host = await createTestApp({}, store);
    const admin = createOAuthAdmin(store);
    const client = host.credentialsClient;
    const before = await admin.getClient(client.clientId);
    await expect(admin.deleteClient(client.clientId)).rejects.toThrow(/deleteClient/);
    await expect(admin.deleteClient(client.clientId)).rejects.toBeInstanceOf(StoreCapabilityError);
    expect(await admin.getClient(client.clientId)).toEqual(before);
    expect(await tokenStatus(host.app, client)).toBe(200);
  });
});
