// The router's error log under a flood: a line per kind of failure per 10 s with a count of the rest, and an outage's end said.
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { basic, createTestApp, createTestRouter, USER } from '../helpers/app.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { Store } from '../../src/stores/contract.js';

const SERVER_ERROR = { error: 'server_error', error_description: 'the server encountered an unexpected condition' };

/** A host on a memory store whose client lookups throw `fault()` while it is set, and its logger's error lines. */
async function createHost() {
  const store = createMemoryStore();
  const logged: string[] = [];
  const warned: string[] = [];
  const t = await createTestApp({ logger: { warn(line: string) { logged.push(line); warned.push(line); }, error(line: string) { logged.push(line); } } }, store);
  const state: { fault: (() => Error) | null } = { fault: null };
  const findClient = store.clients.findClient.bind(store.clients);
  store.clients.findClient = async (...args) => {
    if (state.fault) throw state.fault();
    return findClient(...args);
  };
  const token = () => request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
    .send({ grant_type: 'client_credentials' });
  return { ...t, logged, warned, state, token };
}

/** Lets `ms` pass for the throttle's clock (performance.now), and `wallMs` for the wall clock (Date.now). */
function laterBy(ms: number, wallMs = ms): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + wallMs);
  const monotonic = performance.now.bind(performance);
  vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + ms);
}

/** An NTP step: the wall clock goes ten minutes back while `ms` pass. */
const steppedBackThenLaterBy = (ms: number): void => laterBy(ms, ms - 600_000);

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('unexpected errors are logged once per kind per 10 s, each still a 500 (README, `logger`)', () => {
  it('a missing schema failing 60 requests is 60 × 500 server_error and one log line', async () => {
    const host = await createHost();
    host.state.fault = () => new Error('relation "oauth.clients" does not exist');
    const statuses: number[] = [];
    for (let i = 0; i < 60; i += 1) {
      const res = await host.token();
      statuses.push(res.status);
      expect(res.body).toEqual(SERVER_ERROR);
    }
    expect(statuses).toEqual(Array(60).fill(500));
    expect(host.logged).toEqual(['express-oauth-router: unexpected Error: relation "oauth.clients" does not exist']);
  });

  it('the first repeat after 10 s is logged with the count of those held back since the last such line', async () => {
    const host = await createHost();
    host.state.fault = () => new Error('permission denied for table clients');
    for (let i = 0; i < 5; i += 1) expect((await host.token()).status).toBe(500);
    laterBy(10_001);
    expect((await host.token()).status).toBe(500);
    expect(host.logged).toEqual([
      'express-oauth-router: unexpected Error: permission denied for table clients',
      'express-oauth-router: unexpected Error: permission denied for table clients (and 4 more since the last such line)',
    ]);
  });

  it('a wall clock stepped back (NTP) does not hold the next line back: it comes 10 s after the last, as without the step', async () => {
    const host = await createHost();
    host.state.fault = () => new Error('permission denied for table clients');
    for (let i = 0; i < 2; i += 1) expect((await host.token()).status).toBe(500);
    steppedBackThenLaterBy(10_001);
    expect((await host.token()).status).toBe(500);
    expect(host.logged).toEqual([
      'express-oauth-router: unexpected Error: permission denied for table clients',
      'express-oauth-router: unexpected Error: permission denied for table clients (and 1 more since the last such line)',
    ]);
  });

  it('another kind of error is logged at once, not held back behind the first', async () => {
    const host = await createHost();
    host.state.fault = () => new Error('permission denied for table clients');
    expect((await host.token()).status).toBe(500);
    host.state.fault = () => new TypeError("Cannot read properties of undefined (reading 'rows')");
    expect((await host.token()).status).toBe(500);
    expect((await host.token()).status).toBe(500);
    expect(host.logged).toEqual([
      'express-oauth-router: unexpected Error: permission denied for table clients',
      "express-oauth-router: unexpected TypeError: Cannot read properties of undefined (reading 'rows')",
    ]);
  });

  it('memory is bounded: past 100 kinds in play the oldest is forgotten, and logged as new when it comes back', async () => {
    const host = await createHost();
    for (let kind = 0; kind <= 100; kind += 1) {
      host.state.fault = () => new Error(`custom store bug #${kind}`);
      expect((await host.token()).status).toBe(500);
    }
    expect(host.logged).toHaveLength(101);
    host.state.fault = () => new Error('custom store bug #100');
    expect((await host.token()).status).toBe(500);
    host.state.fault = () => new Error('custom store bug #0');
    expect((await host.token()).status).toBe(500);
    expect(host.logged.slice(101)).toEqual(['express-oauth-router: unexpected Error: custom store bug #0']);
  });
});

