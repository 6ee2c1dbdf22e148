// The in-process counters under a flood of new keys: what a blocked source sends cannot push out what blocks it.
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimits } from '../../src/stores/memory/rate-limits.js';
import { createLoginRateLimit, resolveLoginRateLimit } from '../../src/http/login-rate-limit.js';
import { InvalidClientError, TooManyAttemptsError } from '../../src/errors.js';
import { createClientAuthRateLimit, resolveClientAuthRateLimit } from '../../src/checks/client-auth-rate-limit.js';
import { createCounterKey } from '../../src/http/rate-limit-keys.js';

/** Keys as under a session.secret, the default of a configured router. */
const counterKey = createCounterKey('flood-test-session-secret-0123');

/** No proxy in these tests: the limits' proxy warning is not under test. */
const silent = () => undefined;

function from(ip: string): Request {
  return { ip, headers: {}, app: { get: () => false } } as unknown as Request;
}

describe('in-process counters (memory store, or a store without rateLimits) under a flood of new keys', () => {
  it('a blocked source trying made-up usernames leaves no key behind, so the counters that block it and the victim\'s stay (RFC 6819 §4.4.3.6)', async () => {
    const memory = createMemoryRateLimits(undefined, 200);
    const limit = createLoginRateLimit(resolveLoginRateLimit({ max: 10, maxPerSource: 30 })!, memory.rateLimits, counterKey, silent);
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

  it('a flood of one-failure keys from many sources cannot push out an account\'s count past its limit (RFC 6819 §4.4.3.6)', async () => {
    const memory = createMemoryRateLimits(undefined, 1000);
    const login = createLoginRateLimit(resolveLoginRateLimit({})!, memory.rateLimits, counterKey, silent);
    const wrong = async (): Promise<null> => null;
    // A distributed attack on one account: 100 sources, one wrong password each, reach maxPerAccount.
    for (let i = 0; i < 100; i++) await login.attempt(from(`198.51.100.${i}`), 'victim', wrong);
    const tryVictim = async (ip: string): Promise<'refused' | 'checked'> => {
      try {
        await login.attempt(from(ip), 'victim', wrong);
        return 'checked';
      } catch (err) {
        if (!(err instanceof TooManyAttemptsError)) throw err;
        return 'refused';
      }
    };
    expect(await tryVictim('192.0.2.1')).toBe('refused');
    // Then cheap client-authentication failures (unknown client_ids) from 40 other sources, 50 each: 2,040 new keys
    // in a map of 1,000, so that the oldest windows (the account's among them) would be the ones to go.
    const clients = createClientAuthRateLimit(resolveClientAuthRateLimit({})!, memory.rateLimits, counterKey, silent);
    const unknown = async (): Promise<never> => { throw new InvalidClientError('client authentication failed', 'unknown_client'); };
    for (let s = 0; s < 40; s++) {
      for (let i = 0; i < 50; i++) {
        await clients.authenticate(from(`203.0.113.${s}`), () => `made-up-${s}-${i}`, unknown).catch(() => undefined);
      }
    }
    expect(memory.size()).toBeLessThanOrEqual(1000);
    // The account is still over its limit: a new source's guess is refused, not checked.
    expect(await tryVictim('192.0.2.2')).toBe('refused');
  });

  it('a full map drops the windows that counted least first, then those ending soonest: a long window of one hit outlives short ones', async () => {
    const memory = createMemoryRateLimits(undefined, 1000);
    const now = new Date();
    await memory.rateLimits.hit('known-source', 30 * 86_400_000, now);
    for (let i = 0; i < 5; i++) await memory.rateLimits.hit('busy', 60_000, now);
    for (let i = 0; i < 998; i++) await memory.rateLimits.hit(`flood${i}`, 60_000, now);
    await memory.rateLimits.hit('one-more', 60_000, now);
    expect(memory.size()).toBe(901);
    expect((await memory.rateLimits.get('busy', now))?.count).toBe(5);
    expect((await memory.rateLimits.get('known-source', now))?.count).toBe(1);
    expect(await memory.rateLimits.get('flood0', now)).toBeNull();
    expect((await memory.rateLimits.get('flood997', now))?.count).toBe(1);
  });
});
