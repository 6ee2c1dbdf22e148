// Prunes expired members from the Redis store's token index sets, which outlive their tokens until an add or their own TTL.
import { createHash } from 'node:crypto';
import type { RedisSend } from './grants.js';
import type { RedisScript, RunScript } from './scripts.js';
import type { RedisDrains } from './drain.js';
import { SWEEP_BATCH, startAsyncSweepLoop, type SweepLoop } from '../sweep-loop.js';

/**
 * KEYS index; ARGV nowMs, limit. Removes up to `limit` members scored (by their token's expiry) at or before
 * now: tokens every read already treats as gone, exactly the members SAVE_TOKENS prunes on an add.
 */
const PRUNE_INDEX: RedisScript = (() => {
  const source = `
local m = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #m > 0 then redis.call('ZREM', KEYS[1], unpack(m)) end
return #m`;
  return { source, sha: createHash('sha1').update(source).digest('hex') };
})();

/** Escapes Redis glob characters, so a prefix like `app[1]:` matches only itself. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * Whether a key (past the token family) is a draining set: `ctok:<client>:draining` or `utok:<client>:<user>:draining`,
 * or the second of either (`…:draining:1`, see `keys.drainingSets`). Ids in keys are encoded (`keyPart`), never holding
 * a `:`, so a user id `draining` (`utok:<client>:draining`) is not one.
 */
function isDraining(rest: string): boolean {
  const parts = rest.split(':');
  const second = parts[parts.length - 1] === '1' ? 1 : 0;
  return parts[parts.length - 1 - second] === 'draining' && parts.length === (parts[0] === 'ctok' ? 3 : 4) + second;
}

/** Where the sweeper reports what it cannot throw. */
export interface RedisSweeperLogger {
  warn(message: string, error?: unknown): void;
}

/** A running sweeper: the same handle as the batched sweeps of the SQLite and memory stores. */
export type RedisSweeper = SweepLoop;

/**
 * Tokens, codes, tombstones and rate-limit counters carry their own TTL (PXAT / PEXPIREAT / PX), so Redis
 * drops them by itself. The index sets of a grant, an integration and a user at an integration are sorted
 * sets scored by expiry that expire with their last member and are pruned on every add; an index that gets
 * no more adds but keeps one long-lived member (a 30-day refresh token) would hold every expired member
 * until then. That matters for the integration and user indexes, which gather many grants' tokens; a grant's
 * own index holds only its own few. This sweep walks those sets with SCAN (`tokenFamily` is the keys' common start, see
 * createRedisKeys) and removes expired members, `SWEEP_BATCH` per script, so Redis never blocks for long;
 * every `intervalSeconds` (none when 0), on an unref'd timer re-armed after each run. Each run first finishes the
 * revocation drains whose drainer died (`drains.resumeAbandoned`); a draining set the walk meets unregistered (left by
 * a version before 0.3.0) it registers (`drains.adopt`), so that lookups refuse its tokens, and drains at the end.
 * @see RFC 7009 §2.1 (revocation reads these indexes), RFC 6749 §10.3 (tokens expire).
 */
export function startRedisSweeper(
  tokenFamily: string,
  send: RedisSend,
  run: RunScript,
  intervalSeconds: number,
  logger: RedisSweeperLogger,
  drains: Pick<RedisDrains, 'resumeAbandoned' | 'adopt'>,
): RedisSweeper {
  // One SCAN pass over the integration and user-at-integration indexes: they gather a member per token of
  // many grants. A grant's own index is left to its TTL and the prune on add: it holds only that grant's
  // tokens, and there is one per grant, so visiting each would cost a script per grant every run.
  const patterns = [`${globLiteral(tokenFamily)}[cu]tok:*`];
  return startAsyncSweepLoop(async (isStopped) => {
    // First the drains of revocations whose process died midway: their tokens are refused already, this reclaims them.
    await drains.resumeAbandoned();
    let adopted = false;
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        if (isStopped()) return;
        const [next, keys] = (await send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', String(SWEEP_BATCH), 'TYPE', 'zset'])) as [string, string[]];
        cursor = next;
        for (const key of keys) {
          if (isDraining(key.slice(tokenFamily.length)) && (await drains.adopt(key))) adopted = true;
          while (!isStopped() && Number(await run(PRUNE_INDEX, [key], [String(Date.now()), String(SWEEP_BATCH)])) === SWEEP_BATCH);
        }
      } while (cursor !== '0');
    }
    if (adopted && !isStopped()) await drains.resumeAbandoned();
  }, intervalSeconds * 1000, (err) => logger.warn('express-oauth-router: Redis sweep of expired index members failed', err));
}
