// metrics.instrumentStore: the wrapped store still honours the whole Store contract, and every call is timed.
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import { checkStore } from '../../src/stores/check-store.js';
import { createOAuthMetrics } from '../../src/metrics/index.js';
import { parseScrape } from '../helpers/prometheus-text.js';

const metrics = createOAuthMetrics();
afterAll(() => metrics.close());

runStoreConformance({ name: 'memory, instrumented by metrics', createStore: () => metrics.instrumentStore(createMemoryStore()) });

describe('instrumentStore specifics', () => {
  it('keeps every tier, the very revocation feed, and the results and errors of each call', async () => {
    const raw = createMemoryStore();
    const store = metrics.instrumentStore(raw);
    expect(() => checkStore(store, { administration: 'a', consents: 'c', signingKeys: 's', rateLimits: 'r', revocationFeed: 'f' })).not.toThrow();
    expect(store.revocations).toBe(raw.revocations);
    const { client } = buildClient();
    expect(await store.clients.createClient(client)).toBe(true);
    expect(await store.clients.findClient(client.clientId)).toEqual(client);
    await store.close!();
    await expect(store.clients.findClient(client.clientId)).rejects.toThrow('closed');
  });

  it('times each call by part, method and outcome, and counts the failed ones', async () => {
    const before = parseScrape(await metrics.registry.metrics());
    const raw = createMemoryStore();
    // The fourth lookup fails with a bug's error, not an outage (a closed store is one, counted as 'unavailable').
    const findClient = raw.clients.findClient.bind(raw.clients);
    let lookups = 0;
    raw.clients.findClient = async (clientId) => {
      lookups += 1;
      if (lookups > 3) throw new Error('a store bug');
      return findClient(clientId);
    };
    const store = metrics.instrumentStore(raw);
    const { client } = buildClient();
    await store.clients.createClient(client);
    for (let i = 0; i < 3; i += 1) await store.clients.findClient(client.clientId);
    await store.clients.findClient(client.clientId).catch(() => undefined);
    const after = parseScrape(await metrics.registry.metrics());
    const moved = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    expect(moved('oauth_store_call_duration_seconds_count', { part: 'clients', method: 'createClient', outcome: 'ok' })).toBe(1);
    expect(moved('oauth_store_call_duration_seconds_count', { part: 'clients', method: 'findClient', outcome: 'ok' })).toBe(3);
    expect(moved('oauth_store_call_duration_seconds_count', { part: 'clients', method: 'findClient', outcome: 'error' })).toBe(1);
    expect(moved('oauth_store_errors_total', { part: 'clients', method: 'findClient', reason: 'error' })).toBe(1);
  });
});
