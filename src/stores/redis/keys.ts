// The Redis store's signing-key part: one hash (kid → JSON record), every write (insert-if-none, deletion, replacement) one Lua script.
import { createHash } from 'node:crypto';
import type { SaveSigningKeyOptions, SigningKeyRecord, SigningKeyStore } from '../contract.js';
import { compareSigningKeys } from '../store-policy.js';
import type { RedisSend } from './grants.js';
import type { RedisScript, RunScript } from './scripts.js';

/**
 * KEYS signing-keys hash; ARGV kid, json, onlyIfNone ('1'/'0'). HSETNX never replaces a kid; the HLEN
 * check runs in the same script, so of N instances starting together exactly one inserts.
 */
const SAVE_SIGNING_KEY: RedisScript = (() => {
  const source = `
if ARGV[3] == '1' and redis.call('HLEN', KEYS[1]) > 0 then return 0 end
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])`;
  return { source, sha: createHash('sha1').update(source).digest('hex') };
})();

/**
 * KEYS signing-keys hash; ARGV kid. A script only so that it goes through `run`, which `waitForReplicas` confirms: a
 * deletion (of a leaked or retired key) only the primary holds is undone by its replica's promotion, and the key is back.
 */
const DELETE_SIGNING_KEY: RedisScript = (() => {
  const source = `return redis.call('HDEL', KEYS[1], ARGV[1])`;
  return { source, sha: createHash('sha1').update(source).digest('hex') };
})();

/**
 * KEYS signing-keys hash; ARGV kid, json. Deletes every other field and inserts (HSETNX: a retried call keeps its
 * record), atomically as any script; resolves the kids deleted. One key, so one slot on a cluster.
 */
const REPLACE_SIGNING_KEYS: RedisScript = (() => {
  const source = `
local deleted = {}
for _, kid in ipairs(redis.call('HKEYS', KEYS[1])) do
  if kid ~= ARGV[1] then
    redis.call('HDEL', KEYS[1], kid)
    deleted[#deleted + 1] = kid
  end
end
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return deleted`;
  return { source, sha: createHash('sha1').update(source).digest('hex') };
})();

interface StoredKey {
  readonly kid: string;
  readonly algorithm: SigningKeyRecord['algorithm'];
  readonly privateKeyPem: string;
  readonly createdAt: number;
}

function decode(json: string): SigningKeyRecord {
  const stored = JSON.parse(json) as StoredKey;
  return { kid: stored.kid, algorithm: stored.algorithm, privateKeyPem: stored.privateKeyPem, createdAt: new Date(stored.createdAt) };
}

/**
 * Signing keys in the hash `${prefix}signing-keys`, without a TTL: keys are few, and the router decides
 * when one is retired and deletes its field then.
 * @see RFC 9068 §4, RFC 7517 §5.
 */
export function createRedisKeyStore(prefix: string, run: RunScript, send: RedisSend): SigningKeyStore {
  const hash = `${prefix}signing-keys`;
  return {
    async listSigningKeys(): Promise<readonly SigningKeyRecord[]> {
      const values = (await send(['HVALS', hash])) as string[];
      return values.map(decode).sort(compareSigningKeys);
    },
    async saveSigningKey(record: SigningKeyRecord, options: SaveSigningKeyOptions = {}): Promise<boolean> {
      const stored: StoredKey = { ...record, createdAt: record.createdAt.getTime() };
      const inserted = await run(SAVE_SIGNING_KEY, [hash], [record.kid, JSON.stringify(stored), options.onlyIfNone === true ? '1' : '0']);
      return Number(inserted) === 1;
    },
    async deleteSigningKey(kid: string): Promise<boolean> {
      return Number(await run(DELETE_SIGNING_KEY, [hash], [kid])) === 1;
    },
    async replaceSigningKeys(record: SigningKeyRecord): Promise<readonly string[]> {
      const stored: StoredKey = { ...record, createdAt: record.createdAt.getTime() };
      return (await run(REPLACE_SIGNING_KEYS, [hash], [record.kid, JSON.stringify(stored)])) as string[];
    },
  };
}
