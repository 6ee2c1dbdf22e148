// Redis authorization codes and tokens: native TTLs, atomic consume and grant-safe issuance in Lua.
import type { AuthorizationCodeRecord, CodeStore, ConsumeResult, TokenRecord, TokenStore } from '../contract.js';
import { decodeCode, decodeLiveToken, encodeCode, encodeToken, type RedisKeys } from './codec.js';
import { CONSUME_CODE, POP_AND_DELETE, REVOKE_GRANT, SAVE_CODE, SAVE_TOKENS, type RunScript } from './scripts.js';

/** How long a revoked grant is remembered, so that saveTokens refuses it (the contract says ≥ 24 h). */
export const REVOKED_GRANT_TTL_MS = 24 * 60 * 60 * 1000;

/** Index members popped per script call in revokeClientTokens. */
const REVOKE_CHUNK = 500;

/** Raw command access: one Redis command per call. */
export type RedisSend = (args: readonly string[]) => Promise<unknown>;

/**
 * CodeStore on Redis. A code is a hash that expires at its expiresAt (PEXPIREAT); a used code keeps its
 * key, marked, until then, so a replay is reported rather than mistaken for an unknown code.
 * @see RFC 6749 §4.1.2 ("The client MUST NOT use the authorization code more than once").
 */
export function createRedisCodeStore(keys: RedisKeys, run: RunScript): CodeStore {
  return {
    async saveCode(r) {
      // Already expired: storing it would only add a key that reads as absent anyway.
      if (r.expiresAt.getTime() <= Date.now()) return;
      await run(SAVE_CODE, [keys.code(r.codeHash)], [encodeCode(r), String(r.expiresAt.getTime()), r.grantId]);
    },
    async consumeCode(codeHash): Promise<ConsumeResult<AuthorizationCodeRecord>> {
      const reply = (await run(CONSUME_CODE, [keys.code(codeHash)], [String(Date.now())])) as string[];
      if (reply[0] === 'consumed' && reply[1] !== undefined) return { kind: 'consumed', record: decodeCode(reply[1]) };
      if (reply[0] === 'replayed' && reply[1] !== undefined) return { kind: 'replayed', grantId: reply[1] };
      return { kind: 'not_found' };
    },
  };
}

/**
 * TokenStore on Redis. Tokens are JSON strings with a native TTL (SET … PXAT), indexed by grant, client
 * and client+user in sorted sets scored by expiry. saveTokens and revokeGrant are Lua scripts, and Redis
 * runs scripts one at a time: issuance racing a revocation is either refused or deleted by it.
 * @see RFC 6749 §4.1.2 (replay revokes the grant's tokens), RFC 7009 §2.1 (revocation).
 */
export function createRedisTokenStore(keys: RedisKeys, run: RunScript, send: RedisSend): TokenStore {
  function tokenArgs(kind: 'access' | 'refresh', r: TokenRecord): { keys: string[]; args: string[] } {
    const tokenKey = kind === 'access' ? keys.accessToken(r.tokenHash) : keys.refreshToken(r.tokenHash);
    const clientIndex = keys.clientIndex(r.clientId);
    // Without a user, the client index stands in as the (unused) user index key, flagged by '0'.
    const userIndex = r.userId === null ? clientIndex : keys.userIndex(r.clientId, r.userId);
    return {
      keys: [tokenKey, clientIndex, userIndex],
      args: [encodeToken(r), String(r.expiresAt.getTime()), r.userId === null ? '0' : '1'],
    };
  }

  async function find(key: string): Promise<TokenRecord | null> {
    return decodeLiveToken((await send(['GET', key])) as string | null, Date.now());
  }

  async function drain(index: string): Promise<void> {
    // Bounded by the index size seen at the start, so tokens issued meanwhile cannot keep it looping.
    const size = Number(await send(['ZCARD', index]));
    for (let i = 0; i <= size / REVOKE_CHUNK; i++) {
      const popped = Number(await run(POP_AND_DELETE, [index], [String(REVOKE_CHUNK)]));
      if (popped < REVOKE_CHUNK) break;
    }
  }

  return {
    async saveTokens(access, refresh) {
      if (refresh && refresh.grantId !== access.grantId) {
        throw new TypeError('saveTokens: the access and refresh token must belong to the same grant');
      }
      const parts = [tokenArgs('access', access), ...(refresh ? [tokenArgs('refresh', refresh)] : [])];
      const reply = await run(
        SAVE_TOKENS,
        [keys.revokedGrant(access.grantId), keys.grantIndex(access.grantId), ...parts.flatMap((p) => p.keys)],
        [String(Date.now()), ...parts.flatMap((p) => p.args)],
      );
      return Number(reply) === 1;
    },
    findAccessToken: (tokenHash) => find(keys.accessToken(tokenHash)),
    findRefreshToken: (tokenHash) => find(keys.refreshToken(tokenHash)),
    async revokeAccessToken(tokenHash) {
      // Its index entries stay until they expire: a DEL of a missing key is harmless.
      await send(['DEL', keys.accessToken(tokenHash)]);
    },
    async revokeGrant(grantId) {
      await run(REVOKE_GRANT, [keys.revokedGrant(grantId), keys.grantIndex(grantId)], [String(REVOKED_GRANT_TTL_MS)]);
    },
    async revokeClientTokens(clientId, userId) {
      await drain(userId === undefined ? keys.clientIndex(clientId) : keys.userIndex(clientId, userId));
    },
  };
}
