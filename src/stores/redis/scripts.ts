// Lua scripts of the Redis store: every multi-key write runs as one script, so it is atomic server-side.
import { createHash } from 'node:crypto';
import { CLIENT_FIELDS } from './codec.js';
import { SWEEP_BATCH } from '../sweep-loop.js';

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

/*
 * Every script is given each key it touches in KEYS (Redis Cluster routes by them), either built from ids
 * or read beforehand from an index; none builds a key name in Lua.
 */

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
 * Returns {'consumed', json} | {'replayed', grantId, json} | {'not_found'}.
 */
export const CONSUME_CODE = script(`
local v = redis.call('HMGET', KEYS[1], 'x', 'c', 'g', 'd')
if not v[1] or tonumber(v[1]) <= tonumber(ARGV[1]) then return {'not_found'} end
if v[2] then return {'replayed', v[3], v[4]} end
redis.call('HSET', KEYS[1], 'c', ARGV[1])
return {'consumed', v[4]}`);


/**
 * Inserts an integration unless its key exists (of either layout), in one step, as a primary key would.
 * KEYS client, clientList; ARGV createdAtMs, clientId, then field/value pairs. Returns 1 inserted, 0 not.
 */
export const CREATE_CLIENT = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
return 1`);

/**
 * Removes an integration's record (of either layout) and its place in the client list, in one step in the
 * clients slot. KEYS client, clientList; ARGV clientId. Returns 1 when the record existed, 0 when not.
 */
export const DELETE_CLIENT = script(`
local existed = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return existed`);

const HMGET_CLIENT = `redis.call('HMGET', KEYS[1], ${CLIENT_FIELDS.map((f) => `'${f}'`).join(', ')})`;

/**
 * Sets the given fields of an existing integration and reads it back, in one step: each field is its own
 * hash field, so concurrent updates of different fields (a disable and a secret rotation) both stay. A value
 * of JSON `null` (only the optional fields can take it) deletes the field instead.
 * KEYS client; ARGV field/value pairs. Returns the HMGET of every field, 'none' for an unknown id, or
 * 'legacy' for a record still in version 0.1's one-string layout (convert it with MIGRATE_CLIENT first).
 */
export const UPDATE_CLIENT = script(`
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then return 'none' end
if kind ~= 'hash' then return 'legacy' end
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == 'null' then redis.call('HDEL', KEYS[1], ARGV[i])
  else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return ${HMGET_CLIENT}`);

/**
 * ClientStore.disableClient and enableClient: sets `disabled` to ARGV[1] ('true' or 'false') and answers whether it
 * changed, in one script (Redis runs one at a time), so of concurrent disables (or enables) one alone finds it
 * changed. A disable also removes the previous secret of a planned rotation, even when the integration was disabled
 * already (a rotation made while disabled leaves one). KEYS client. Returns 'none', 'legacy' (a version 0.1 string,
 * converted first), 'changed' or 'unchanged'.
 */
export const SET_CLIENT_DISABLED = script(`
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then return 'none' end
if kind ~= 'hash' then return 'legacy' end
local was = redis.call('HGET', KEYS[1], 'disabled') == 'true'
redis.call('HSET', KEYS[1], 'disabled', ARGV[1])
if ARGV[1] == 'true' then redis.call('HDEL', KEYS[1], 'previousClientSecretHash', 'previousClientSecretExpiresAt') end
if was == (ARGV[1] == 'true') then return 'unchanged' end
return 'changed'`);

/**
 * Converts a version 0.1 client (one JSON string) to a hash, only if the string is still the one the
 * caller read and converted (compare-and-set), so a conversion never overwrites a newer record.
 * KEYS client; ARGV json read, then field/value pairs. Returns 1 converted, 0 not.
 */
export const MIGRATE_CLIENT = script(`
if redis.call('TYPE', KEYS[1]).ok ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1`);

/**
 * Saves one or two tokens unless a revocation overtook them, checking and inserting in one step (Redis runs
 * one script at a time), so a revocation is either wholly before the save (which it refuses: returns 0) or
 * wholly after it (and finds the tokens in the indexes it drains). Refused when the grant's tombstone
 * exists, or the integration's tokens, or (hasUser) the user's tokens at it, were revoked at or after
 * `authorizedAt`. Each token is indexed in sorted sets scored by expiry (grant, client, client+user);
 * expired members are pruned on the way, the oldest `SWEEP_BATCH` per index at most (the members of one
 * integration's tokens that expired together, 300,000 of them, took one unbounded prune 299 ms, during which
 * Redis served no one; the rest go with the next saves and the sweep), and each index expires with its last member. The two tokens of a
 * code exchange share their tombstones and indexes: each is read, and each index added to, pruned and given
 * its expiry, once (a code exchange's save ran 31 commands, 11 of them repeats).
 * Also refused while a token of the grant waits in a draining set (either of the index's two, `keys.drainingSets`)
 * of a revocation of the integration (or of the user at it) that has not finished: START_REVOCATION records the
 * moment before the drain deletes the grant's refresh token and writes its tombstone, so a refresh that began after
 * the moment and read that refresh token in between would otherwise mint an access token that outlives the
 * revocation (a drain of 1,000,000 tokens runs for tens of seconds, 500 per script). Costs a save one EXISTS while no drain runs. While
 * one does, only the grant's latest-expiring refresh token is looked up, found from the top of the grant's index
 * (100 members a read): a grant's tokens saved before the revocation are all in its draining set, the refresh
 * token saved with its first access token among them (or drained, and the grant tombstoned), and a later one is
 * saved only past this check. Looking up each member instead cost every save of a grant refreshed ten times a
 * second (36,000 live access tokens) 34 ms of Redis. A grant without a refresh token has each member looked up.
 * Refresh tokens are the members starting with ARGV's refresh-token key prefix.
 * With a last key and argument more (a plain Redis only: the client's record is in another slot on a
 * cluster), also refused when the integration's record is no longer the revision of the copy the request was
 * authenticated with (`clientRevisionOf`: its fields, length-prefixed, SHA-1), or is gone.
 * KEYS grantTombstone, grantIndex, then per token: tokenKey, clientIndex, userIndex, clientRevokedAt,
 * userRevokedAt (without a user, the client's keys stand in for the unused user keys), then the two draining sets
 * of the client's index and the two of the user's (the client's again without a user), then [client].
 * ARGV nowMs, authorizedAtMs, then per token: json, expiresAtMs, hasUser ('1' | '0'), then the refresh-token key
 * prefix, then [revision].
 */
export const SAVE_TOKENS = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local checked = (#KEYS - 6) % 5 == 1
if checked then
  local v = redis.pcall('HMGET', KEYS[#KEYS], ${CLIENT_FIELDS.map((f) => `'${f}'`).join(', ')})
  if v.err then return 0 end
  local parts = {}
  for i = 1, #v do parts[i] = v[i] and (#v[i] .. ':' .. v[i]) or '-' end
  if redis.sha1hex(table.concat(parts)) ~= ARGV[#ARGV] then return 0 end
end
local now, since = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = math.floor((#KEYS - 6) / 5)
local read = {}
local function revokedSince(key)
  if read[key] then return false end
  read[key] = true
  local at = redis.call('GET', key)
  return at and tonumber(at) >= since
end
for i = 0, n - 1 do
  local k, a = 3 + i * 5, 3 + i * 3
  if revokedSince(KEYS[k + 3]) then return 0 end
  if ARGV[a + 2] == '1' and revokedSince(KEYS[k + 4]) then return 0 end
end
local d = 3 + n * 5
if redis.call('EXISTS', KEYS[d], KEYS[d + 1], KEYS[d + 2], KEYS[d + 3]) > 0 then
  local function waits(member)
    for i = d, d + 3 do
      if redis.call('ZSCORE', KEYS[i], member) then return true end
    end
    return false
  end
  local mark, size, stop, refresh, seen = ARGV[3 + n * 3], redis.call('ZCARD', KEYS[2]), -1, nil, {}
  while not refresh and stop >= -size do
    local chunk = redis.call('ZRANGE', KEYS[2], math.max(stop - 99, -size), stop)
    for j = #chunk, 1, -1 do
      if string.sub(chunk[j], 1, #mark) == mark then
        refresh = chunk[j]
        break
      end
      seen[#seen + 1] = chunk[j]
    end
    stop = stop - 100
  end
  if refresh then
    if waits(refresh) then return 0 end
  else
    for _, member in ipairs(seen) do
      if waits(member) then return 0 end
    end
  end
end
local indexes, entries = {}, {}
local function index(key, member, exp)
  local list = entries[key]
  if not list then
    list = {}
    entries[key] = list
    indexes[#indexes + 1] = key
  end
  list[#list + 1] = exp
  list[#list + 1] = member
end
for i = 0, n - 1 do
  local k, a = 3 + i * 5, 3 + i * 3
  local exp = tonumber(ARGV[a + 1])
  if exp > now then
    redis.call('SET', KEYS[k], ARGV[a], 'PXAT', exp)
    index(KEYS[2], KEYS[k], exp)
    index(KEYS[k + 1], KEYS[k], exp)
    if ARGV[a + 2] == '1' then index(KEYS[k + 2], KEYS[k], exp) end
  end
end
for _, key in ipairs(indexes) do
  redis.call('ZADD', key, unpack(entries[key]))
  local expired = redis.call('ZCOUNT', key, '-inf', now)
  if expired > 0 then redis.call('ZREMRANGEBYRANK', key, 0, math.min(expired, ${SWEEP_BATCH}) - 1) end
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, last[2]) end
end
return 1`);

