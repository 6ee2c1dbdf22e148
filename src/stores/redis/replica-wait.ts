// Opt-in WAIT after each write script: a write only Redis's primary holds is reported unavailable, not acknowledged.
import { StoreUnavailableError } from '../store-unavailable-error.js';
import type { RunScript } from './scripts.js';

/** How many replicas must hold a write, and how long Redis may wait for them (`WAIT numreplicas timeout`). */
export interface ReplicaWaitOptions {
  /** Replicas that must have received each write (at least 1). */
  readonly replicas: number;
  /** Milliseconds Redis waits for them (at least 1: `WAIT … 0` would wait forever); below `commandTimeoutMs`. */
  readonly timeoutMs: number;
}

/** Sends one command on the connection, and to the node, that holds `routingKey`'s slot. */
export type SendByKey = (routingKey: string, args: readonly string[]) => Promise<unknown>;

/** Validates `waitForReplicas` against the command timeout; returns it, or null when not given. */
export function checkReplicaWait(
  given: ReplicaWaitOptions | undefined, commandTimeoutMs: number,
): ReplicaWaitOptions | null {
  if (given === undefined) return null;
  const { replicas, timeoutMs } = given;
  if (!Number.isInteger(replicas) || replicas < 1) {
    throw new TypeError(`createRedisStore: option "waitForReplicas.replicas" must be an integer ≥ 1 (got ${replicas})`);
  }
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs >= commandTimeoutMs) {
    throw new TypeError(
      `createRedisStore: option "waitForReplicas.timeoutMs" must be an integer of milliseconds ≥ 1 and below "commandTimeoutMs" (${commandTimeoutMs}) (got ${timeoutMs})`,
    );
  }
  return { replicas, timeoutMs };
}

/** What Redis answers WAIT on a replica (`slave` before Redis 5): the node took the write as a primary and was demoted before the WAIT. */
const WAIT_ON_REPLICA = /^ERR WAIT cannot be used with (?:replica|slave) instances/;

/**
 * A WAIT refused because its node is a replica now (a failover, planned or not, between the write and the WAIT) is an
 * unconfirmed write, as NOREPLICAS is: a 503 the client may retry, not a bug's 500. Anything else goes on unchanged.
 */
function demotedToUnavailable(err: unknown): never {
  if (err instanceof Error && WAIT_ON_REPLICA.test(err.message)) {
    throw new StoreUnavailableError('Redis store unavailable (READONLY: the node that took the write is a replica now)', { cause: err });
  }
  throw err;
}

/**
 * Runs each script, then `WAIT replicas timeoutMs` on the same connection and node (routed by the script's first
 * key, which names its slot), and rejects with StoreUnavailableError (the router answers 503) when fewer replicas
 * acknowledged in time. Redis replicates asynchronously: a primary that acknowledged a revocation, a consumed code
 * or a token save and then died before its replica received it loses the write when the replica is promoted, and a
 * revoked token or used code works again. WAIT counts the replicas that hold every earlier write of the connection,
 * so a concurrent request's write only makes it wait longer, never less. A write reported unavailable may still be
 * on the primary (as after any timeout): a revocation the caller retries is idempotent, and an unanswered token
 * save is a token whose value no one holds. A slot map re-read between the script and the WAIT sends the WAIT to the
 * promoted replica, which has no replica of its own yet, so it too answers fewer than asked.
 * @see https://redis.io/docs/latest/commands/wait/
 */
export function waitForReplicas(run: RunScript, sendByKey: SendByKey, options: ReplicaWaitOptions): RunScript {
  const wait = ['WAIT', String(options.replicas), String(options.timeoutMs)];
  return async (script, keys, args) => {
    const reply = await run(script, keys, args);
    const acknowledged = Number(await sendByKey(keys[0] ?? '', wait).catch(demotedToUnavailable));
    if (!(acknowledged >= options.replicas)) {
      // Named after Redis's own refusal (min-replicas-to-write), which the router already counts as an outage.
      throw new StoreUnavailableError(`Redis store unavailable (NOREPLICAS: ${acknowledged} of ${options.replicas} replicas acknowledged the write)`);
    }
    return reply;
  };
}
