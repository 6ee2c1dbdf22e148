// The Redis store's revocation feed: a subscriber connection counting what the revocation scripts publish.
import type { RedisClientType } from 'redis';
import type { RevocationFeed } from '../contract.js';
import { withDeadline, type RedisConnectionLogger } from './connection.js';
import { createLoopStallWatch } from '../loop-stall-watch.js';

/**
 * The part of a node-redis v5 client a revocation feed needs (`ResilientRedisConnection.subscriberSource`): it makes
 * its own subscriber connection from it (SUBSCRIBE takes a connection for itself).
 */
export interface DuplicableRedisClient {
  duplicate(overrides?: { readonly name?: string; readonly pingInterval?: number }): RedisClientType;
}

/** The feed, the bump the store's own revocations call, and the subscriber's shutdown. */
export interface RedisRevocationFeed {
  readonly feed: RevocationFeed;
  /** Called once each revocation by this store has run (or failed), before it resolves to its caller. */
  bump(): void;
  /** UNSUBSCRIBE and QUIT the subscriber, bounded by the command timeout. Idempotent. */
  close(): Promise<void>;
}

/*
 * Why pub/sub from the scripts rather than CLIENT TRACKING (client-side caching): tracking tells of keys this
 * connection read (or of every write under a prefix, in BCAST mode), so it would need the token lookups on
 * the tracking connection (RESP3, or a redirect) or fire on every token issued as well as every revocation;
 * it would also need options on the host's client, which the store only borrows. A PUBLISH in the script
 * that deletes is announced exactly when and only when tokens are revoked, on RESP2 as on RESP3, with any
 * client. What it misses is what tracking would catch: a token key deleted by hand or evicted.
 */

/**
 * The channel every revocation script of a store publishes to. Derived from the key prefix, so stores on
 * different prefixes of one Redis do not disturb each other's caches. A pub/sub channel is not a key: on
 * Redis Cluster, PUBLISH from a script is broadcast to every node, so the hash tags of the script's keys do
 * not matter; SPUBLISH (sharded, Redis 7) would have to name a channel in the same slot as those keys.
 */
export function revocationChannel(prefix: string): string {
  return `${prefix}revocations`;
}

/** The subscriber's CLIENT SETNAME, so an operator (and the tests) can tell it in CLIENT LIST. */
export function revocationFeedConnectionName(prefix: string): string {
  return `express-oauth-router:feed:${prefix}`.replace(/[^A-Za-z0-9:._-]/g, '_').slice(0, 200);
}

/**
 * Subscribes a dedicated connection (a duplicate of the store's client) to the store's revocation channel.
 * `mark()` is `${epoch}:${count}`: `count` moves with every message (a revocation by any instance, the CLI
 * or this one) and with every revocation this store made itself, counted before it resolves, so this
 * instance never depends on its own message's round trip. While the subscriber is not yet subscribed,
 * has failed or is reconnecting, `mark()` is `null` (look every token up); each (re)subscription starts a
 * new epoch, so a cache built before a gap in which messages may have been lost is never trusted again.
 * node-redis resubscribes before it reports 'ready', so a new epoch begins only once messages flow again.
 * A link that dies without a reset (a black-holed network) is never reported by the socket, whose timeout
 * the PINGs keep resetting: so the subscriber PINGs every `timeoutMs`, and once nothing (message or PONG)
 * has been heard for twice that, `mark()` is `null` and the connection is replaced by a fresh duplicate
 * (likewise one that has not subscribed within that long, such as a server that accepts but never answers).
 * Waits up to `timeoutMs` for the first subscription; past that it goes on trying in the background.
 * @see RFC 7009 §2.1, https://redis.io/docs/latest/develop/interact/pubsub/
 */
