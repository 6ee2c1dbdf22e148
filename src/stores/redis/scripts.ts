// Lua scripts of the Redis store: every multi-key write runs as one script, so it is atomic server-side.
import { createHash } from 'node:crypto';

/** Runs a script by SHA (EVALSHA), loading it with EVAL once per server after a NOSCRIPT. */
export type RunScript = (script: RedisScript, keys: readonly string[], args: readonly string[]) => Promise<unknown>;

/** A Lua source and its SHA-1, computed once. */
export interface RedisScript {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): RedisScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Builds the runner over a raw `send(args)`. EVALSHA avoids resending the source on every call; a server
 * that restarted or ran SCRIPT FLUSH answers NOSCRIPT, and EVAL then both runs and caches the script.
 */
export function createScriptRunner(send: (args: readonly string[]) => Promise<unknown>): RunScript {
  return async (s, keys, args) => {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await send(['EVALSHA', s.sha, ...tail]);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return send(['EVAL', s.source, ...tail]);
    }
  };
}

/** SET a record and index it in a sorted set: KEYS record, index; ARGV json, score, member. */
export const PUT_INDEXED = script(`
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1`);

/** DEL a record and drop it from its sorted-set index: KEYS record, index; ARGV member. */
export const DELETE_INDEXED = script(`
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`);

/**
 * Saves a code as a hash (d: JSON, x: expiry ms, g: grant id) that expires on its own at `x`. Refuses an
 * existing key, as a primary key would: re-saving must never reset a used code to unused.
 * KEYS code; ARGV json, expiresAtMs, grantId.
 */
export const SAVE_CODE = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('ERR authorization code already saved') end
redis.call('HSET', KEYS[1], 'd', ARGV[1], 'x', ARGV[2], 'g', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1`);

/**
 * Atomic single use (RFC 6749 §4.1.2): Redis runs one script at a time, so of N concurrent calls exactly
 * one sees the code without its `c` field and sets it. The key stays until its own expiry, so later calls
 * report a replay; `x` is compared with the caller's clock too, since a key can outlive its expiry by
 * up to a few ms before Redis evicts it. KEYS code; ARGV nowMs.
 * Returns {'consumed', json} | {'replayed', grantId} | {'not_found'}.
 */
export const CONSUME_CODE = script(`
local v = redis.call('HMGET', KEYS[1], 'x', 'c', 'g', 'd')
if not v[1] or tonumber(v[1]) <= tonumber(ARGV[1]) then return {'not_found'} end
if v[2] then return {'replayed', v[3]} end
redis.call('HSET', KEYS[1], 'c', ARGV[1])
return {'consumed', v[4]}`);

/**
 * Saves one or two tokens of a grant unless the grant's tombstone exists, in one atomic step, so a
 * revokeGrant is either entirely before (refused: returns 0) or entirely after (it deletes them).
 * Each token is indexed in sorted sets scored by expiry (grant, client, and client+user); expired
 * members are pruned on the way and each index expires with its last member, so indexes do not grow
 * without bound.
 * KEYS tombstone, grantIndex, then per token: tokenKey, clientIndex, userIndex.
 * ARGV nowMs, then per token: json, expiresAtMs, hasUser ('1' | '0').
 */
export const SAVE_TOKENS = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = tonumber(ARGV[1])
local function index(key, member, exp)
  redis.call('ZADD', key, exp, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, last[2]) end
end
local n = (#KEYS - 2) / 3
for i = 0, n - 1 do
  local key, json, exp = KEYS[3 + i * 3], ARGV[2 + i * 3], tonumber(ARGV[3 + i * 3])
  if exp > now then
    redis.call('SET', key, json, 'PXAT', exp)
    index(KEYS[2], key, exp)
    index(KEYS[4 + i * 3], key, exp)
    if ARGV[4 + i * 3] == '1' then index(KEYS[5 + i * 3], key, exp) end
  end
end
return 1`);

/**
 * Writes the grant's tombstone (refused by SAVE_TOKENS for ttlMs) and deletes every token in the grant's
 * index. KEYS tombstone, grantIndex; ARGV ttlMs.
 */
export const REVOKE_GRANT = script(`
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
local members = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, key in ipairs(members) do redis.call('DEL', key) end
redis.call('DEL', KEYS[2])
return #members`);

/**
 * Pops up to ARGV[1] members of an index and deletes the keys they name. Called in a loop, so revoking
 * a client with a million tokens never blocks Redis in one long script. KEYS index; ARGV count.
 */
export const POP_AND_DELETE = script(`
local popped = redis.call('ZPOPMIN', KEYS[1], ARGV[1])
for i = 1, #popped, 2 do redis.call('DEL', popped[i]) end
return #popped / 2`);
