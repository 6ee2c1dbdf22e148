// A node-redis connection that fails fast, reconnects, and drops a connection that has gone silent.
// Types only: `redis` ships its own, and whoever uses this module has it installed (loaded below on first use).
import type { RedisClientType, RedisClusterType } from 'redis';
import { importDriver, type StoreDriver } from '../missing-driver.js';
import { StoreUnavailableError } from '../store-unavailable-error.js';
import type { DuplicableRedisClient } from './revocation-feed.js';
import { clusterCredentials } from './cluster-credentials.js';
import { clusterNodeReconnector } from './cluster-node-reconnect.js';
import { joinAttempt } from './join-attempt.js';

const REDIS: StoreDriver = { store: 'Redis', name: 'redis', major: 5 };

/** Where connection trouble is reported: once per outage, never per retry. */
export interface RedisConnectionLogger {
  warn(message: string, error?: unknown): void;
}

/** A connected client and what its owner needs besides commands. */
export interface ResilientRedisConnection {
  readonly client: RedisClientType;
  /**
   * Call after a command timed out. node-redis notices a dead socket only when it closes, so on a
   * black-holed connection every command would time out for ever: a PING under the same deadline tells a
   * slow command from a hung connection, and a hung one is dropped and reconnected.
   */
  probe(): void;
  /**
   * Reconnects now if the connection was lost (the client is closed): the attempt, which resolves once the client is
   * ready and rejects with its failure. With an attempt already under way, that one, followed by one begun after it if
   * it fails (joinAttempt): it may have begun before Redis answered again. `null` when connected or closed by
   * `close()`. Call it when a command is about to go out on a lost connection: the client reconnects by itself too,
   * but only on its backoff (50 ms doubling to 2 s), whose sleep nothing can cut short, so a Redis that answers again
   * would otherwise see every call fail at once until the sleep ends.
   */
  reconnect(): Promise<void> | null;
  /**
   * Where a revocation feed makes its subscriber connections: duplicates of the client (same URL, timeouts, no
   * offline queue) that reconnect by themselves on the backoff, and resubscribe as node-redis does.
   */
  readonly subscriberSource: DuplicableRedisClient;
  /** QUIT, bounded by the timeout (a hung server never answers it), then drop the socket. Idempotent. */
  close(): Promise<void>;
}

/** The wait before reconnection attempt `retries` (from 0): 50 ms, doubling to 2 s, as node-redis's own backoff. */
export function reconnectDelay(retries: number): number {
  return Math.min(50 * 2 ** retries, 2000);
}

/** Races a command against a deadline: node-redis's own `timeout` stops counting once a command is written. */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreUnavailableError(`Redis store unavailable (no answer within ${ms} ms)`)),
      ms,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * Connects a client configured for serving requests during outages: no offline queue (commands fail at once
 * while disconnected, so requests answer 503 instead of piling up), a connect timeout, PINGs that keep idle
 * connections alive and a socket timeout that closes silent ones. The first connect failing rejects (the caller
 * learns Redis is down). Once connected, a lost connection is made again here, not by node-redis's reconnect loop:
 * that loop sleeps through its backoff and cannot be woken, so after an outage every command failed at once until
 * the sleep ended (up to 2 s), after a handshake that the outage swallowed had run out its socket timeout (three
 * times `timeoutMs`): hundreds of 503s from a Redis that was answering again. Here one attempt runs at a time,
 * started by `reconnect()` (a command about to go out) or, when none comes, by the same backoff in the
 * background; a connection whose handshake gets no answer within `timeoutMs` is dropped, so the attempt under way
 * when a hang ends is over within that.
 * Used by the Redis store, and by hosts for their session store so both behave alike in an outage.
 * @throws the driver's connection error when Redis cannot be reached at start (StoreUnavailableError when it
 *   accepts but does not answer the handshake); Error "The Redis store needs redis: npm install redis@5" when the
 *   driver is not installed (it is loaded here, not when imported).
 */
