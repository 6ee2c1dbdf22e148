// The Redis store's rateLimits tier: one hash per counter, each operation one Lua script.
import { createHash } from 'node:crypto';
import type { RateLimitCount, RateLimitStore } from '../contract.js';
import type { RedisSend } from './grants.js';
import type { RedisScript, RunScript } from './scripts.js';

function script(source: string): RedisScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * KEYS counter (hash: c count, r window end in ms); ARGV nowMs, newEndMs, windowMs. A live window counts up;
 * an absent or ended one restarts at 1 and gets a TTL of the window, so Redis drops it by itself.
 * Returns {count, endMs}.
 */
const HIT = script(`
local v = redis.call('HMGET', KEYS[1], 'c', 'r')
if v[1] and tonumber(v[2]) > tonumber(ARGV[1]) then
  return {redis.call('HINCRBY', KEYS[1], 'c', 1), v[2]}
end
redis.call('HSET', KEYS[1], 'c', 1, 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, ARGV[2]}`);

/** KEYS counter; ARGV endMs. Takes one back from the window ending at endMs only, never below zero. */
const RELEASE = script(`
local v = redis.call('HMGET', KEYS[1], 'c', 'r')
if v[1] and v[2] == ARGV[1] and tonumber(v[1]) > 0 then redis.call('HINCRBY', KEYS[1], 'c', -1) end
return 1`);

const toCount = (count: unknown, end: unknown): RateLimitCount => ({ count: Number(count), resetAt: new Date(Number(end)) });

/**
 * Counters under `${prefix}rl:`. Redis runs one script at a time, so of N concurrent hits on one key, from
 * any number of instances, each count is returned once. The window's end is the caller's clock (`now`); the
 * TTL (relative, so clock skew between app and Redis does not matter) only reclaims the memory. Each counter
 * is one key touched alone, so on a Redis Cluster counters spread over every master (no hash tag).
 * @see RFC 6819 §5.1.4.2.3 (lock accounts), RFC 6585 §4.
 */
export function createRedisRateLimits(prefix: string, run: RunScript, send: RedisSend): RateLimitStore {
  const keyOf = (key: string): string => `${prefix}rl:${key}`;
  return {
    async hit(key, windowMs, now) {
      const at = now.getTime();
      const [count, end] = (await run(HIT, [keyOf(key)], [String(at), String(at + windowMs), String(windowMs)])) as [unknown, unknown];
      return toCount(count, end);
    },
    async get(key, now) {
      const [count, end] = (await send(['HMGET', keyOf(key), 'c', 'r'])) as [string | null, string | null];
      return count !== null && end !== null && Number(end) > now.getTime() ? toCount(count, end) : null;
    },
    async release(key, resetAt) {
      await run(RELEASE, [keyOf(key)], [String(resetAt.getTime())]);
    },
    async reset(key) {
      await send(['DEL', keyOf(key)]);
    },
  };
}