describe('a store outage: one line per 10 s counting failures by cause, and one when the store answers again (README, `logger`)', () => {
  const refused = () => new StoreUnavailableError('PostgreSQL store unavailable (ECONNREFUSED)');
  const timedOut = () => new StoreUnavailableError('PostgreSQL store unavailable (Query read timeout)');

  it('failures held back are reported by cause on the next outage line, not all under its cause', async () => {
    const host = await createHost();
    host.state.fault = refused;
    for (let i = 0; i < 3; i += 1) expect((await host.token()).status).toBe(503);
    host.state.fault = timedOut;
    for (let i = 0; i < 2; i += 1) expect((await host.token()).status).toBe(503);
    laterBy(10_001);
    expect((await host.token()).status).toBe(503);
    expect(host.logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (Query read timeout)'
        + ' (and 4 more since the last such line: 2 × PostgreSQL store unavailable (ECONNREFUSED), 2 × PostgreSQL store unavailable (Query read timeout))',
    ]);
  });

  it('a wall clock stepped back (NTP) during an outage does not silence it: the next line comes 10 s after the last', async () => {
    const host = await createHost();
    host.state.fault = refused;
    for (let i = 0; i < 2; i += 1) expect((await host.token()).status).toBe(503);
    steppedBackThenLaterBy(10_001);
    expect((await host.token()).status).toBe(503);
    expect(host.logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED) (and 1 more since the last such line)',
    ]);
  });

  it('a wall clock stepped back (NTP) while the store flaps does not hold "available again" back more than 10 s', async () => {
    const host = await createHost();
    for (const fault of [refused, null, refused]) {
      host.state.fault = fault;
      expect((await host.token()).status).toBe(fault ? 503 : 200);
    }
    host.state.fault = null;
    steppedBackThenLaterBy(10_001);
    expect((await host.token()).status).toBe(200);
    expect(host.logged.at(-1)).toBe('express-oauth-router: store available again; no request failed since the last line');
  });

  it('the first token request served after an outage writes "store available again" with the failures held back, once', async () => {
    const host = await createHost();
    host.state.fault = refused;
    for (let i = 0; i < 5; i += 1) expect((await host.token()).status).toBe(503);
    host.state.fault = null;
    for (let i = 0; i < 3; i += 1) expect((await host.token()).status).toBe(200);
    expect(host.logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store available again after 4 failed requests since the last line: 4 × PostgreSQL store unavailable (ECONNREFUSED)',
    ]);
    // A warning, not an error: an alert on error lines does not fire on the end of an outage.
    expect(host.warned).toEqual([host.logged[1]]);
    // The next outage is news: logged at once, not held back behind the last one's line.
    host.state.fault = timedOut;
    expect((await host.token()).status).toBe(503);
    expect(host.logged.at(-1)).toBe('express-oauth-router: store unavailable: PostgreSQL store unavailable (Query read timeout)');
  });

  it('a flapping store says "available again" at most once per 10 s, the failures between counted on it', async () => {
    const host = await createHost();
    const flap = async (): Promise<void> => {
      host.state.fault = refused;
      expect((await host.token()).status).toBe(503);
      host.state.fault = null;
      expect((await host.token()).status).toBe(200);
    };
    for (let i = 0; i < 4; i += 1) await flap();
    expect(host.logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store available again; no request failed since the last line',
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
    ]);
    laterBy(10_001);
    expect((await host.token()).status).toBe(200);
    expect(host.logged.at(-1)).toBe('express-oauth-router: store available again after 2 failed requests since the last line: 2 × PostgreSQL store unavailable (ECONNREFUSED)');
  });

  it('requireBearer: the first access token looked up after an outage writes "store available again"', async () => {
    const host = await createHost();
    const issued = await host.token();
    const store = host.store as Store;
    const findAccessToken = store.tokens.findAccessToken.bind(store.tokens);
    let down = true;
    store.tokens.findAccessToken = async (...args) => {
      if (down) throw refused();
      return findAccessToken(...args);
    };
    const me = () => request(host.app).get('/api/v1/me').set('Authorization', `Bearer ${issued.body.access_token}`);
    for (let i = 0; i < 3; i += 1) expect((await me()).status).toBe(503);
    down = false;
    expect((await me()).status).toBe(200);
    expect(host.logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store available again after 2 failed requests since the last line: 2 × PostgreSQL store unavailable (ECONNREFUSED)',
    ]);
  });

  it('a readiness probe that reaches the store writes "store available again", with no token request needed', async () => {
    const store = createMemoryStore();
    const logged: string[] = [];
    const oauth = createTestRouter(store, { logger: { warn(line: string) { logged.push(line); }, error(line: string) { logged.push(line); } } });
    const app = express();
    app.use(oauth.router);
    app.get('/health/ready', oauth.health.readiness);
    const { client, clientSecret } = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
    const findClient = store.clients.findClient.bind(store.clients);
    let down = true;
    store.clients.findClient = async (...args) => {
      if (down) throw refused();
      return findClient(...args);
    };
    const token = await request(app).post('/oauth2/token').set('Authorization', basic({ clientId: client.clientId, clientSecret })).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(token.status).toBe(503);
    expect((await request(app).get('/health/ready')).status).toBe(503);
    down = false;
    expect((await request(app).get('/health/ready')).status).toBe(200);
    expect(logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store available again; no request failed since the last line',
    ]);
  });

  /** Two routers (tenants) in one app, on `stores` (two, or one twice), both writing to one logger (as both default to `console`). */
  async function twoTenants(stores: readonly [Store, Store]) {
    const logged: string[] = [];
    const logger = { warn(line: string) { logged.push(line); }, error(line: string) { logged.push(line); } };
    const app = express();
    const tokens = [];
    for (const [i, store] of stores.entries()) {
      const oauth = createTestRouter(store, { issuer: `http://auth.test/t/${i}`, session: { secret: 'test-session-secret-0123456789', cookieName: `t${i}.sid` }, logger });
      app.use(oauth.router);
      const { client, clientSecret } = await registerClient(store, { name: `Nightly Sync ${i}`, flow: 'client_credentials' });
      tokens.push(() => request(app).post(`/t/${i}/oauth2/token`).set('Authorization', basic({ clientId: client.clientId, clientSecret })).type('form')
        .send({ grant_type: 'client_credentials' }));
    }
    return { logged, token: tokens as [() => request.Test, () => request.Test] };
  }

  it('two routers on two stores, one logger: the one whose store answers does not say the other\'s is available again', async () => {
    const down = createMemoryStore();
    const findClient = down.clients.findClient.bind(down.clients);
    let refusing = false;
    down.clients.findClient = async (...args) => {
      if (refusing) throw refused();
      return findClient(...args);
    };
    const host = await twoTenants([down, createMemoryStore()]);
    refusing = true;
    for (let i = 0; i < 3; i += 1) {
      expect((await host.token[0]()).status).toBe(503);
      expect((await host.token[1]()).status).toBe(200);
    }
    expect(host.logged).toEqual(['express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)']);
    refusing = false;
    expect((await host.token[0]()).status).toBe(200);
    expect(host.logged.at(-1)).toBe('express-oauth-router: store available again after 2 failed requests since the last line: 2 × PostgreSQL store unavailable (ECONNREFUSED)');
  });

  it('two routers on one store, one logger: its outage is still one line per 10 s between them', async () => {
    const store = createMemoryStore();
    const findClient = store.clients.findClient.bind(store.clients);
    let refusing = false;
    const host = await twoTenants([store, store]);
    store.clients.findClient = async (...args) => {
      if (refusing) throw refused();
      return findClient(...args);
    };
    refusing = true;
    for (let i = 0; i < 3; i += 1) for (const token of host.token) expect((await token()).status).toBe(503);
    refusing = false;
    expect((await host.token[1]()).status).toBe(200);
    expect(host.logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store available again after 5 failed requests since the last line: 5 × PostgreSQL store unavailable (ECONNREFUSED)',
    ]);
  });

  it('a sign-in the outage fails is one failed request, counted once, not once per place that handles its error', async () => {
    const host = await createHost();
    const agent = request.agent(host.app);
    const login = await agent.get(`/oauth2/authorize?${authorizeQuery(host.codeClient)}`);
    host.state.fault = refused;
    const res = await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(res.status).toBe(503);
    host.state.fault = null;
    expect((await host.token()).status).toBe(200);
    expect(host.logged).toEqual([
      'express-oauth-router: store unavailable: PostgreSQL store unavailable (ECONNREFUSED)',
      'express-oauth-router: store available again; no request failed since the last line',
    ]);
  });
});
