// Both runners of the conformance suite: tiers a store lacks are skipped and named, the outage rule loudly.
import { describe, expect, it, type RunnerTestSuite } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { CONFORMANCE_RULES, checkStoreConformance, runStoreConformance } from '../../src/testing/index.js';

/** A memory store cut down to the required tier, plus the parts named in `extra`. */
function partialStore(extra: { consents?: boolean; keys?: boolean } = {}): Store {
  const full = createMemoryStore();
  const { findAccessToken, findRefreshToken, revokeAccessToken, revokeGrant, saveTokens, revokeClientTokens } = full.tokens;
  return {
    clients: { findClient: full.clients.findClient },
    codes: full.codes,
    tokens: { findAccessToken, findRefreshToken, revokeAccessToken, revokeGrant, saveTokens, ...(extra.consents ? { revokeClientTokens } : {}) },
    ...(extra.consents ? { consents: full.consents! } : {}),
    ...(extra.keys ? { keys: full.keys! } : {}),
    close: () => full.close!(),
  };
}

const ofTier = (tier: string) => CONFORMANCE_RULES.filter((rule) => rule.tier === tier).map((rule) => rule.name);
const needing = (method: string) => CONFORMANCE_RULES.filter((rule) => rule.needs?.includes(method)).map((rule) => rule.name);
/** Rules that run only with `openPeer` (none of these runs is given one). */
const withoutPeer = (name: string) => !CONFORMANCE_RULES.find((rule) => rule.name === name)?.needsPeer;