/*
 * Every script that deletes token keys PUBLISHes how many it deleted (when any) to the store's revocation
 * channel, in the same script: the deletion and the announcement are one atomic step, and Redis delivers
 * the message to subscribers once the script has run, so a revocation no instance hears of cannot happen
 * while their feeds are subscribed (see revocation-feed.ts).
 */

/** Deletes one access token and announces it. KEYS token; ARGV channel. */
export const REVOKE_ACCESS_TOKEN = script(`
local deleted = redis.call('DEL', KEYS[1])
if deleted > 0 then redis.call('PUBLISH', ARGV[1], deleted) end
return deleted`);

/**
 * Writes the grant's tombstone (SAVE_TOKENS refuses the grant from then on) and deletes the given tokens of
 * the grant and their index entries, announcing the deletions. KEYS tombstone, grantIndex, then the token
 * keys read from the index; ARGV retentionMs, channel. Returns how many index members are left: tokens
 * saved between the caller's read of the index and this script, which the caller deletes with another
 * call (no save can follow the tombstone), and whether the tombstone was there before (1) or this script wrote the
 * grant's first (0): of two revocations of one grant, only the first is reported.
 */
export const REVOKE_GRANT = script(`
local existed = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
local deleted = 0
for i = 3, #KEYS do
  deleted = deleted + redis.call('DEL', KEYS[i])
  redis.call('ZREM', KEYS[2], KEYS[i])
end
if deleted > 0 then redis.call('PUBLISH', ARGV[2], deleted) end
return {redis.call('ZCARD', KEYS[2]), existed}`);