export async function connectResilientRedis(options: {
  readonly url: string;
  readonly timeoutMs: number;
  readonly logger: RedisConnectionLogger;
  /** Prefix of log lines, e.g. `express-oauth-router: Redis`. */
  readonly label: string;
}): Promise<ResilientRedisConnection> {
  const { timeoutMs, logger, label } = options;
  let connected = false;
  let reported = false;
  let closed = false;
  const { createClient } = await importDriver<typeof import('redis')>(REDIS);
  const socket = { connectTimeout: timeoutMs, socketTimeout: timeoutMs * 3 };
  const client: RedisClientType = createClient({
    url: options.url,
    disableOfflineQueue: true,
    pingInterval: timeoutMs,
    // node-redis never retries: the first connect rejects, and a lost connection leaves the client closed for
    // `reconnect()` below (a retry of node-redis's own would race an attempt started here).
    socket: { ...socket, reconnectStrategy: (_retries: number, cause: Error) => cause },
  });

  /** The reconnection under way, the background one waiting for its turn, and the failures in a row. */
  let attempt: Promise<void> | null = null;
  let backgroundTimer: ReturnType<typeof setTimeout> | undefined;
  let retries = 0;
  /** Set when the handshake deadline dropped the connection: what the attempt failed of. */
  let handshakeExpired: StoreUnavailableError | null = null;
  let handshakeTimer: ReturnType<typeof setTimeout> | undefined;

  /** Schedules a background attempt after the backoff, unless one is under way or waiting. */
  function retryLater(): void {
    if (closed || attempt !== null || backgroundTimer !== undefined) return;
    backgroundTimer = setTimeout(() => {
      backgroundTimer = undefined;
      reconnect()?.catch(() => undefined);
    }, reconnectDelay(retries));
    retries += 1;
    // Housekeeping only: a host that has let go of everything else may exit.
    backgroundTimer.unref();
  }

  function reconnect(): Promise<void> | null {
    if (closed) return null;
    // A command that came while an attempt runs was refused at once ("The client is offline") though Redis was back.
    if (attempt !== null) return joinAttempt(attempt, () => (closed ? undefined : attempt ?? begin() ?? undefined));
    return begin();
  }

  /** A new attempt, unless the client is open (connected, or being connected). */
  function begin(): Promise<void> | null {
    if (client.isOpen) return null;
    clearTimeout(backgroundTimer);
    backgroundTimer = undefined;
    handshakeExpired = null;
    const started = (async () => {
      try {
        await client.connect();
        retries = 0;
      } catch (err) {
        throw handshakeExpired ?? err;
      } finally {
        // The deadline of this attempt's handshake must not fire into the next attempt's TCP connect.
        clearTimeout(handshakeTimer);
        attempt = null;
      }
    })();
    attempt = started;
    // A failed attempt leaves the client closed: the next command, or the backoff, tries again.
    started.catch(() => retryLater());
    return started;
  }

  // The TCP connect is bounded by `connectTimeout`; the handshake after it (CLIENT SETINFO, AUTH, SELECT) only by the
  // socket timeout, three times longer, which a connection the outage swallowed (accepted, never answered) runs out.
  client.on('connect', () => {
    clearTimeout(handshakeTimer);
    handshakeTimer = setTimeout(() => {
      if (closed || client.isReady || !client.isOpen) return;
      handshakeExpired = new StoreUnavailableError(`Redis store unavailable (no answer to the connection handshake within ${timeoutMs} ms)`);
      client.destroy();
    }, timeoutMs);
  });
  client.on('ready', () => {
    clearTimeout(handshakeTimer);
    connected = true;
    reported = false;
  });
  // Without a listener an 'error' event would crash the host.
  client.on('error', (err: unknown) => {
    // A handshake dropped by the deadline fails inside node-redis with a TypeError of its own: say what happened.
    if (connected && !reported) logger.warn(`${label} connection lost, reconnecting`, handshakeExpired ?? err);
    reported = true;
    // A connection that was serving is gone for good (node-redis does not retry): make it again.
    if (connected && !client.isOpen) retryLater();
  });
  try {
    handshakeExpired = null;
    await client.connect();
  } catch (err) {
    clearTimeout(handshakeTimer);
    // A client whose reconnect strategy gave up is already closed, and destroy() would throw.
    if (client.isOpen) client.destroy();
    throw handshakeExpired ?? err;
  }

  let probing = false;
  return {
    client,
    probe() {
      if (probing || closed) return;
      probing = true;
      withDeadline(client.sendCommand(['PING']), timeoutMs)
        .then(
          () => undefined,
          async (err: unknown) => {
            // A quick rejection means the client already knows it is disconnected and reconnects by itself;
            // only a PING that gets no answer at all shows a hung connection.
            if (closed || !(err instanceof StoreUnavailableError)) return;
            logger.warn(`${label} connection unresponsive, reconnecting`);
            if (client.isReady) client.destroy();
            await reconnect();
          },
        )
        .catch(() => undefined)
        .finally(() => {
          probing = false;
        });
    },
    reconnect,
    subscriberSource: {
      duplicate: (overrides = {}) => client.duplicate({
        ...overrides,
        socket: { ...socket, reconnectStrategy: (retries: number) => reconnectDelay(retries) },
      }),
    },
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(backgroundTimer);
      clearTimeout(handshakeTimer);
      // A connection still being made holds no call (none is queued while it is not ready), and its close() would wait
      // for the handshake's answers: with the deadline cleared, only the socket timeout would end it, after the close.
      if (attempt !== null && client.isOpen) client.destroy();
      await withDeadline(client.isOpen ? client.close() : Promise.resolve(), timeoutMs).catch(() => undefined);
      if (client.isOpen) client.destroy();
    },
  };
}

