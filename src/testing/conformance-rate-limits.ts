// Conformance rules for the rateLimits tier: fixed windows on the caller's clock, release, reset, exact keys, atomic hits.
import assert from 'node:assert/strict';
import type { RateLimitCount, RateLimitStore } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { freshId, nearTwins } from './conformance-ids.js';
import { rateLimitsOf } from './conformance-parts.js';
import { describeRound, forEachRound, race } from './interleave.js';

/** Window of the rules: long enough that no rule's real duration reaches its end. */
export const WINDOW_MS = 60_000;
/** Longest key a store must keep (the router's keys are about 60 characters). */
const LONGEST_KEY = 200;
/** Concurrent hits in the opening round of the race, all started at once; later rounds race one against the rest. */
const CROWD = 20;
const RACERS = 4;

/** A fresh key in the router's style: printable ASCII with letters of both cases. */
const freshKey = (): string => `eor:test:${freshId('Key')}`;

/** `now` moved by `ms`. */
const later = (now: Date, ms: number): Date => new Date(now.getTime() + ms);

/** The count and resetAt as plain values, for deepEqual messages. */
const plain = (count: RateLimitCount | null): { count: number; resetAt: number } | null =>
  count === null ? null : { count: count.count, resetAt: count.resetAt.getTime() };

async function hits(counters: RateLimitStore, key: string, times: number, now: Date): Promise<RateLimitCount> {
  let last: RateLimitCount | undefined;
  for (let i = 0; i < times; i++) last = await counters.hit(key, WINDOW_MS, now);
  return last!;
}

/**
 * The RateLimitStore rules (rateLimits tier). A store without `store.rateLimits` skips them: the router then
 * counts failed sign-ins and client authentications per process. Windows are judged on the `now` the caller
 * passes, so the rules step the clock instead of waiting.
 * @see RFC 6819 §4.3.5, §4.4.3.6, §5.1.4.2.3 (online guessing; locking), RFC 6585 §4.
 */
