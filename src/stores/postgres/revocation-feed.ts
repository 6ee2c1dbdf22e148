// The PostgreSQL store's revocation feed: a dedicated LISTEN connection counting what revocations NOTIFY.
import { createHash, randomBytes } from 'node:crypto';
import type { RevocationFeed } from '../contract.js';
import { createPostgresListenerClient, type PostgresListenerClient, type PostgresPool } from './driver.js';
import type { StoreLogger } from './sweeper.js';
import { createLoopStallWatch } from '../loop-stall-watch.js';

/** How often the listener proves it still hears its channel (a ping through it). */
const HEARTBEAT_MS = 2000;
/** Reconnection backoff: first retry, and the most it grows to. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;

/**
 * The channel a store's revocations NOTIFY, from its schema and table prefix: two stores on one database
 * (other schemas or prefixes) never disturb each other's caches. Hashed, since a channel name is an identifier
 * of at most 63 bytes; lower-case hex, so `LISTEN "…"` and `pg_notify('…')` name the same channel.
 */
export function postgresRevocationChannel(schema: string, tablePrefix: string): string {
  return `eor_revoked_${createHash('sha256').update(JSON.stringify([schema, tablePrefix])).digest('hex').slice(0, 32)}`;
}

/** The feed, the bump the store's own revocations call, and the listener's shutdown. */
export interface PostgresRevocationFeed {
  readonly feed: RevocationFeed;
  /** Called once each revocation by this store has committed (or failed), before it resolves to its caller. */
  bump(): void;
  /** Called once the store has opened: logs a listener failure held back while it was opening. */
  opened(): void;
  /** Stops the listener and its timers. Idempotent. */
  close(): Promise<void>;
}

/**
 * LISTENs on the store's channel over one dedicated connection (a pg `Client` with the pool's settings,
 * not a pooled one, so it never takes a connection from requests). `mark()` is `${epoch}:${count}`:
 * `count` moves with every notification (a revocation by any instance or the CLI, delivered at its commit)
 * and with every revocation this store made itself, counted before it resolves, so this instance never waits
 * for its own notification.
 *
 * The listener proves every 2 s that it hears its channel: a ping of its own is NOTIFYd through the channel from
 * the pool (another session; its own would come back to it even behind a pooler in transaction mode, which drops
 * everyone else's). PostgreSQL delivers a channel's notifications in commit order, so the ping's arrival proves
 * that every revocation committed before it was sent has been counted. `mark()` is `null` until the first ping arrives, while the
 * listener has failed or is reconnecting (with backoff, 100 ms doubling to 5 s), and once the last ping that
 * arrived was sent more than 2 s plus the ping's timeout ago: a connection that died silently, or a pooler that
 * does not pass notifications on, can never vouch. A ping overdue that long also drops the connection and
 * reconnects. Each (re)connection, and each lapse, starts a new epoch, so a cache built before a gap is never
 * trusted again. Waits for the first ping up to `timeoutMs`; past that it goes on trying in the background.
 * @see RFC 7009 §2.1, https://www.postgresql.org/docs/current/sql-notify.html
 */