/** A connected node-redis cluster client the store owns, and its shutdown. */
export interface ResilientRedisClusterConnection {
  readonly cluster: RedisClusterType;
  /**
   * Reconnects now the connection of the node serving `firstKey` if it was lost and no attempt is under way: the
   * attempt, which resolves once it is ready; `null` for a keyless command. Call it before a command goes out, as
   * ResilientRedisConnection's `reconnect()`: a lost node connection is made again by nothing else but a backoff.
   */
  reconnect(firstKey: string | undefined, isReadonly: boolean): Promise<void> | null;
  /** Call after a command for `firstKey` timed out: its node is PINGed, and a hung connection dropped and made again. */
  probe(firstKey: string | undefined, isReadonly: boolean): void;
  /** Closes every node connection, bounded by the timeout. Idempotent. */
  close(): Promise<void>;
}

/** Whether the cluster's root nodes are given as `rediss://` URLs: then every node connection uses TLS. */
function usesTls(rootNodes: readonly string[]): boolean {
  return rootNodes.some((url) => /^rediss:/i.test(url));
}

/**
 * Connects a node-redis cluster client (`createCluster`) with the same outage behaviour as
 * connectResilientRedis for every node: no offline queue, a connect timeout, keep-alive PINGs, a socket
 * timeout, and, once connected, reconnection on demand (clusterNodeReconnector: a command for a lost node's slots
 * makes its connection again, a hung one is dropped, a handshake unanswered within `timeoutMs` given up), with the
 * backoff in the background. node-redis follows MOVED/ASK redirects and re-reads the
 * slot map on them; a master that died sends neither, so the map is also re-read whenever a node's connection
 * fails (`rediscoverOnNodeError`): once its replica is promoted, requests for its slots go there, where they
 * would answer 503 until the dead node came back. The user and password
 * of the first root-node URL that has them authenticate every node connection (see clusterCredentials), and
 * `rediss://` root nodes make every node connection TLS (Node's trust store: NODE_EXTRA_CA_CERTS for a private CA).
 * @throws the driver's error when no root node can be reached; Error "The Redis store needs redis: …"
 *   when the driver is not installed.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/
 */
export async function connectResilientRedisCluster(options: {
  readonly rootNodes: readonly string[];
  /** Where to reach each node the cluster announces (`host:port` → address), e.g. behind NAT. */
  readonly nodeAddressMap?: Readonly<Record<string, { readonly host: string; readonly port: number }>>;
  readonly timeoutMs: number;
  readonly logger: RedisConnectionLogger;
  readonly label: string;
}): Promise<ResilientRedisClusterConnection> {
  const { timeoutMs, logger, label } = options;
  const { createCluster } = await importDriver<typeof import('redis')>(REDIS);
  let connected = false;
  let reported = false;
  const cluster = createCluster({
    rootNodes: options.rootNodes.map((url) => ({ url })),
    ...(options.nodeAddressMap ? { nodeAddressMap: { ...options.nodeAddressMap } } : {}),
    defaults: {
      ...clusterCredentials(options.rootNodes),
      disableOfflineQueue: true,
      pingInterval: timeoutMs,
      socket: {
        // Every node connection is made from these defaults, not from a root URL: `rediss://` roots mean TLS to all.
        ...(usesTls(options.rootNodes) ? { tls: true as const } : {}),
        connectTimeout: timeoutMs,
        socketTimeout: timeoutMs * 3,
        // node-redis never retries: the first connect rejects (an unreachable cluster fails at once), and a lost node
        // connection stays closed for the reconnector below (a retry of node-redis's own would race its attempt). A
        // client the reconnector cannot read (another driver version) keeps node-redis's backoff once connected.
        reconnectStrategy: (retries: number, cause: Error) => (connected && !reconnector.supported ? reconnectDelay(retries) : cause),
      },
    },
  }) as unknown as RedisClusterType;
  // Without listeners an 'error' event would crash the host; node errors are reported once per outage.
  const report = (err: unknown): void => {
    if (connected && !reported) logger.warn(`${label} cluster connection lost, reconnecting`, err);
    reported = true;
  };
  cluster.on('error', report);
  cluster.on('node-error', report);
  let closed = false;
  const rediscovery = rediscoverOnNodeError(cluster, () => closed || !connected);
  cluster.on('node-error', rediscovery.onNodeError);
  const reconnector = clusterNodeReconnector(cluster, {
    timeoutMs, logger, label, onReady: () => {
      reported = false;
    },
  });
  cluster.on('node-error', () => {
    if (connected) reconnector.reconnectLost();
  });
  cluster.on('node-ready', () => {
    reported = false;
  });
  try {
    await cluster.connect();
    connected = true;
    // A master down when the store starts failed its first connection and, before the store was connected, was not
    // retried: node-redis keeps that closed connection for the master's slots, which emits no `node-error` (so no
    // re-read of the slot map) and answered 503 for as long as the process ran, the replica's promotion and the node's
    // return included. Reconnected now, it fails like any lost node: its commands fail (503), each failed attempt
    // emits `node-error` (the map is read again, so a promoted replica takes over), and the node's return serves them.
    reconnector.reconnectLost();
  } catch (err) {
    reconnector.stop();
    try {
      cluster.destroy();
    } catch {
      // Never opened.
    }
    throw err;
  }
  return {
    cluster,
    reconnect: (firstKey, isReadonly) => reconnector.reconnect(firstKey, isReadonly),
    probe: (firstKey, isReadonly) => reconnector.probe(firstKey, isReadonly),
    async close() {
      if (closed) return;
      closed = true;
      reconnector.stop();
      // A re-read under way would connect to the nodes of the map it reads after the close: let it end first.
      await withDeadline(rediscovery.settled(), timeoutMs).catch(() => undefined);
      await withDeadline(cluster.isOpen ? cluster.close() : Promise.resolve(), timeoutMs).catch(() => undefined);
      try {
        if (cluster.isOpen) cluster.destroy();
      } catch {
        // Already closed.
      }
    },
  };
}

