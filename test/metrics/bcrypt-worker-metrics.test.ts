// oauth_bcrypt_worker_failures_total: real bcrypt worker threads that crash, hang or fail to start, as a /metrics scrape shows them.
import bcrypt from 'bcryptjs';
import express from 'express';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createOAuthMetrics, type OAuthMetrics } from '../../src/metrics/index.js';
import { bcryptWorkerForTests as handle } from '../../src/crypto/bcrypt-secret.js';
import { ISSUER, basic, createTestUserAuth, type TestClient } from '../helpers/app.js';
import { laterBy, SERVER_ERROR, withFakeBcryptjs } from '../helpers/bcrypt-host.js';
import { parseScrape, type Scrape } from '../helpers/prometheus-text.js';
import { until } from '../helpers/until.js';

const FAILURES = 'oauth_bcrypt_worker_failures_total';
const SERVER_ERRORS = { endpoint: 'token', error: 'server_error', status: '500' };
/** Stand-ins for bcryptjs (see test/compliance/bcrypt-worker-hang.test.ts): a check that ends the thread, one that
 * never ends, and a module that throws as it loads (a worker that never starts). */
const FAKES = {
  crashing: 'exports.compareSync = () => process.exit(3);',
  hanging: 'exports.compareSync = () => { for (;;); };',
  broken: 'throw new Error("cannot load");',
};

const open: OAuthMetrics[] = [];
beforeEach(() => {
  handle.endSilentAfter(500);
});
afterEach(async () => {
  for (const metrics of open.splice(0)) metrics.close();
  vi.restoreAllMocks();
  handle.loadInsteadOfBcryptjs(null);
  handle.endSilentAfter(null);
  await handle.current()?.terminate();
});

/** A metered host whose client_credentials integration was imported with a bcrypt hash (cost 4, ~1 ms a check). */
async function meteredHost() {
  const metrics = createOAuthMetrics();
  open.push(metrics);
  const store = createMemoryStore();
  const oauth = createOAuthRouter(metrics.instrumentStore(store), createTestUserAuth(new Set()), {
    issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} },
  });
  metrics.observe(oauth);
  const app = express();
  app.set('trust proxy', 'loopback');
  app.use(oauth.router);
  app.get('/metrics', metrics.handler);
  const { client } = await registerClient(store, {
    name: 'Imported', flow: 'client_credentials', redirectUris: [], allowedScopes: ['envelopes:read'],
  });
  await store.clients.updateClient!(client.clientId, { clientSecretHash: bcrypt.hashSync('imported-secret', 4) });
  const token = (secret: string, source = '198.51.100.1') => request(app).post('/oauth2/token').type('form')
    .set('X-Forwarded-For', source).set('Authorization', basic({ clientId: client.clientId, clientSecret: secret } satisfies TestClient))
    .send({ grant_type: 'client_credentials' }).then((res) => res);
  const scrape = async (): Promise<Scrape> => {
    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    return parseScrape(res.text);
  };
  return { token, scrape };
}

describe('bcrypt worker failures are counted by reason on /metrics', () => {
  it('each crash, hang and failed start counts once (per worker, not per check), alongside its 500s; answers and an idle stop count nothing', async () => {
    const { token, scrape } = await meteredHost();
    await withFakeBcryptjs(FAKES, async ({ crashing, hanging, broken }) => {
      const start = await scrape();
      // Every series an alert needs is there from the start, at 0.
      expect(start.labelSets(FAILURES)).toEqual([{ reason: 'crash' }, { reason: 'hang' }, { reason: 'start_failed' }]);
      expect(start.text).toContain(`# TYPE ${FAILURES} counter`);
      let before = start;
      const moved = async (expected: Record<string, number>, serverErrors: number) => {
        const after = await scrape();
        for (const reason of ['crash', 'hang', 'start_failed']) {
          expect(after.value(FAILURES, { reason }) - before.value(FAILURES, { reason }), reason).toBe(expected[reason] ?? 0);
        }
        expect(after.value('oauth_errors_total', SERVER_ERRORS) - before.value('oauth_errors_total', SERVER_ERRORS)).toBe(serverErrors);
        before = after;
      };

      // A worker that answers: nothing counted. Stopped while idle: nothing lost, nothing counted.
      expect((await token('imported-secret')).status).toBe(200);
      expect((await token('guess-1')).status).toBe(401);
      await handle.current()!.terminate();
      await moved({}, 0);

      handle.loadInsteadOfBcryptjs(crashing!);
      const crashed = await token('guess-2');
      expect(crashed.status).toBe(500);
      expect(crashed.body).toEqual(SERVER_ERROR);
      await moved({ crash: 1 }, 1);

      // Repaired: an answer resets the back-off, so the hang below starts its worker at once.
      handle.loadInsteadOfBcryptjs(null);
      expect((await token('guess-3')).status).toBe(401);
      await handle.current()!.terminate();
      handle.loadInsteadOfBcryptjs(hanging!);
      // Two sources, so both checks are under way in the one hung worker: two 500s, one worker failed.
      const hung = [token('guess-4', '198.51.100.2'), token('guess-5', '198.51.100.3')];
      await until('two checks in a started worker', () => handle.ready() && handle.checksUnderWay() === 2);
      for (const res of await Promise.all(hung)) expect(res.status).toBe(500);
      await moved({ hang: 1 }, 2);

      handle.loadInsteadOfBcryptjs(null);
      expect((await token('guess-6')).status).toBe(401);
      await handle.current()!.terminate();
      handle.loadInsteadOfBcryptjs(broken!);
      expect((await token('guess-7')).status).toBe(500);
      // Within the back-off a check is answered 500 at once and no worker starts: no worker failed, none counted.
      const startsBefore = handle.starts();
      expect((await token('guess-8')).status).toBe(500);
      expect(handle.starts()).toBe(startsBefore);
      await moved({ start_failed: 1 }, 2);

      // After the back-off a worker starts and answers: the next failure is again a first one.
      handle.loadInsteadOfBcryptjs(null);
      laterBy(1_100);
      expect((await token('guess-9')).status).toBe(401);
      await moved({}, 0);
    });
  });

  it('one failure is counted once by a metrics observing two routers, and close() takes the counter out of the registry', async () => {
    const first = await meteredHost();
    const metrics = open[0]!;
    const second = createOAuthRouter(createMemoryStore(), createTestUserAuth(new Set()), {
      issuer: 'https://second.example', session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} },
    });
    metrics.observe(second);
    await withFakeBcryptjs(FAKES, async ({ crashing }) => {
      handle.loadInsteadOfBcryptjs(crashing!);
      const before = await first.scrape();
      expect((await first.token('guess-1')).status).toBe(500);
      const after = await first.scrape();
      expect(after.value(FAILURES, { reason: 'crash' }) - before.value(FAILURES, { reason: 'crash' })).toBe(1);
      metrics.close();
      expect(await metrics.registry.metrics()).not.toContain(FAILURES);
    });
  });
});