export async function startPostgresRevocationFeed(options: {
  readonly pool: PostgresPool;
  readonly channel: string;
  readonly timeoutMs: number;
  readonly logger: StoreLogger;
  /** Ends the wait for the first ping early: the store's opening failed, and will close the feed. */
  readonly signal?: AbortSignal;
  /**
   * Called whenever the feed stops vouching (its connection lost, or its pings overdue) and when it vouches again
   * under a new epoch: what was read before may have been read from a server that has since been replaced.
   */
  readonly onGap?: () => void;
}): Promise<PostgresRevocationFeed> {
  const { pool, channel, logger, timeoutMs } = options;
  const gap = options.onGap ?? (() => undefined);
  const pingTimeoutMs = Math.min(timeoutMs, HEARTBEAT_MS);
  const staleMs = HEARTBEAT_MS + pingTimeoutMs;
  // Other instances' pings cross this channel too: each listener trusts only its own.
  const pingPrefix = `ping:${randomBytes(8).toString('hex')}:`;
  let epoch = 0;
  let count = 0;
  let client: PostgresListenerClient | null = null;
  let listening = false;
  let lastAlive = 0;
  let lapsed = false;
  let closed = false;
  let reported = false;
  let retryMs = RETRY_FIRST_MS;
  let retryTimer: NodeJS.Timeout | null = null;
  let heartbeatTimer: NodeJS.Timeout | null = null;
  /** A ping sent through the pool and not yet answered (it may be waiting for a free connection). */
  let pinging = false;
  let firstLive: () => void = () => undefined;
  const becameLive = new Promise<void>((resolve) => {
    firstLive = resolve;
  });

  // Until the store has opened (opened()), a failure is held back: if the opening fails too, its rejection says
  // it all (a CLI run against a database that is down prints one line, not a stack trace).
  let opening = true;
  let held: (() => void) | null = null;

  function report(message: string, err?: unknown): void {
    if (reported || closed) return;
    reported = true;
    const log = () => logger.warn(`express-oauth-router: PostgreSQL revocation feed ${message}`, err);
    if (opening) held = log;
    else log();
  }

  function down(lost: PostgresListenerClient, err?: unknown): void {
    if (client !== lost) return;
    report(listening ? 'lost; bearer tokens are looked up until it is back' : 'cannot listen; bearer tokens are looked up meanwhile', err);
    listening = false;
    client = null;
    gap();
    if (heartbeatTimer) clearInterval(heartbeatTimer);
    heartbeatTimer = null;
    void lost.end().catch(() => undefined);
    if (!closed && !retryTimer) {
      retryTimer = setTimeout(() => {
        retryTimer = null;
        void connect();
      }, retryMs);
      retryTimer.unref();
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    }
  }

  // Ping times are read and compared by this process only (each listener trusts its own pings), so they are on the
  // monotonic clock: a wall clock stepped back (NTP) would otherwise vouch for a silent link as long as the step.
  function ping(c: PostgresListenerClient, connectedAt: number): void {
    const now = performance.now();
    if (now - Math.max(lastAlive, connectedAt) > staleMs) {
      down(c, new Error(`no ping heard back within ${staleMs} ms`));
      return;
    }
    // Sent through the pool, not the listener: PostgreSQL hands a session its own notifications at its commit,
    // so a ping the listener sent itself comes back even behind a pooler in transaction mode (PgBouncer), whose
    // LISTEN stays on a server connection that went back to the pool and whose other notifications are dropped
    // there. Heard from another session, the ping proves the listener hears what others commit. A ping that fails
    // is not heard: the mark lapses and the listener reconnects, as for any silence. One at a time: in a pool with
    // no connection free (a host's pool without connectionTimeoutMillis waits for ever) each heartbeat would queue
    // another, and the backlog would take the connections the requests wait for once one frees.
    if (pinging) return;
    pinging = true;
    pool
      .query({ text: 'SELECT pg_notify($1, $2)', values: [channel, `${pingPrefix}${now}`], query_timeout: pingTimeoutMs })
      .catch(() => undefined)
      .finally(() => {
        pinging = false;
      });
  }

  function heard(c: PostgresListenerClient, payload: string | undefined): void {
    if (!payload) {
      count += 1;
      return;
    }
    if (!payload.startsWith(pingPrefix) || client !== c) return;
    lastAlive = Math.max(lastAlive, Number(payload.slice(pingPrefix.length)));
    if (listening) return;
    // Listening from here on: every revocation committed since LISTEN is notified, and earlier ones are in the
    // snapshot of any lookup that starts now.
    epoch += 1;
    lapsed = false;
    listening = true;
    gap();
    // An operator told of the loss is told of the end of it: lookups every time stop here.
    // (A loss held back while the store opened is dropped instead: it is over before anyone was told.)
    if (reported && held !== null) held = null;
    else if (reported && !closed) logger.warn('express-oauth-router: PostgreSQL revocation feed back; bearer checks use the cache again');
    reported = false;
    retryMs = RETRY_FIRST_MS;
    firstLive();
  }

  async function connect(): Promise<void> {
    if (closed) return;
    let c: PostgresListenerClient;
    try {
      // Named after the channel, so an operator can tell it in pg_stat_activity (and again once connected, below).
      c = await createPostgresListenerClient(pool, channel);
    } catch (err) {
      report('cannot start; bearer tokens are looked up every time', err);
      return;
    }
    // Closed while the driver loaded: a client connected now would never be ended, and would hold the process open.
    if (closed) return;
    client = c;
    // Without an 'error' listener a lost connection would crash the host.
    c.on('error', (err) => down(c, err));
    c.on('end', () => down(c));
    c.on('notification', (message) => heard(c, message.payload));
    try {
      await c.connect();
      // Named again once connected: an `application_name` in the pool's connection string outranks the one the client
      // is given (node-postgres lets the URL's parameters override its config), and the operator ending the app's
      // connections by that name would end the listener with them. The channel is lower-case hex, safe to splice.
      await c.query(`SET application_name = '${channel}'`);
      await c.query(`LISTEN "${channel}"`);
      if (client !== c || closed) return;
      const connectedAt = performance.now();
      heartbeatTimer = setInterval(() => ping(c, connectedAt), HEARTBEAT_MS);
      heartbeatTimer.unref();
      ping(c, connectedAt);
    } catch (err) {
      down(c, err);
    }
  }

  const stall = createLoopStallWatch();
  void connect();
  options.signal?.addEventListener('abort', () => firstLive(), { once: true });
  if (options.signal?.aborted) firstLive();
  let deadline: NodeJS.Timeout | undefined;
  // The deadline stays ref'd: the store's opening awaits it. Unref'd, a process with nothing else open (a CLI
  // run against a database that is down, whose retry timer is unref'd) would exit with this promise unsettled.
  await Promise.race([
    becameLive,
    new Promise<void>((resolve) => {
      deadline = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(deadline);

  return {
    feed: {
      mark() {
        if (!listening) return null;
        // Just thawed or unblocked: a notification may wait unread behind the request asking (see createLoopStallWatch).
        if (stall.stalled()) return null;
        if (performance.now() - lastAlive > staleMs) {
          if (!lapsed) gap();
          lapsed = true;
          return null;
        }
        if (lapsed) {
          // Heard again without a reconnection: still, nothing cached across the lapse is trusted.
          lapsed = false;
          epoch += 1;
          gap();
        }
        return `${epoch}:${count}`;
      },
    },
    bump() {
      count += 1;
    },
    opened() {
      opening = false;
      const log = held;
      held = null;
      if (!closed) log?.();
    },
    async close() {
      if (closed) return;
      closed = true;
      listening = false;
      stall.stop();
      firstLive();
      if (retryTimer) clearTimeout(retryTimer);
      if (heartbeatTimer) clearInterval(heartbeatTimer);
      const c = client;
      client = null;
      if (!c) return;
      // Bounded: a server that stopped answering must not hold up the host's shutdown.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      });
      await Promise.race([c.end().catch(() => undefined), late]);
      clearTimeout(timer);
    },
  };
}
