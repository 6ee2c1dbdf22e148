// The in-process counters under a flood of new keys: what a blocked source sends cannot push out what blocks it.
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimits } from '../../src/stores/memory/rate-limits.js';
import { createLoginRateLimit, resolveLoginRateLimit } from '../../src/http/login-rate-limit.js';
import { TooManyAttemptsError } from '../../src/errors.js';

const silent = { warn: () => undefined, error: () => undefined };

function from(ip: string): Request {
  return { ip, headers: {}, app: { get: () => false } } as unknown as Request;
}

describe('in-process counters (memory store, or a store without rateLimits) under a flood of new keys', () => {
  it('a blocked source trying made-up usernames leaves no key behind, so the counters that block it and the victim\'s stay (RFC 6819 §4.4.3.6)', async () => {
    const memory = createMemoryRateLimits(undefined, 200);
    const limit = createLoginRateLimit(resolveLoginRateLimit({ max: 10, maxPerSource: 30 })!, memory.rateLimits, silent);
    const attacker = from('203.0.113.9');
    const wrong = async (): Promise<null> => null;
    let refused = 0;
    const attempt = async (username: string): Promise<void> => {
      try {
        await limit.attempt(attacker, username, wrong);
      } catch (err) {
        if (!(err instanceof TooManyAttemptsError)) throw err;
        refused += 1;
      }
    };
    for (let i = 0; i < 12; i++) await attempt('victim');
    expect(refused).toBe(2);
    // Past the source's limit, then 5,000 made-up usernames: 25 times what the map holds.
    for (let i = 0; i < 30; i++) await attempt(`filler-${i}`);
    const before = refused;
    for (let i = 0; i < 5000; i++) await attempt(`made-up-${i}`);
    expect(refused - before).toBe(5000);
    expect(memory.size()).toBeLessThanOrEqual(200);
    refused = 0;
    let checked = 0;
    for (let i = 0; i < 5; i++) {
      try {
        await limit.attempt(attacker, 'victim', async () => { checked += 1; return null; });
      } catch (err) {
        if (err instanceof TooManyAttemptsError) refused += 1;
      }
    }
    expect({ refused, checked }).toEqual({ refused: 5, checked: 0 });
  });

  it('a full map makes room for a tenth of its size at once: a flood of live keys does not rescan it for each new key', async () => {
    const memory = createMemoryRateLimits(undefined, 1000);
    const now = new Date();
    for (let i = 0; i < 1000; i++) await memory.rateLimits.hit(`k${i}`, 60_000, now);
    expect(memory.size()).toBe(1000);
    await memory.rateLimits.hit('one-more', 60_000, now);
    expect(memory.size()).toBe(901);
    expect(await memory.rateLimits.get('k0', now)).toBeNull();
    expect((await memory.rateLimits.get('k999', now))?.count).toBe(1);
    expect((await memory.rateLimits.get('one-more', now))?.count).toBe(1);
  });
});
