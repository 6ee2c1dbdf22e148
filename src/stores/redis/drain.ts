// Drains a revocation's draining set 500 tokens a script, and resumes drains whose drainer died midway.
import { STORE_POLICY } from '../store-policy.js';
import { grantIdOf, type RedisKeys } from './codec.js';
import { ADOPT_DRAIN, CLAIM_DRAIN, DRAIN_CHUNK, DRAIN_LEASE_MS, type RunScript } from './scripts.js';

/** Index members handled per script call, so revoking a million tokens never blocks Redis in one script. */
export const REVOKE_CHUNK = 500;

/** Tombstones and revocation moments live this long (as ARGV of the scripts that write them). */
export const RETENTION_MS = String(STORE_POLICY.revocationRetentionMs);

/** Registered draining sets one resumption claims per registry read. */
const CLAIM_BATCH = 16;

/** Least time between two resumptions a lookup starts: each reads the registry once. */
const RESUME_EVERY_MS = 5_000;

/** The draining sets of a store's revocations: drained by their revocation, or by whoever finds them abandoned. */
export interface RedisDrains {
  /** Empties `draining` (a registered set this caller holds the lease on), 500 tokens a script. */
  drain(draining: string): Promise<void>;
  /**
   * Registers a draining set found unregistered (left by a version before 0.3.0, which had no registry) with a lease
   * already run out, so lookups refuse its tokens and the next `resumeAbandoned` drains it; resolves whether it did.
   */
  adopt(draining: string): Promise<boolean>;
  /** Drains every registered set whose drainer's lease ran out; resolves when done. */
  resumeAbandoned(): Promise<void>;
  /**
   * Starts `resumeAbandoned` in the background unless one runs or one started within the last 5 s: a lookup that
   * found the drain marker calls it, so a cluster (which has no sweep) finishes a dead instance's drain too.
   */
  poke(): void;
  /** Stops `poke` from starting more, and resolves once the resumption it started (if any) has ended; for `close()`. */
  close(): Promise<void>;
}

/**
 * The drain of a revocation by `revokeClientTokens`, and its resumption. START_REVOCATION registers the draining set
 * (each of an index's two, `keys.drainingSets`, is registered and drained on its own) in `keys.drains` with a lease
 * (`DRAIN_LEASE_MS`) that each chunk renews; a process that dies midway leaves the set registered with a lease that
 * runs out, and the next `resumeAbandoned` (the sweep on a plain Redis, the store's opening, or a lookup that met the
 * drain marker) claims it and finishes the drain. Its tokens were refused by every
 * lookup from the revocation's first step on (FIND_UNDRAINED), so this reclaims storage, and tombstones the grants of
 * its refresh tokens, which SAVE_TOKENS refused meanwhile by the draining set. A revocation's own drain runs its
 * scripts with `run` (confirmed by replicas under `waitForReplicas`, before the revocation resolves); a resumption and
 * an adoption with `unconfirmed`, as the sweep's pruning: the tokens are refused already (by the set START_REVOCATION
 * registered, confirmed), and a step a failover loses is made again, the set staying registered until it is empty; a
 * resumption refused while a replica lags would stop every sweep.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.4 (refresh tokens of a revoked authorization).
 */
export function createRedisDrains(
  keys: RedisKeys,
  run: RunScript,
  unconfirmed: RunScript,
  send: (args: readonly string[]) => Promise<unknown>,
  channel: string,
  onResumeError: (err: unknown) => void,
): RedisDrains {
  const leaseUntil = (): string => String(Date.now() + DRAIN_LEASE_MS);

  /** One DRAIN_CHUNK call over the first members of `draining`; resolves how many are left. */
  async function drainChunk(draining: string, runner: RunScript): Promise<number> {
    const members = (await send(['ZRANGE', draining, '0', String(REVOKE_CHUNK - 1)])) as string[];
    // Tokens are written once and never changed, so the grant id read here is the one DRAIN_CHUNK deletes.
    const refresh = members.filter((key) => keys.isRefreshToken(key));
    const values = refresh.length > 0 ? ((await send(['MGET', ...refresh])) as (string | null)[]) : [];
    const stored = new Map(refresh.map((key, i) => [key, values[i] ?? null]));
    const tombstones: string[] = [];
    const flags = members.map((key) => {
      const json = stored.get(key);
      if (json === undefined || json === null) return '0';
      tombstones.push(keys.revokedGrant(grantIdOf(json)));
      return '1';
    });
    // Run even with no members: the script unregisters an emptied set (another drainer's last chunk may have emptied it).
    return Number(await runner(DRAIN_CHUNK, [draining, keys.drains, keys.drainMarker, ...members, ...tombstones], [RETENTION_MS, channel, leaseUntil(), ...flags]));
  }

  async function drainWith(runner: RunScript, draining: string): Promise<void> {
    while ((await drainChunk(draining, runner)) > 0);
  }

  async function resumeAbandoned(): Promise<void> {
    const seen = new Set<string>();
    for (;;) {
      const expired = (await send(['ZRANGE', keys.drains, '-inf', String(Date.now()), 'BYSCORE', 'LIMIT', '0', String(CLAIM_BATCH)])) as string[];
      const fresh = expired.filter((d) => !seen.has(d));
      if (fresh.length === 0) return;
      for (const draining of fresh) {
        seen.add(draining);
        const claimed = Number(await unconfirmed(CLAIM_DRAIN, [keys.drains, keys.drainMarker, draining], [String(Date.now()), leaseUntil()]));
        if (claimed === 1) await drainWith(unconfirmed, draining);
      }
    }
  }

  async function adopt(draining: string): Promise<boolean> {
    return Number(await unconfirmed(ADOPT_DRAIN, [draining, keys.drains, keys.drainMarker], ['0', channel])) === 1;
  }

  let running: Promise<void> | null = null;
  let lastStart = -Infinity;
  let closed = false;
  return {
    drain: (draining) => drainWith(run, draining),
    adopt,
    resumeAbandoned,
    poke() {
      const now = performance.now();
      if (closed || running || now - lastStart < RESUME_EVERY_MS) return;
      lastStart = now;
      running = resumeAbandoned().catch(onResumeError).finally(() => {
        running = null;
      });
    },
    async close() {
      closed = true;
      await running;
    },
  };
}