/**
 * Members START_REVOCATION copies in one script at most: 19 ms of Redis measured (SLOWLOG; 3.6 s for 1,000,000), under
 * the longest drain chunk's 45 ms; into sets of 300,000 to 600,000 members, 29 ms (49 ms at most, wall time on a 2-core
 * VM). Past it, it moves the index into a draining set of its own instead (a RENAME).
 */
export const REVOCATION_MERGE_MAX = 10_000;

/**
 * How long a drainer holds a draining set it registered or claimed (ms): every chunk renews it. Once it has run out
 * (the drainer's process died, or stalls this long between two chunks), any instance may claim the set and finish
 * the drain (drain.ts). Two drainers of one set at once only repeat deletes: each chunk removes what it deletes.
 */
export const DRAIN_LEASE_MS = 60_000;

/*
 * Lua `register(set)`: registers a draining set in the drains registry (KEYS[r]) with a lease until ARGV[l], and keeps
 * the marker (KEYS[m]) until the latest expiry of any registered set's tokens, the registry likewise: a set nobody
 * drains (every drainer dead) is then forgotten only once each of its tokens has expired anyway. Announces it on
 * ARGV[c] (the revocation channel): from now on every lookup refuses the set's tokens, so cached ones must go.
 */
const registerDrain = (r: number, m: number, l: number, c: number): string => `
local function register(set)
  local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
  if not last[2] then return end
  redis.call('ZADD', KEYS[${r}], ARGV[${l}], set)
  local upto = last[2]
  local held = redis.call('GET', KEYS[${m}])
  if held and tonumber(held) > tonumber(upto) then upto = held end
  redis.call('SET', KEYS[${m}], upto, 'PXAT', upto)
  redis.call('PEXPIREAT', KEYS[${r}], upto)
  redis.call('PUBLISH', ARGV[${c}], '0')
end`;

