// A consent granted before its integration was created does not count: deleting an integration and creating it
// again under the same client_id asks its users again, on a store that removes consents on delete and on one
// (Redis) that leaves them behind. Also: a code of a deleted integration is refused at the token endpoint.
import request from 'supertest';
import { createClient } from 'redis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConsentRecord, Store } from '../../src/stores/contract.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { registerClient } from '../../src/clients/register-client.js';
import { basic, createTestApp, REDIRECT_URI, USER, type TestApp, type TestClient } from '../helpers/app.js';
import { authorizeQuery, hiddenField, obtainCode, signIn } from '../helpers/browser-flow.js';
import { CLUSTER_NODES, CLUSTER_ROOT_NODES } from '../helpers/redis-cluster.js';

const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
const unique = `${process.pid}-${Date.now().toString(36)}`;
let counter = 0;

/** A store, whether its `deleteClient` leaves the integration's consents behind, and how to throw it away. */
interface OpenedStore {
  readonly store: Store;
  readonly leavesConsents: boolean;
  dispose(): Promise<void>;
}

/** Deletes every key containing `prefix` on each of `urls` (SCAN, never KEYS): one node, or each cluster master. */
async function wipe(urls: readonly string[], prefix: string): Promise<void> {
  for (const url of urls) {
    const client = createClient({ url });
    await client.connect();
    for await (const batch of client.scanIterator({ MATCH: `*${prefix}*`, COUNT: 500 })) {
      for (const key of batch) {
        try {
          await client.del(key);
        } catch {
          // A replica, or a key another node owns: that node's own pass deletes it.
        }
      }
    }
    await client.close();
  }
}

const STORES: ReadonlyArray<readonly [string, boolean, () => Promise<OpenedStore>]> = [
  ['memory', true, async () => ({ store: createMemoryStore(), leavesConsents: false, dispose: async () => {} })],
  ['Redis', REDIS_URL !== '', async () => {
    const prefix = `consent-created-${unique}-${++counter}:`;
    const store = await createRedisStore({ url: REDIS_URL, prefix, sweepIntervalSeconds: 0 });
    return { store, leavesConsents: true, dispose: async () => { await store.close(); await wipe([REDIS_URL], prefix); } };
  }],
  ['Redis Cluster', CLUSTER_NODES.length > 0, async () => {
    const prefix = `consent-created-${unique}-${++counter}:`;
    const store = await createRedisStore({ cluster: { rootNodes: CLUSTER_ROOT_NODES }, prefix });
    return { store, leavesConsents: true, dispose: async () => { await store.close(); await wipe(CLUSTER_ROOT_NODES, prefix); } };
  }],
];

describe.each(STORES)('on the %s store', (_name, available, open) => {
  let opened: OpenedStore;
  let t: TestApp;

  beforeEach(async () => {
    if (!available) return;
    opened = await open();
    t = await createTestApp({ loginRateLimit: false, clientAuthRateLimit: false }, opened.store);
  });
  afterEach(async () => { if (available) await opened.dispose(); });

  /** Registers an authorization_code integration, under `clientId` when given (as re-creating a deleted one does). */
  async function register(name: string, clientId?: string): Promise<TestClient> {
    const { client, clientSecret } = await registerClient(opened.store, {
      ...(clientId === undefined ? {} : { clientId }), name, flow: 'authorization_code', redirectUris: [REDIRECT_URI],
      allowedScopes: ['envelopes:read', 'envelopes:sign'],
    });
    return { clientId: client.clientId, clientSecret };
  }

  /**
   * Deletes the integration through the admin API. A store that removes consents on delete gets the old one
   * back as it was, so the router faces what a store that leaves it (Redis) keeps: the same record.
   */
  async function deleteKeepingConsent(clientId: string): Promise<ConsentRecord> {
    const consents = opened.store.consents!;
    const before = await consents.findConsent(USER.id, clientId);
    expect(before).not.toBeNull();
    await createOAuthAdmin(opened.store).deleteClient(clientId);
    const left = await consents.findConsent(USER.id, clientId);
    if (opened.leavesConsents) expect(left).toEqual(before);
    else {
      expect(left).toBeNull();
      await consents.saveConsent(before!);
    }
    return before!;
  }

  it.skipIf(!available)('an integration deleted and created again under the same client_id asks its users again', async () => {
    const first = await register('Acme CRM');
    await obtainCode(t.app, first);
    expect((await signIn(request.agent(t.app), '', authorizeQuery(first))).status).toBe(302);
    const old = await deleteKeepingConsent(first.clientId);
    const again = await register('Acme CRM (new)', first.clientId);
    const created = (await opened.store.clients.findClient(again.clientId))!.createdAt;
    expect(old.grantedAt.getTime()).toBeLessThan(created.getTime());

    const agent = request.agent(t.app);
    const page = await signIn(agent, '', authorizeQuery(again));
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');
    expect(page.text).toContain('Acme CRM (new)');
    const decided = await agent.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), decision: 'allow',
    });
    expect(decided.status).toBe(303);
    // The consent given to the integration as it is now counts as before.
    expect((await signIn(request.agent(t.app), '', authorizeQuery(again))).status).toBe(302);
  });

  it.skipIf(!available)('a consent granted in the very millisecond the integration was created again does not count either: the user is asked', async () => {
    const first = await register('Acme CRM');
    await obtainCode(t.app, first);
    const old = await deleteKeepingConsent(first.clientId);
    // The old consent, its deletion and the new registration all within one millisecond (a fast store, a script
    // deleting and re-creating an id): the timestamps tie, and the tie must go to asking, as a tombstone's does.
    vi.useFakeTimers({ toFake: ['Date'], now: old.grantedAt });
    let again: TestClient;
    try {
      again = await register('Acme CRM (new)', first.clientId);
    } finally {
      vi.useRealTimers();
    }
    expect((await opened.store.clients.findClient(again.clientId))!.createdAt.getTime()).toBe(old.grantedAt.getTime());

    const page = await signIn(request.agent(t.app), '', authorizeQuery(again));
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');
  });

  it.skipIf(!available)('the connected-applications page lists neither a consent older than its integration nor one of an integration that no longer exists', async () => {
    const reborn = await register('Reborn Books');
    const gone = await register('Gone Books');
    const staying = await register('Staying Books');
    for (const client of [reborn, gone, staying]) await obtainCode(t.app, client);
    await deleteKeepingConsent(reborn.clientId);
    await register('Reborn Books (new)', reborn.clientId);
    await deleteKeepingConsent(gone.clientId);

    const agent = request.agent(t.app);
    const login = await agent.get('/oauth2/consents');
    const posted = await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(posted.status).toBe(303);
    const page = await agent.get('/oauth2/consents');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Staying Books');
    expect(page.text).toContain(`value="${staying.clientId}"`);
    expect(page.text).not.toContain('Reborn Books');
    expect(page.text).not.toContain(`value="${reborn.clientId}"`);
    expect(page.text).not.toContain(`value="${gone.clientId}"`);
  });

  it.skipIf(!available)('a code of a deleted integration is refused at the token endpoint: invalid_client, then invalid_grant once the id is registered again', async () => {
    const first = await register('Acme CRM');
    const code = await obtainCode(t.app, first);
    await createOAuthAdmin(opened.store).deleteClient(first.clientId);
    const exchange = (client: TestClient) => request(t.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });

    const unknown = await exchange(first);
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('invalid_client');
    const again = await register('Acme CRM', first.clientId);
    const refused = await exchange(again);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    expect(refused.body.access_token).toBeUndefined();
  });
});
