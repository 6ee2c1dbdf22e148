// Opt-in WAIT after each write script: a write only Redis's primary holds is reported unavailable, not acknowledged.
import { StoreUnavailableError } from '../store-unavailable-error.js';
import { rethrowRedisError } from './errors.js';
import { createScriptRunner, type RunScript } from './scripts.js';

/** How many replicas must hold a write, and how long Redis may wait for them (`WAIT numreplicas timeout`). */
export interface ReplicaWaitOptions {
  /** Replicas that must have received each write (at least 1). */
  readonly replicas: number;
  /** Milliseconds Redis waits for them (at least 1: `WAIT … 0` would wait forever); below `commandTimeoutMs`. */
  readonly timeoutMs: number;
}

/**
 * Sends a script (`EVALSHA|EVAL …`, routed by `routingKey`) and then `wait` on the connection that runs the script.
 * Rejects with the script's error; else resolves with its reply and the WAIT's outcome.
 */
export type SendWithWait = (
  routingKey: string, script: readonly string[], wait: readonly string[],
) => Promise<{ readonly reply: unknown; readonly acknowledged: PromiseSettledResult<unknown> }>;

/**
 * Sends the script and its WAIT on one connection in the same turn: node-redis writes both in one batch, the WAIT
 * right after the script. The script's error is passed on as soon as it comes (a MOVED or ASK there is retried by
 * the caller on another node); the WAIT's outcome is then read (its answer comes after the script's, on one socket).
 */
export async function sendWithWaitOn(
  send: (args: readonly string[]) => Promise<unknown>, script: readonly string[], wait: readonly string[],
): ReturnType<SendWithWait> {
  const written = send(script);
  const waited: Promise<PromiseSettledResult<unknown>> = send(wait).then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
  const reply = await written;
  return { reply, acknowledged: await waited };
}

/** `createRedisStore`'s `commandTimeoutMs` when not given: also the bound on a URL's `wait_timeout_ms`, which cannot set it. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5000;

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
  return rethrowRedisError(err);
}

/**
 * A script runner that sends `WAIT replicas timeoutMs` with every script, in the same turn, to the node that runs the
 * script (`sendWithWait`: on a cluster, the node a MOVED or ASK sent the script to, see clusterScriptWithWait), and
 * rejects with StoreUnavailableError (the router answers 503) when fewer replicas acknowledged in time. Redis
 * replicates asynchronously: a primary that acknowledged a revocation, a consumed code or a token save and then died
 * before its replica received it loses the write when the replica is promoted, and a revoked token or used code works
 * again.
 *
 * WAIT counts the replicas that hold every earlier write of its own connection. Sent in the turn the script is sent,
 * node-redis writes both in one batch on one socket, so the WAIT is the script's: sent only once the script's reply
 * came, it could go out on a new connection (a client with an offline queue that reconnected in between), which has
 * written nothing, and count every connected replica at once. A concurrent request's write only makes it wait longer,
 * never less. A write reported unavailable may still be on the primary (as after any timeout): a revocation the
 * caller retries is idempotent, and an unanswered token save is a token whose value no one holds.
 * @see https://redis.io/docs/latest/commands/wait/
 */
export function confirmedScriptRunner(sendWithWait: SendWithWait, options: ReplicaWaitOptions): RunScript {
  const wait = ['WAIT', String(options.replicas), String(options.timeoutMs)];
  return createScriptRunner(async (args) => {
    // EVALSHA|EVAL sha|source numkeys key…: every script names its keys, the first of which routes it.
    const routingKey = args[2] !== '0' ? (args[3] ?? '') : '';
    // A NOSCRIPT rejects here and goes back to the runner, which sends EVAL with a WAIT of its own.
    const { reply, acknowledged } = await sendWithWait(routingKey, args, wait);
    if (acknowledged.status === 'rejected') return demotedToUnavailable(acknowledged.reason);
    if (!(Number(acknowledged.value) >= options.replicas)) {
      // Named after Redis's own refusal (min-replicas-to-write), which the router already counts as an outage.
      throw new StoreUnavailableError(`Redis store unavailable (NOREPLICAS: ${String(acknowledged.value)} of ${options.replicas} replicas acknowledged the write)`);
    }
    return reply;
  });
}
