// Routers sharing one session.store (one per tenant, or one per test or reload in a process): listeners on that store do not add up.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../src/http/memory-session-store.js';
import { guardEndedSessions } from '../../src/http/ended-sessions.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { REDIRECT_URI, createTestRouter } from '../helpers/app.js';

const ROUTERS = 30;
const warnings: Error[] = [];
const onWarning = (warning: Error) => { warnings.push(warning); };

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

/** `ROUTERS` routers, each at an issuer path of its own, all given the same session store. */
async function tenants(sessions: MemorySessionStore): Promise<{ app: express.Express; clientId: string }> {
  const store = createMemoryStore({ sweepIntervalSeconds: 0 });
  const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI], allowedScopes: [] });
  const app = express();
  for (let i = 0; i < ROUTERS; i += 1) {
    const oauth = createTestRouter(store, { issuer: `http://auth.test/t${i}`, session: { secret: 'test-session-secret-0123456789', store: sessions, cookieName: `t${i}.sid` } });
    app.use(oauth.router);
  }
  return { app, clientId: client.clientId };
}

/** The sign-in page of an authorization request at one tenant: it needs the router's session. */
const authorizePage = (app: express.Express, clientId: string, tenant: number) =>
  request(app).get(`/t${tenant}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI })}`);

describe('routers sharing one session.store', () => {
  it('add one connect and one disconnect listener to it between them, so no MaxListenersExceededWarning', async () => {
    process.on('warning', onWarning);
    const sessions = new MemorySessionStore();
    await tenants(sessions);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sessions.listenerCount('disconnect')).toBe(1);
    expect(sessions.listenerCount('connect')).toBe(1);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('still tell every router\'s express-session that the store disconnected and connected again', async () => {
    const sessions = new MemorySessionStore();
    const { app, clientId } = await tenants(sessions);
    expect((await authorizePage(app, clientId, 0)).status).toBe(200);
    sessions.emit('disconnect');
    const disconnected = (await authorizePage(app, clientId, 0)).status;
    expect(disconnected).not.toBe(200);
    expect((await authorizePage(app, clientId, ROUTERS - 1)).status).toBe(disconnected);
    sessions.emit('connect');
    for (const tenant of [0, ROUTERS - 1]) expect((await authorizePage(app, clientId, tenant)).status).toBe(200);
  });

  it('keep no dropped router\'s session reachable from the store they shared (an app per test or per reload)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const sessions = new MemorySessionStore();
    const dropped: WeakRef<object>[] = [];
    for (let i = 0; i < 5; i += 1) {
      // What express-session does with the store it is given: two listeners whose closure holds that store.
      const guarded = guardEndedSessions(sessions, 1800);
      const state = { ready: true };
      guarded.on('disconnect', () => { state.ready = guarded === undefined; });
      guarded.on('connect', () => { state.ready = true; });
      dropped.push(new WeakRef(guarded));
    }
    for (let round = 0; round < 3; round += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(dropped.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  });
});
