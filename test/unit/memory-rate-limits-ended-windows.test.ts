// The in-process counters drop ended windows as new keys arrive: a steady trickle of sources does not fill them to the cap.
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimits } from '../../src/stores/memory/rate-limits.js';

const DAY_MS = 86_400_000;

describe('in-process counters (a store without rateLimits) between sweeps', () => {
  it('ended windows go as new keys arrive, so the keys held stay within twice the live ones, a long window at the head notwithstanding (RFC 6585 §4)', async () => {
    // No sweep runs here (the router makes these counters without a timer) and the cap is far away.
    const memory = createMemoryRateLimits();
    const start = Date.UTC(2026, 0, 1);
    // A source known for an account for 30 days, first in the map: it outlives every window behind it.
    await memory.rateLimits.hit('login-known:first', 30 * DAY_MS, new Date(start));
    const perWindow = 1000;
    for (let round = 0; round < 20; round++) {
      const now = new Date(start + round * 2000);
      for (let i = 0; i < perWindow; i++) await memory.rateLimits.hit(`client:made-up-${round}-${i}`, 1000, now);
      expect(memory.size(), `after round ${round}`).toBeLessThanOrEqual(2 * perWindow + 1);
    }
    // The live windows are all still there, and still counting.
    const last = new Date(start + 19 * 2000);
    expect(await memory.rateLimits.get('login-known:first', last)).toMatchObject({ count: 1 });
    for (let i = 0; i < perWindow; i++) expect(await memory.rateLimits.get(`client:made-up-19-${i}`, last)).toMatchObject({ count: 1 });
  });

  it('a hit on a key already held looks at nothing else: only a new key pays for the look-through', async () => {
    const memory = createMemoryRateLimits();
    const start = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 100; i++) await memory.rateLimits.hit(`ended-${i}`, 1000, new Date(start));
    await memory.rateLimits.hit('held', 60_000, new Date(start));
    for (let i = 0; i < 50; i++) await memory.rateLimits.hit('held', 60_000, new Date(start + 5000));
    expect(memory.size()).toBe(101);
    await memory.rateLimits.hit('new', 60_000, new Date(start + 5000));
    expect(memory.size()).toBeLessThan(102);
  });
});