describe('checkStoreConformance', () => {
  it('skips the rules of every tier the store lacks, naming the missing methods, and runs the rest', async () => {
    const report = await checkStoreConformance({ name: 'required only', createStore: () => partialStore() });
    expect(report.failed).toEqual([]);
    const skipped = new Map(report.skipped.map((s) => [s.rule, s.reason]));
    for (const name of [...ofTier('administration'), ...ofTier('consents'), ...ofTier('signingKeys')]) expect(skipped.has(name), name).toBe(true);
    expect(skipped.get(ofTier('consents')[0]!)).toMatch(/tier "consents" \(store\.consents\.findConsent, .*store\.tokens\.revokeClientTokens\)/);
    expect(skipped.get(needing('store.tokens.revokeClientTokens')[0]!)).toBe('the store lacks store.tokens.revokeClientTokens');
    // backendTime is optional, in no tier: a store without it (a memory store, in this process) skips its rule.
    expect(skipped.get(needing('store.backendTime')[0]!)).toBe('the store lacks store.backendTime');
    expect(report.passed).toEqual(ofTier('required').filter((name) => !name.startsWith('outage') && withoutPeer(name) && !needing('store.backendTime').includes(name)));
  });

  it('runs the revokeClientTokens rules for a store that has it through the consents tier only', async () => {
    const report = await checkStoreConformance({ name: 'consents', createStore: () => partialStore({ consents: true }) });
    expect(report.failed).toEqual([]);
    // The revocation-feed rule that also needs revokeClientTokens is skipped: this store has no feed.
    const withFeed = ofTier('revocationFeed');
    for (const name of [...needing('store.tokens.revokeClientTokens').filter((rule) => !withFeed.includes(rule) && withoutPeer(rule)), ...ofTier('consents')]) {
      expect(report.passed).toContain(name);
    }
    expect(report.skipped.map((s) => s.rule)).toContain(ofTier('administration').find((name) => !needing('store.tokens.revokeClientTokens').includes(name)));
  });

  it('reports the outage rule as skipped, saying why, when simulateOutage is not supplied', async () => {
    const report = await checkStoreConformance({ name: 'memory', createStore: () => createMemoryStore(), only: (name) => name.startsWith('outage') });
    expect(report.skipped).toHaveLength(1);
    expect(report.skipped[0]!.reason).toMatch(/no simulateOutage hook.*StoreUnavailableError/);
  });

  it('runs only the rules `only` accepts, each on its own fresh store, and destroys every store it made', async () => {
    let created = 0;
    const open = new Set<Store>();
    const report = await checkStoreConformance({
      name: 'memory',
      createStore: () => {
        created += 1;
        const store = createMemoryStore();
        open.add(store);
        return store;
      },
      destroyStore: async (store) => {
        await store.close?.();
        open.delete(store);
      },
      only: (name) => name.startsWith('of N concurrent onlyIfNone') || name.startsWith('findClient resolves null'),
      rounds: 40,
    });
    expect(report.passed).toHaveLength(2);
    // One probe, one store per rule, and one per round of the key race (ceil(40 / 20) = 2).
    expect(created).toBe(1 + 2 + 2);
    expect(open.size).toBe(0);
  });

  it('hands destroyStore, simulateOutage and openPeer the store type createStore made, without casts', async () => {
    // A store that carries its own handle, as a custom store's connection or schema name would be.
    type HandledStore = Store & { readonly handle: { closed: boolean; peers: number } };
    const made: HandledStore[] = [];
    const report = await checkStoreConformance({
      name: 'typed',
      createStore: (): HandledStore => {
        const store = Object.assign(createMemoryStore(), { handle: { closed: false, peers: 0 } });
        made.push(store);
        return store;
      },
      destroyStore: async (store) => {
        store.handle.closed = true; // compiles only if `store` is a HandledStore
        await store.close?.();
      },
      simulateOutage: async (store) => {
        expect(store.handle.closed).toBe(false);
        return async () => undefined;
      },
      openPeer: (store) => {
        store.handle.peers += 1;
        return createMemoryStore();
      },
      only: ['findClient resolves null'],
    });
    expect(report.passed).toHaveLength(1);
    expect(made.length).toBeGreaterThan(0);
    expect(made.every((store) => store.handle.closed)).toBe(true);
  });

  it('`only` as a list runs the rules whose name contains one of its strings', async () => {
    const report = await checkStoreConformance({ name: 'memory', createStore: () => createMemoryStore(), only: ['consumeCode'] });
    const expected = CONFORMANCE_RULES.map((rule) => rule.name).filter((name) => name.includes('consumeCode'));
    expect(expected.length).toBeGreaterThan(1);
    expect([...report.passed, ...report.skipped.map((s) => s.rule)].sort()).toEqual([...expected].sort());
  });

  it.each([
    [{ roundz: 5 }, /unknown conformance option 'roundz'; known: name, createStore/],
    [{ rounds: 0 }, /rounds must be a positive integer/],
    [{ timeoutMs: '50' }, /timeoutMs must be a positive integer/],
    // Past 2^31 − 1 ms a timer fires after 1 ms: every rule failed at once, "did not settle within 2147483648 ms".
    [{ timeoutMs: 2 ** 31 }, /timeoutMs must be at most 2147478647 milliseconds/],
    [{ only: 'consumeCode' }, /only must be a list of strings .* or a function/],
    [{ createStore: undefined }, /createStore must be a function/],
  ])('refuses %j by name, before any store is made', async (bad, message) => {
    let created = 0;
    const options = { name: 'memory', createStore: () => { created += 1; return createMemoryStore(); }, ...bad } as never;
    await expect(checkStoreConformance(options)).rejects.toThrow(message);
    expect(() => runStoreConformance(options)).toThrow(message);
    expect(created).toBe(0);
  });

  it('fails a rule whose store never answers, instead of hanging, naming the call (by default within half of timeoutMs)', async () => {
    const report = await checkStoreConformance({
      name: 'silent',
      createStore: () => ({ ...createMemoryStore(), clients: { findClient: () => new Promise(() => undefined) } }),
      only: (name) => name.startsWith('findClient resolves null'),
      timeoutMs: 50,
    });
    expect(report.failed.map((f) => f.error.message)).toEqual([expect.stringMatching(/^store\.clients\.findClient did not settle within 25 ms/)]);
  });

  it('fails a rule whose outage hook never ends the outage by the rule\'s own timeout (no store call to name)', async () => {
    const report = await checkStoreConformance({
      name: 'stuck hook',
      createStore: () => createMemoryStore(),
      simulateOutage: async () => () => new Promise<void>(() => undefined),
      only: (name) => name.startsWith('outage'),
      timeoutMs: 200,
      callTimeoutMs: 100,
    });
    expect(report.failed.map((f) => f.error.message)).toEqual([expect.stringMatching(/^the rule did not settle within 200 ms/)]);
  });

  it('fails every selected rule with the error when createStore fails', async () => {
    const report = await checkStoreConformance({
      name: 'broken',
      createStore: () => Promise.reject(new Error('no database')),
      only: (name) => name.startsWith('find'),
    });
    expect(report.failed.length).toBeGreaterThan(0);
    for (const failure of report.failed) expect(failure.error.message).toBe('no database');
  });
});

describe('runStoreConformance', () => {
  runStoreConformance({
    name: 'required only (registration check)',
    createStore: () => partialStore(),
    only: (name) => name.startsWith('findClient resolves null') || name.startsWith('listClients resolves') || name.startsWith('outage'),
  });

  it('registered one test per rule under its tier, tiers it lacks and the outage rule as skipped, with the reason in the name', ({ task }) => {
    const suite = (task.suite!.tasks as RunnerTestSuite[]).find((t) => t.name.startsWith('Store conformance: required only'))!;
    const registered = suite.tasks.flatMap((tier) => (tier as RunnerTestSuite).tasks.map((t) => [tier.name, t.name, t.mode]));
    expect(registered).toEqual([
      ['required', 'findClient resolves null (never undefined) for an unknown clientId', 'run'],
      ['required', 'outage: SKIPPED — supply simulateOutage to check that a failing backend rejects with StoreUnavailableError', 'skip'],
      ['administration', expect.stringMatching(/^listClients resolves an empty array on an empty store — SKIPPED: the store lacks tier "administration" \(store\.clients\.createClient/), 'skip'],
    ]);
  });
});
