// README `logger`: a router thrown away during its store's outage (a tenant removed) leaves no outage pending for the
// routers that stay: their requests do not keep looking for an outage end to announce that only the gone router had.
import express from 'express';
import request from 'supertest';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { basic, createTestRouter } from '../helpers/app.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { Store } from '../../src/stores/contract.js';
import { logStoreAvailable } from '../../src/http/store-outage-log.js';

// Every call of the "available again" check the hot paths make once the store answered, counted; the module's other
// exports are read live (a Proxy over its namespace), as without the mock.
vi.mock('../../src/http/store-outage-log.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/http/store-outage-log.js')>();
  const counted = vi.fn(original.logStoreAvailable);
  return new Proxy(original, { get: (target, key) => (key === 'logStoreAvailable' ? counted : Reflect.get(target, key)) });
});
const availableChecks = vi.mocked(logStoreAvailable);

beforeEach(() => { availableChecks.mockClear(); });

/** A memory store whose client lookups refuse while `down.refusing` is set. */
function storeThatFails() {
  const store = createMemoryStore();
  const down = { refusing: false };
  const findClient = store.clients.findClient.bind(store.clients);
  store.clients.findClient = async (...args) => {
    if (down.refusing) throw new StoreUnavailableError('PostgreSQL store unavailable (ECONNREFUSED)');
    return findClient(...args);
  };
  return { store, down };
}

/** A tenant: a router on `store` under /t/<name>, in an app of its own, writing to `logger`; its token request. */
async function tenant(name: string, store: Store, logger: { warn(line: string): void; error(line: string): void }) {
  const oauth = createTestRouter(store, { issuer: `http://auth.test/t/${name}`, session: { secret: 'test-session-secret-0123456789', cookieName: `${name}.sid` }, logger });
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  app.get('/health/ready', oauth.health.readiness);
  const { client, clientSecret } = await registerClient(store, { name: `Nightly Sync ${name}`, flow: 'client_credentials' });
  const token = () => request(app).post(`/t/${name}/oauth2/token`).set('Authorization', basic({ clientId: client.clientId, clientSecret })).type('form')
    .send({ grant_type: 'client_credentials' });
  return { app, token };
}

describe('a router discarded during its store\'s outage takes its pending outage with it (README, `logger`)', () => {
  it('another router on another store, one logger: its token requests, bearer lookups and probes do no "available again" check', async () => {
    const logged: string[] = [];
    const logger = { warn(line: string) { logged.push(line); }, error(line: string) { logged.push(line); } };
    const failing = storeThatFails();
    let removed: Awaited<ReturnType<typeof tenant>> | null = await tenant('gone', failing.store, logger);
    failing.down.refusing = true;
    expect((await removed.token()).status).toBe(503);
    expect(logged).toEqual(['express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)']);
    // The tenant is removed mid-outage: nothing of it is used again, and its store never answers again.
    removed = null;
    const staying = await tenant('staying', createMemoryStore(), logger);
    availableChecks.mockClear();
    for (let i = 0; i < 5; i += 1) {
      const issued = await staying.token();
      expect(issued.status).toBe(200);
      expect((await request(staying.app).get('/api/v1/me').set('Authorization', `Bearer ${issued.body.access_token}`)).status).toBe(200);
      expect((await request(staying.app).get('/health/ready')).status).toBe(200);
    }
    expect(availableChecks).not.toHaveBeenCalled();
    expect(logged).toHaveLength(1);
  });

  it('routers on one store and one logger still share its outage: the staying one says its end, once, then checks no more', async () => {
    const logged: string[] = [];
    const logger = { warn(line: string) { logged.push(line); }, error(line: string) { logged.push(line); } };
    const shared = storeThatFails();
    let removed: Awaited<ReturnType<typeof tenant>> | null = await tenant('gone', shared.store, logger);
    const staying = await tenant('staying', shared.store, logger);
    shared.down.refusing = true;
    expect((await removed.token()).status).toBe(503);
    removed = null;
    shared.down.refusing = false;
    availableChecks.mockClear();
    for (let i = 0; i < 3; i += 1) expect((await staying.token()).status).toBe(200);
    expect(logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store available again; no request failed since the last line',
    ]);
    expect(availableChecks).toHaveBeenCalledTimes(1);
  });

  it('a staying router\'s own outage is still pending after another router is discarded: its end is said', async () => {
    const logged: string[] = [];
    const logger = { warn(line: string) { logged.push(line); }, error(line: string) { logged.push(line); } };
    const gone = storeThatFails();
    const own = storeThatFails();
    let removed: Awaited<ReturnType<typeof tenant>> | null = await tenant('gone', gone.store, logger);
    const staying = await tenant('staying', own.store, logger);
    gone.down.refusing = true;
    own.down.refusing = true;
    expect((await removed.token()).status).toBe(503);
    expect((await staying.token()).status).toBe(503);
    removed = null;
    own.down.refusing = false;
    expect((await staying.token()).status).toBe(200);
    expect(logged.at(-1)).toBe('express-oauth-router: store available again; no request failed since the last line');
  });
});
