// Redis authorization codes and tokens: native TTLs, atomic consume, and issuance that revocations refuse, in Lua.
import type { AuthorizationCodeRecord, CodeStore, ConsumeResult, TokenRecord, TokenStore } from '../contract.js';
import { checkTokenPair } from '../store-policy.js';
import { decodeCode, decodeLiveToken, encodeCode, encodeToken, type RedisKeys } from './codec.js';
import { RETENTION_MS, REVOKE_CHUNK, type RedisDrains } from './drain.js';
import {
  CONSUME_CODE,
  createScriptRunner,
  DRAIN_LEASE_MS,
  FIND_UNDRAINED,
  REVOKE_ACCESS_TOKEN,
  REVOKE_GRANT,
  SAVE_CODE,
  SAVE_TOKENS,
  START_REVOCATION,
  type RunScript,
} from './scripts.js';

/** Raw command access: one Redis command per call. */
export type RedisSend = (args: readonly string[]) => Promise<unknown>;

/** Where the token store announces its revocations: the scripts' channel, and this instance's own count. */
export interface RedisRevocationAnnouncer {
  /** The pub/sub channel every deleting script publishes to (`revocationChannel(prefix)`). */
  readonly channel: string;
  /** Called once each revocation has run or failed (a timed-out script may still have run), before it resolves. */
  revoked(): void;
}

/** Runs a revocation and counts it, whatever its outcome, before the caller hears of it. */
async function counted(announcer: RedisRevocationAnnouncer, revoke: () => Promise<void>): Promise<void> {
  try {
    await revoke();
  } finally {
    announcer.revoked();
  }
}

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
      if (reply[0] === 'replayed' && reply[1] !== undefined) {
        // The code's user and integration, for the report of the revocation the replay causes; a reply without the
        // record (never, from this store's script) leaves them out, as the contract allows.
        if (reply[2] === undefined) return { kind: 'replayed', grantId: reply[1] };
        const { userId, clientId } = decodeCode(reply[2]);
        return { kind: 'replayed', grantId: reply[1], userId, clientId };
      }
      return { kind: 'not_found' };
    },
  };
}

/**
 * TokenStore on Redis. Tokens are JSON strings with a native TTL (SET … PXAT), indexed by grant, client
 * and client+user in sorted sets scored by expiry. Revocations leave tombstones (a revoked grant, the
 * moment of each `revokeClientTokens`) kept for `STORE_POLICY.revocationRetentionMs`, and saveTokens checks
 * them and inserts in one Lua script: Redis runs one script at a time, so a save racing a revocation is
 * either refused by it or removed by it, with no timing involved.
 * @see RFC 6749 §4.1.2 (replay revokes the grant's tokens), RFC 7009 §2.1 (revocation).
 */