export const rateLimitRules: readonly ConformanceRule[] = [
  {
    tier: 'rateLimits',
    name: 'hit starts a window: count 1 and resetAt now + windowMs to the millisecond, as a Date',
    async run({ store }) {
      const now = new Date();
      const first = await rateLimitsOf(store).hit(freshKey(), WINDOW_MS, now);
      assert.ok(first.resetAt instanceof Date, 'resetAt must be a Date');
      assert.deepEqual(plain(first), { count: 1, resetAt: now.getTime() + WINDOW_MS });
    },
  },
  {
    tier: 'rateLimits',
    name: 'hits within the window count up and keep its resetAt, whatever windowMs they pass',
    async run({ store }) {
      const counters = rateLimitsOf(store);
      const key = freshKey();
      const now = new Date();
      await counters.hit(key, WINDOW_MS, now);
      assert.deepEqual(plain(await counters.hit(key, WINDOW_MS, later(now, 10))), { count: 2, resetAt: now.getTime() + WINDOW_MS });
      assert.deepEqual(plain(await counters.hit(key, 5 * WINDOW_MS, later(now, WINDOW_MS - 1))), { count: 3, resetAt: now.getTime() + WINDOW_MS });
    },
  },
  {
    tier: 'rateLimits',
    name: "a hit at or after resetAt starts a new window at 1: the caller's now decides, not the store's clock",
    async run({ store }) {
      const counters = rateLimitsOf(store);
      const key = freshKey();
      const now = new Date();
      await hits(counters, key, 3, now);
      const next = later(now, WINDOW_MS);
      assert.deepEqual(plain(await counters.hit(key, WINDOW_MS, next)), { count: 1, resetAt: next.getTime() + WINDOW_MS });
      assert.deepEqual(plain(await counters.hit(key, WINDOW_MS, later(next, 1))), { count: 2, resetAt: next.getTime() + WINDOW_MS });
    },
  },
  {
    tier: 'rateLimits',
    name: 'get counts nothing: null for an unknown key and for an ended window, the count and resetAt otherwise',
    async run({ store }) {
      const counters = rateLimitsOf(store);
      const key = freshKey();
      const now = new Date();
      assert.equal(await counters.get(key, now), null, 'an unknown key');
      await hits(counters, key, 2, now);
      assert.deepEqual(plain(await counters.get(key, later(now, 1))), { count: 2, resetAt: now.getTime() + WINDOW_MS });
      assert.deepEqual(plain(await counters.get(key, later(now, 2))), { count: 2, resetAt: now.getTime() + WINDOW_MS }, 'get must not count');
      assert.equal(await counters.get(key, later(now, WINDOW_MS)), null, 'a window that ended at now');
    },
  },
  {
    tier: 'rateLimits',
    name: 'release takes back one hit of the window ending at resetAt, never below zero (a window at zero may be dropped), and nothing from a later window',
    async run({ store }) {
      const counters = rateLimitsOf(store);
      const key = freshKey();
      const now = new Date();
      const first = await hits(counters, key, 2, now);
      await counters.release(key, first.resetAt);
      assert.equal((await counters.get(key, now))?.count, 1);
      await counters.release(key, first.resetAt);
      await counters.release(key, first.resetAt);
      // Nothing left: a window of 0, or none (a store may drop a window released to zero, as the memory one does).
      assert.equal((await counters.get(key, now))?.count ?? 0, 0, 'never below zero');
      assert.equal((await counters.hit(key, WINDOW_MS, now)).count, 1, 'a hit after releases counts from what is left');
      const next = later(now, WINDOW_MS);
      await hits(counters, key, 2, next);
      await counters.release(key, first.resetAt);
      assert.equal((await counters.get(key, next))?.count, 2, 'a release for an ended window must not touch the new one');
      await counters.release(freshKey(), first.resetAt);
    },
  },
  {
    tier: 'rateLimits',
    name: 'reset forgets the key: the next hit starts a new window at 1; reset of an unknown key resolves',
    async run({ store }) {
      const counters = rateLimitsOf(store);
      const key = freshKey();
      const now = new Date();
      await hits(counters, key, 3, now);
      await counters.reset(key);
      assert.equal(await counters.get(key, now), null);
      const after = later(now, 5);
      assert.deepEqual(plain(await counters.hit(key, WINDOW_MS, after)), { count: 1, resetAt: after.getTime() + WINDOW_MS });
      await counters.reset(freshKey());
    },
  },
  {
    tier: 'rateLimits',
    name: `rate-limit keys compare exactly: keys differing only in case or by a trailing space count apart, and a ${LONGEST_KEY}-character key counts`,
    async run({ store }) {
      const counters = rateLimitsOf(store);
      const key = freshKey();
      const now = new Date();
      await hits(counters, key, 3, now);
      for (const twin of nearTwins(key)) {
        assert.equal((await counters.hit(twin, WINDOW_MS, now)).count, 1, `${JSON.stringify(twin)} was counted with ${JSON.stringify(key)}`);
      }
      await counters.reset(nearTwins(key)[0]);
      assert.equal((await counters.get(key, now))?.count, 3, 'reset of a twin must leave the key alone');
      const longest = key.padEnd(LONGEST_KEY, 'xY');
      assert.equal((await hits(counters, longest, 2, now)).count, 2);
    },
  },
  {
    tier: 'rateLimits',
    name: 'of N concurrent hits on one key the counts are 1 to N, each exactly once, in every interleaving',
    async run({ store, rounds }) {
      const counters = rateLimitsOf(store);
      await forEachRound(rounds, async (round, schedule) => {
        const where = describeRound(round, schedule);
        const key = freshKey();
        const now = new Date();
        const hit = () => counters.hit(key, WINDOW_MS, now);
        const together = (count: number) => () => Promise.all(Array.from({ length: count }, hit));
        let results: RateLimitCount[];
        if (round === 0) results = await together(CROWD)();
        else {
          const [one, others] = await race(hit, together(RACERS - 1), schedule);
          results = [one, ...others];
        }
        const counts = results.map((r) => r.count).sort((a, b) => a - b);
        assert.deepEqual(counts, Array.from({ length: results.length }, (_, i) => i + 1), `${where}: counts ${JSON.stringify(counts)}`);
        assert.equal(new Set(results.map((r) => r.resetAt.getTime())).size, 1, `${where}: the hits saw different windows`);
      });
    },
  },
];