/** Lua `unregister(set)`: drops a draining set from the registry KEYS[r], and the marker KEYS[m] with the last one. */
const unregisterDrain = (r: number, m: number): string => `
local function unregister(set)
  redis.call('ZREM', KEYS[${r}], set)
  if redis.call('EXISTS', KEYS[${r}]) == 0 then redis.call('DEL', KEYS[${m}]) end
end`;

/**
 * First step of revokeClientTokens: records the moment (the later of the stored one and ARGV's, kept for the
 * retention) so that SAVE_TOKENS refuses every token authorized at or before it, and in the same step moves the index
 * SAVE_TOKENS writes to into a draining set, which the later steps empty. Also in that step it registers the index's
 * draining sets (with this drainer's lease) and sets the drain marker, so every token lookup refuses their tokens
 * from this moment, whatever becomes of the drain, and announces it on the revocation channel, so no requireBearer
 * cache keeps serving them.
 *
 * An index has two draining sets (`keys.drainingSets`), so an earlier revocation's set still draining (or left by a
 * process that died) never stands in the way: the index is moved by RENAME (O(1)) into a free one, or merged into the
 * busy one when either side holds at most `REVOCATION_MERGE_MAX` members (the smaller set's members copied into the
 * larger, never rewriting the larger: a ZUNIONSTORE while a drain of 836,500 tokens was under way held Redis for 3.7 s
 * in one script; the larger ends up under the draining key, by RENAME when it was the index). Each set drains on its
 * own, so a process dying at any later step leaves every token that existed at the moment refused, and its drain
 * resumable, while tokens saved after the moment (in the fresh index) stay valid: the version before moved nothing
 * when both sides were large, and drained the earlier set first, so a crash then left the index's tokens passing
 * lookups, and a retry moved tokens issued after the revocation too.
 *
 * When both draining sets are busy, the cheapest of copying the index into one, or the smaller set into the other
 * (freeing it for a RENAME), is made if it copies at most `REVOCATION_MERGE_MAX` members. Otherwise (three revocations
 * of 10,000 tokens or more, two of them unfinished) the script only moves `REVOCATION_MERGE_MAX` members of the smaller
 * set into the larger (each member is in one or the other at every moment, both refused), records nothing and returns
 * -1: the caller runs it again, and the revocation's moment is that of the run that moves the index.
 * KEYS revokedAt, index, the index's two draining sets, drains, drainMarker; ARGV nowMs, retentionMs, leaseUntilMs,
 * channel. Returns {copied, the index's draining sets that exist (each registered, for the caller to drain)}, or
 * {-1}.
 */
export const START_REVOCATION = script(`${registerDrain(5, 6, 3, 4)}${unregisterDrain(5, 6)}
local index, slots = KEYS[2], {KEYS[3], KEYS[4]}
local function copy(from, into, stop)
  local all = redis.call('ZRANGE', from, 0, stop, 'WITHSCORES')
  for i = 1, #all, 2000 do
    local batch = {}
    for j = i, math.min(i + 1998, #all - 1), 2 do
      batch[#batch + 1] = all[j + 1]
      batch[#batch + 1] = all[j]
    end
    redis.call('ZADD', into, unpack(batch))
  end
  local last = redis.call('ZRANGE', into, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', into, last[2])
  return #all / 2
end
local function merge(from, into, dest)
  local copied = copy(from, into, -1)
  redis.call('DEL', from)
  if into ~= dest then redis.call('RENAME', into, dest) end
  return copied
end
local size, sizes = redis.call('ZCARD', index), {redis.call('ZCARD', slots[1]), redis.call('ZCARD', slots[2])}
local copied = 0
if size > 0 then
  if sizes[1] == 0 or sizes[2] == 0 then
    local free = sizes[1] == 0 and 1 or 2
    local busy = 3 - free
    if sizes[busy] == 0 or math.min(size, sizes[busy]) > ${REVOCATION_MERGE_MAX} then
      redis.call('RENAME', index, slots[free])
    elseif size <= sizes[busy] then
      copied = merge(index, slots[busy], slots[busy])
    else
      copied = merge(slots[busy], index, slots[busy])
    end
  else
    local small = sizes[2] < sizes[1] and 2 or 1
    local large = 3 - small
    if math.min(size, sizes[small]) > ${REVOCATION_MERGE_MAX} then
      copy(slots[small], slots[large], ${REVOCATION_MERGE_MAX - 1})
      redis.call('ZREMRANGEBYRANK', slots[small], 0, ${REVOCATION_MERGE_MAX - 1})
      if redis.call('EXISTS', slots[small]) == 0 then unregister(slots[small]) end
      return {-1}
    end
    if size <= sizes[small] then
      copied = merge(index, slots[small], slots[small])
    else
      merge(slots[small], slots[large], slots[large])
      copied = sizes[small]
      redis.call('RENAME', index, slots[small])
    end
  end
end
local at = ARGV[1]
local before = redis.call('GET', KEYS[1])
if before and tonumber(before) > tonumber(at) then at = before end
redis.call('SET', KEYS[1], at, 'PX', ARGV[2])
local held = {copied}
for _, set in ipairs(slots) do
  if redis.call('EXISTS', set) == 1 then
    register(set)
    held[#held + 1] = set
  else
    unregister(set)
  end
end
return held`);