export function createRedisTokenStore(
  keys: RedisKeys,
  run: RunScript,
  send: RedisSend,
  announcer: RedisRevocationAnnouncer,
  checksClientRevision: boolean,
  drains: RedisDrains,
): Required<TokenStore> {
  const { channel } = announcer;
  // What every refresh token's key starts with: SAVE_TOKENS tells a grant's refresh token from its access tokens by it.
  const refreshMark = keys.refreshToken('');
  function tokenArgs(kind: 'access' | 'refresh', r: TokenRecord): { keys: string[]; args: string[] } {
    const tokenKey = kind === 'access' ? keys.accessToken(r.tokenHash) : keys.refreshToken(r.tokenHash);
    const clientIndex = keys.clientIndex(r.clientId);
    const clientRevokedAt = keys.clientRevokedAt(r.clientId);
    // Without a user, the client's keys stand in for the (unused) user keys, flagged by '0'.
    const hasUser = r.userId !== null;
    return {
      keys: [
        tokenKey,
        clientIndex,
        r.userId === null ? clientIndex : keys.userIndex(r.clientId, r.userId),
        clientRevokedAt,
        r.userId === null ? clientRevokedAt : keys.userRevokedAt(r.clientId, r.userId),
      ],
      args: [encodeToken(r), String(r.expiresAt.getTime()), hasUser ? '1' : '0'],
    };
  }

  // FIND_UNDRAINED only reads: never confirmed by replicas (`waitForReplicas`), as a GET is not.
  const runRead = createScriptRunner(send);

  /**
   * The token, with the drain marker in the same MGET (one command, as the GET it replaced): while no revocation's
   * drain is registered that is all. While one is (running, or left by a process that died midway), a live token is
   * looked up again with the draining sets of its integration and user, and refused when it waits in one; and a
   * resumption of abandoned drains is started (at most one every few seconds).
   */
  async function find(key: string): Promise<TokenRecord | null> {
    const [json, marker] = (await send(['MGET', key, keys.drainMarker])) as [string | null, string | null];
    const record = decodeLiveToken(json, Date.now());
    if (record === null || marker === null) return record;
    drains.poke();
    const clientIndex = keys.clientIndex(record.clientId);
    const userIndex = record.userId === null ? clientIndex : keys.userIndex(record.clientId, record.userId);
    const checked = await runRead(FIND_UNDRAINED, [key, ...keys.drainingSets(clientIndex), ...keys.drainingSets(userIndex)], []);
    return decodeLiveToken((checked ?? null) as string | null, Date.now());
  }

  return {
    async saveTokens(access, refresh, options) {
      checkTokenPair(access, refresh);
      const parts = [tokenArgs('access', access), ...(refresh ? [tokenArgs('refresh', refresh)] : [])];
      const revision = options.clientRevision;
      // A revision this store cannot check (a cluster keeps no copies, so none of its own) refuses: the
      // router then looks the integration up and asks again without one.
      if (revision !== undefined && !checksClientRevision) return false;
      const checked = revision === undefined ? [] : [keys.client(access.clientId)];
      // The refresh token shares the access token's integration and user (checkTokenPair): one pair of drains.
      const clientIndex = keys.clientIndex(access.clientId);
      const draining = [
        ...keys.drainingSets(clientIndex),
        ...keys.drainingSets(access.userId === null ? clientIndex : keys.userIndex(access.clientId, access.userId)),
      ];
      const reply = await run(
        SAVE_TOKENS,
        [keys.revokedGrant(access.grantId), keys.grantIndex(access.grantId), ...parts.flatMap((p) => p.keys), ...draining, ...checked],
        [String(Date.now()), String(options.authorizedAt.getTime()), ...parts.flatMap((p) => p.args), refreshMark, ...(revision === undefined ? [] : [revision])],
      );
      return Number(reply) === 1;
    },
    findAccessToken: (tokenHash) => find(keys.accessToken(tokenHash)),
    findRefreshToken: (tokenHash) => find(keys.refreshToken(tokenHash)),
    async revokeAccessToken(tokenHash) {
      // Its index entries stay until they expire: a DEL of a missing key is harmless.
      let deleted = 0;
      await counted(announcer, async () => {
        deleted = Number(await run(REVOKE_ACCESS_TOKEN, [keys.accessToken(tokenHash)], [channel]));
      });
      // Whether this call removed it: of two revocations of one token at once, only the one that did is reported.
      return deleted > 0;
    },
    /**
     * The first script writes the tombstone and deletes the tokens listed in the grant's index a moment
     * before. A token saved in between is still in the index (the script returns how many): it is deleted
     * by the next call, and there is a last call, since no save can follow the tombstone.
     */
    async revokeGrant(grantId) {
      const tombstone = keys.revokedGrant(grantId);
      const index = keys.grantIndex(grantId);
      // Whether the first script found the tombstone already there: a grant revoked before is not reported again.
      let existed: boolean | undefined;
      await counted(announcer, async () => {
        let left: number;
        do {
          const members = (await send(['ZRANGE', index, '0', String(REVOKE_CHUNK - 1)])) as string[];
          const [remaining, had] = (await run(REVOKE_GRANT, [tombstone, index, ...members], [RETENTION_MS, channel])) as [number, number];
          left = Number(remaining);
          existed ??= Number(had) === 1;
        } while (left > 0);
      });
      return existed !== true;
    },
    /**
     * Exact, though the drain takes several script calls. START_REVOCATION first records the moment
     * (`Date.now()` here, or a later one already stored) and, in the same step, moves the index that
     * SAVE_TOKENS writes (the client's, or the client+user one) into a draining set (a second one while an
     * earlier revocation's set still drains and neither is small enough to merge). Take any saveTokens S of
     * the integration (or user) authorized at or before that moment; S is one script, so it ran either:
     * - after START_REVOCATION: it read the moment and was refused, saving nothing; or
     * - before it: it wrote its tokens and their entries in that same index atomically, so they were moved
     *   into the draining set, and the drain deletes every member of that set before this call returns.
     * So a save landing between two chunks is always refused (the moment is already written); a token
     * saved afterwards for a request that began after the moment goes to the fresh index, not the draining
     * set, so legitimate issuance can neither survive wrongly nor keep the drain from ending. From
     * START_REVOCATION on, the tokens are also refused by every lookup (`find`: the set is registered and the drain
     * marker set in that same script), so a revocation interrupted midway (crash, SIGKILL, deploy, outage) leaves
     * none of them usable; its set stays registered with a lease that runs out, and is finished by whichever comes
     * first: a retry (which drains every draining set of the index), the sweep, a store's opening, or a lookup
     * that meets the marker (drain.ts); each set on its own, so a resumption finishes every revocation whose set it
     * drains, and never takes in a token saved after that revocation's moment. Each deleted refresh token's grant is
     * tombstoned in the same script call as the delete: a refresh under way that read it is refused too.
     */
    async revokeClientTokens(clientId, userId) {
      const index = userId === undefined ? keys.clientIndex(clientId) : keys.userIndex(clientId, userId);
      const revokedAt = userId === undefined ? keys.clientRevokedAt(clientId) : keys.userRevokedAt(clientId, userId);
      const start = async (): Promise<readonly unknown[]> => (await run(
        START_REVOCATION,
        [revokedAt, index, ...keys.drainingSets(index), keys.drains, keys.drainMarker],
        [String(Date.now()), RETENTION_MS, String(Date.now() + DRAIN_LEASE_MS), channel],
      )) as readonly unknown[];
      await counted(announcer, async () => {
        // -1: both draining sets were busy and too large to merge into one another, or the index into either, in one
        // script (it would hold every client of the Redis for seconds); that run moved part of the smaller into the
        // larger and recorded nothing, so it runs again (each run bounded) until the index can move.
        let held = await start();
        while (Number(held[0]) < 0) held = await start();
        for (const draining of held.slice(1)) await drains.drain(String(draining));
      });
    },
  };
}
