// A store call that never settles fails its rule naming the method, within callTimeoutMs, not the whole rule's timeout.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { CONFORMANCE_RULES, checkStoreConformance } from '../../src/testing/index.js';
import { createToyStore, simulateToyOutage } from './toy-store.js';

/** The one rule whose name starts with `prefix`. */
function rule(prefix: string): string {
  const matches = CONFORMANCE_RULES.filter((r) => r.name.startsWith(prefix)).map((r) => r.name);
  if (matches.length !== 1) throw new Error(`${matches.length} rules start with ${JSON.stringify(prefix)}`);
  return matches[0]!;
}

/** A toy store whose `method` never settles. */
const hanging = (method: string) => () => createToyStore({ faults: ['one-method-hangs'], hangMethod: method });

describe('callTimeoutMs: a hung store call is named', () => {
  it('a method that never settles fails each rule that calls it, naming the method, and the rules that do not call it pass', async () => {
    const calling = rule('findRefreshToken resolves null');
    const other = rule('findClient resolves null');
    const report = await checkStoreConformance({
      name: 'hangs', createStore: hanging('tokens.findRefreshToken'), callTimeoutMs: 200, timeoutMs: 20_000, only: (name) => name === calling || name === other,
    });
    expect(report.passed).toEqual([other]);
    expect(report.failed.map((f) => f.rule)).toEqual([calling]);
    expect(report.failed[0]!.error.message).toMatch(/^store\.tokens\.findRefreshToken did not settle within 200 ms/);
  });

  it('the outage rule names the method that hung during the outage among those that must reject', async () => {
    const report = await checkStoreConformance({
      name: 'hangs', createStore: hanging('keys.deleteSigningKey'), simulateOutage: simulateToyOutage, callTimeoutMs: 200, timeoutMs: 20_000,
      only: ['outage'],
    });
    expect(report.failed.map((f) => f.rule)).toEqual([rule('outage: while the backend is out')]);
    expect(report.failed[0]!.error.message).toContain('store.keys.deleteSigningKey did not settle within 200 ms (callTimeoutMs)');
  });

  it('by default a hung call is named before the rule times out: half of a short timeoutMs', async () => {
    const calling = rule('findRefreshToken resolves null');
    const report = await checkStoreConformance({ name: 'hangs', createStore: hanging('tokens.findRefreshToken'), timeoutMs: 1_000, only: (name) => name === calling });
    expect(report.failed[0]!.error.message).toMatch(/^store\.tokens\.findRefreshToken did not settle within 500 ms/);
  });

  it('refuses a callTimeoutMs that is not a positive integer, or not below timeoutMs (the rule would time out first)', async () => {
    const base = { name: 'memory', createStore: () => createMemoryStore() };
    await expect(checkStoreConformance({ ...base, callTimeoutMs: 0 })).rejects.toThrow(/callTimeoutMs must be a positive integer/);
    await expect(checkStoreConformance({ ...base, callTimeoutMs: 1.5 })).rejects.toThrow(/callTimeoutMs must be a positive integer/);
    await expect(checkStoreConformance({ ...base, callTimeoutMs: 60_000 })).rejects.toThrow(/callTimeoutMs must be below timeoutMs \(60000 ms/);
    await expect(checkStoreConformance({ ...base, timeoutMs: 1_000, callTimeoutMs: 1_000 })).rejects.toThrow(/callTimeoutMs must be below timeoutMs/);
  });
});