/**
 * One chunk of a revocation's drain: removes the given members from the draining set and deletes the tokens
 * they name, and for every refresh token it deletes writes its grant's tombstone in the same step (a
 * refresh already under way must not mint from it); announces the deletions. Renews the drainer's lease on the set
 * while members are left, and unregisters the set (and the drain marker with the last set) once it is empty.
 * KEYS draining, drains, drainMarker, then the n token keys, then one tombstone key per flagged token; ARGV
 * retentionMs, channel, leaseUntilMs, then n flags ('1': a tombstone key follows for it). Returns how many members
 * are left in the draining set.
 */
export const DRAIN_CHUNK = script(`${unregisterDrain(2, 3)}
local n = #ARGV - 3
local t = n + 4
local count = 0
for i = 1, n do
  local key = KEYS[i + 3]
  redis.call('ZREM', KEYS[1], key)
  local deleted = redis.call('DEL', key)
  count = count + deleted
  if ARGV[i + 3] == '1' then
    if deleted == 1 then redis.call('SET', KEYS[t], '1', 'PX', ARGV[1]) end
    t = t + 1
  end
end
if count > 0 then redis.call('PUBLISH', ARGV[2], count) end
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then unregister(KEYS[1])
else redis.call('ZADD', KEYS[2], 'XX', ARGV[3], KEYS[1]) end
return left`);

/**
 * Takes over a registered draining set whose drainer's lease ran out: renews the lease for the caller and returns 1,
 * or returns 0 when the lease still runs (its drainer is at work) or the set is no longer registered; a registered
 * set that is gone (its tokens all expired) is unregistered on the way. KEYS drains, drainMarker, draining; ARGV
 * nowMs, leaseUntilMs.
 */
export const CLAIM_DRAIN = script(`${unregisterDrain(1, 2)}
local lease = redis.call('ZSCORE', KEYS[1], KEYS[3])
if not lease or tonumber(lease) > tonumber(ARGV[1]) then return 0 end
if redis.call('EXISTS', KEYS[3]) == 0 then
  unregister(KEYS[3])
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], KEYS[3])
return 1`);

/**
 * Registers a draining set that is not registered (one left by a version before 0.3.0, which had no registry), with
 * the lease ARGV gives (the sweep gives 0: run out, so the next resumption drains it), setting the drain marker and
 * announcing it as START_REVOCATION does. KEYS draining, drains, drainMarker; ARGV leaseUntilMs, channel. Returns 1
 * when it registered the set, 0 when it was registered already or is gone.
 */
export const ADOPT_DRAIN = script(`${registerDrain(2, 3, 1, 2)}
if redis.call('ZSCORE', KEYS[2], KEYS[1]) or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
register(KEYS[1])
return 1`);

/**
 * A token lookup while a drain is registered: the token's JSON, or nil when it is gone or waits in a draining set of
 * its integration's or its user's index (revoked, not yet deleted). Reads only. KEYS token, then the draining sets:
 * the integration's two, the user's two (the integration's again without a user).
 */
export const FIND_UNDRAINED = script(`
local v = redis.call('GET', KEYS[1])
if not v then return false end
for i = 2, #KEYS do
  if redis.call('ZSCORE', KEYS[i], KEYS[1]) then return false end
end
return v`);
