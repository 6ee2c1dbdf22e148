// The router's error log under a flood: a line per kind of failure per 10 s with a count of the rest.
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { basic, createTestApp } from '../helpers/app.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';

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

/** Moves the clock the throttle reads (Date.now) past its 10 s window. */
function laterBy(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

afterEach(() => {
  vi.useRealTimers();
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