export async function startRedisRevocationFeed(options: {
  readonly source: DuplicableRedisClient;
  readonly prefix: string;
  readonly timeoutMs: number;
  readonly logger: RedisConnectionLogger;
}): Promise<RedisRevocationFeed> {
  const { source, timeoutMs, logger } = options;
  const channel = revocationChannel(options.prefix);
  const name = revocationFeedConnectionName(options.prefix);
  const silentMs = 2 * timeoutMs;
  let epoch = 0;
  let count = 0;
  let live = false;
  let closed = false;
  let reported = false;
  /**
   * Last sign of life: a message, a PONG, a subscription; or when the current connection was made. On the
   * monotonic clock: silence is a duration, and a wall clock stepped back (NTP) would vouch for a dead link
   * as long as the step.
   */
  let heardAt = performance.now();
  let firstLive: () => void = () => undefined;
  const becameLive = new Promise<void>((resolve) => {
    firstLive = resolve;
  });

  function begin(): void {
    epoch += 1;
    heardAt = performance.now();
    live = true;
    // An operator told of the loss is told of the end of it: lookups every time stop here.
    if (reported) logger.warn('express-oauth-router: Redis revocation feed back; bearer checks use the cache again');
    reported = false;
    firstLive();
  }

  /** One subscriber connection; replaced, never reconnected by hand, so a retired one cannot race it. */
  function open(): RedisClientType {
    const sub = source.duplicate({ name, pingInterval: timeoutMs });
    const mine = (): boolean => current === sub && !closed;
    let subscribed = false;
    let subscribing = false;
    const listener = (): void => {
      count += 1;
      heardAt = performance.now();
    };
    async function subscribe(): Promise<void> {
      if (subscribing || subscribed || !mine()) return;
      subscribing = true;
      try {
        await sub.subscribe(channel, listener);
        subscribed = true;
        if (mine() && sub.isReady) begin();
      } catch (err) {
        // The connection dropped meanwhile: its next 'ready' tries again.
        if (mine()) logger.warn('express-oauth-router: Redis revocation feed could not subscribe; bearer tokens are looked up meanwhile', err);
      } finally {
        subscribing = false;
      }
    }
    // Without an 'error' listener a lost connection would crash the host; a retired connection's are ignored.
    sub.on('error', (err: unknown) => {
      if (!mine()) return;
      if (live && !reported) logger.warn('express-oauth-router: Redis revocation feed lost; bearer tokens are looked up until it is back', err);
      reported = true;
      live = false;
    });
    sub.on('end', () => {
      if (mine()) live = false;
    });
    sub.on('reconnecting', () => {
      if (mine()) live = false;
    });
    sub.on('ping-interval', () => {
      if (mine()) heardAt = performance.now();
    });
    sub.on('ready', () => {
      if (!mine()) return;
      if (subscribed) begin();
      else void subscribe();
    });
    sub.connect().catch((err: unknown) => {
      if (mine()) logger.warn('express-oauth-router: Redis revocation feed cannot connect; bearer tokens are looked up meanwhile', err);
    });
    return sub;
  }

  function retire(sub: RedisClientType): void {
    try {
      if (sub.isOpen) sub.destroy();
    } catch {
      // Already closed by the driver.
    }
  }

  /** Drops a silent or stuck connection for a fresh one, whose subscription begins a new epoch. */
  function replace(): void {
    live = false;
    if (!reported) logger.warn('express-oauth-router: Redis revocation feed silent, reconnecting; bearer tokens are looked up meanwhile');
    reported = true;
    const old = current;
    heardAt = performance.now();
    current = open();
    retire(old);
  }

  let current: RedisClientType = open();
  const stall = createLoopStallWatch();
  await withDeadline(becameLive, timeoutMs).catch(() => undefined);

  return {
    feed: {
      mark() {
        if (closed) return null;
        if (performance.now() - heardAt > silentMs) {
          // Silent while subscribed, or not subscribed this long: replaced; at most once per silentMs.
          replace();
          return null;
        }
        // Just thawed or unblocked: a message may wait unread behind the request asking (see createLoopStallWatch).
        if (stall.stalled()) return null;
        return live && current.isReady ? `${epoch}:${count}` : null;
      },
    },
    bump() {
      count += 1;
    },
    async close() {
      if (closed) return;
      closed = true;
      live = false;
      stall.stop();
      const sub = current;
      if (sub.isReady) {
        await withDeadline(sub.unsubscribe(channel).then(() => sub.close()), timeoutMs).catch(() => undefined);
      }
      retire(sub);
    },
  };
}