/** What `rediscoverOnNodeError` reads of node-redis 5's cluster: its slot manager, which it does not type. */
interface ClusterSlotsLike {
  readonly masters?: readonly {
    readonly client?: { readonly isReady?: boolean };
  }[];
  readonly _slots?: { rediscover?(startWith: unknown): Promise<void> };
}

/**
 * A `node-error` listener that makes the cluster client read the slot map again, starting from a node that is
 * up (or, failing that, from the root nodes). node-redis 5 re-reads it only on a MOVED or ASK reply, and with no
 * offline queue a dead master's commands fail at once, so no such reply ever comes (redis/node-redis#2806): every
 * request for its slots answered 503 while its replica had long been promoted, until the node came back. Each
 * failed reconnection of the dead node emits `node-error` (backoff up to 2 s), so the map is read again within
 * that of the promotion; one re-read runs at a time, and a read before the promotion finds the old map and changes
 * nothing. None starts while `stopped()` (before the connection is made, or once its close began: node-redis would
 * connect the nodes of the map it read to a closed client), and `settled()` lets a close wait for the one under way.
 * A client without the slot manager (another driver version) is left as it is.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/ (failover, slot map)
 */
export function rediscoverOnNodeError(
  cluster: unknown, stopped: () => boolean,
): { readonly onNodeError: () => void; settled(): Promise<void> } {
  const { _slots: slots } = cluster as ClusterSlotsLike;
  let running: Promise<void> | undefined;
  return {
    onNodeError() {
      // Not before the cluster is connected, nor once its close began: node-redis would connect the nodes it reads.
      if (running !== undefined || stopped() || typeof slots?.rediscover !== 'function') return;
      const masters = (cluster as ClusterSlotsLike).masters ?? [];
      // A node to ask first: one that is up, else any (asking it fails, and node-redis goes on to the root nodes).
      const start = masters.find((node) => node.client?.isReady === true)?.client ?? masters[0]?.client;
      if (start === undefined) return;
      // Unreachable root nodes reject; the next failed reconnection tries again.
      running = slots.rediscover(start).catch(() => undefined).finally(() => {
        running = undefined;
      });
    },
    settled: () => running ?? Promise.resolve(),
  };
}

/**
 * Where the revocation feed of a cluster store makes its subscriber connections: a plain connection to one
 * node, each new one to the next listed node. A PUBLISH on a Redis Cluster (from a script too) is broadcast
 * to every node, so any node hears every revocation; rotating means a feed whose node is down finds another
 * when it replaces its connection (until then `mark()` is `null` and every token is looked up).
 */
export async function clusterSubscriberSource(rootNodes: readonly string[], timeoutMs: number): Promise<DuplicableRedisClient> {
  const { createClient } = await importDriver<typeof import('redis')>(REDIS);
  let next = 0;
  return {
    duplicate(overrides = {}) {
      const url = rootNodes[next % rootNodes.length] ?? '';
      next += 1;
      return createClient({
        url,
        ...overrides,
        disableOfflineQueue: true,
        socket: {
          connectTimeout: timeoutMs,
          socketTimeout: timeoutMs * 3,
          reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
        },
      }) as unknown as RedisClientType;
    },
  };
}
