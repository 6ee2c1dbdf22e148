// Redis Store: shared state for many API instances, with native TTLs and Lua for every atomic step.
import type { AdministrationClientStore, CompleteStore, ConsentStore, OAuthClient } from '../contract.js';
import { compareClients, compareConsents, definedClientChanges } from '../store-policy.js';
import { integrationCopiesOption } from '../integration-copies-option.js';
import { createRevisionCopies, type RevisionCopies } from '../revision-copies.js';
import {
  CLIENT_FIELDS,
  clientRevisionOf,
  createRedisKeys,
  decodeClientFields,
  decodeConsent,
  decodeLegacyClient,
  encodeClientFields,
  encodeConsent,
  type RedisKeys,
} from './codec.js';
import { rethrowRedisError } from './errors.js';
import { createRedisCodeStore, createRedisTokenStore, type RedisSend } from './grants.js';
import {
  CREATE_CLIENT,
  createScriptRunner,
  DELETE_CLIENT,
  DELETE_INDEXED,
  MIGRATE_CLIENT,
  PUT_INDEXED,
  SET_CLIENT_DISABLED,
  UPDATE_CLIENT,
  type RunScript,
} from './scripts.js';
import { createRedisKeyStore } from './keys.js';
import {
  checkReplicaWait, confirmedScriptRunner, DEFAULT_COMMAND_TIMEOUT_MS, sendWithWaitOn, type ReplicaWaitOptions, type SendWithWait,
} from './replica-wait.js';
import { clusterScriptWithWait } from './cluster-script-with-wait.js';
import { createRedisRateLimits } from './rate-limits.js';
import { startRedisSweeper } from './sweeper.js';
import { createRedisDrains } from './drain.js';
import { StoreUnavailableError } from '../store-unavailable-error.js';
import { guardStoreLogger } from '../console-store-logger.js';
import {
  connectResilientRedis,
  connectResilientRedisCluster,
  clusterSubscriberSource,
  withDeadline,
  type ResilientRedisClusterConnection,
  type ResilientRedisConnection,
} from './connection.js';
import { revocationChannel, startRedisRevocationFeed, type DuplicableRedisClient, type RedisRevocationFeed } from './revocation-feed.js';
import { checkTimerRange } from '../timer-range.js';

export { StoreUnavailableError } from '../store-unavailable-error.js';
export { connectResilientRedis, connectResilientRedisCluster } from './connection.js';
export { parseRedisClusterUrl } from './cluster-url.js';
export type { ResilientRedisClusterConnection, ResilientRedisConnection, RedisConnectionLogger } from './connection.js';
export type { ReplicaWaitOptions } from './replica-wait.js';
export type { DuplicableRedisClient } from './revocation-feed.js';

/**
 * The part of a node-redis v5 client the store uses (a `RedisClientType` from `createClient()` fits):
 * raw commands only, so any modules, scripts or RESP version the host configured do not matter.
 * For Redis Cluster give a cluster client (`RedisClusterCommandClient`) as `clusterClient` instead. A client
 * that also has node-redis's `duplicate()` gives the store its revocation feed (`store.revocations`, a
 * subscriber connection of its own); one without it, none.
 */
export interface RedisCommandClient {
  readonly isOpen: boolean;
  sendCommand(args: readonly string[]): Promise<unknown>;
}

/**
 * The part of a node-redis v5 cluster client (`createCluster()`) the store uses: raw commands, routed by
 * their first key (node-redis follows MOVED/ASK itself).
 */
export interface RedisClusterCommandClient {
  readonly isOpen: boolean;
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
}

/** Commands the store sends that only read: node-redis may route them to a replica when asked to. */
const READ_COMMANDS = new Set(['GET', 'MGET', 'HMGET', 'HVALS', 'ZRANGE']);

/**
 * The key a cluster routes a command by: the first key of EVAL/EVALSHA (after the key count), else the
 * first argument. Every command and script of the store names keys of one slot only (see createRedisKeys).
 */
export function clusterRoutingKey(args: readonly string[]): string | undefined {
  const command = args[0]?.toUpperCase();
  if (command === 'EVALSHA' || command === 'EVAL') return Number(args[2]) > 0 ? args[3] : undefined;
  return command === 'PING' || command === 'TIME' ? undefined : args[1];
}

/** A cluster client seen as one that takes raw commands, each routed by its first key. */
function viaCluster(cluster: RedisClusterCommandClient): RedisCommandClient {
  return {
    get isOpen() {
      return cluster.isOpen;
    },
    sendCommand: (args) => cluster.sendCommand(clusterRoutingKey(args), READ_COMMANDS.has(args[0] ?? ''), [...args]),
  };
}

/** The Redis store: every tier of the contract, `close()`, and a sweep of the token index sets on demand. */
export type RedisStore = CompleteStore & {
  close(): Promise<void>;
  /**
   * Finishes revocation drains whose drainer died midway (its lease run out), and prunes expired members from the
   * token index sets (not on a cluster); resolves when done.
   */
  sweepExpired(): Promise<void>;
};

/** Options of createRedisStore. Give exactly one of `client`, `url`, `cluster` and `clusterClient`. */
export interface RedisStoreOptions {
  /** An already-connected node-redis v5 client the host owns; `close()` leaves it open. */
  readonly client?: RedisCommandClient;
  /**
   * `redis://host:6379` or `rediss://…`: the store makes, connects and owns its client. `undefined` counts as
   * not given, so `url: process.env.REDIS_URL` type-checks under `exactOptionalPropertyTypes`.
   */
  readonly url?: string | undefined;
  /**
   * A Redis Cluster the store connects to and owns: `rootNodes` are `redis://host:port` URLs of some of
   * its nodes (the rest are discovered). The first that carries `user:password@` authenticates every node,
   * discovered ones included. Keys then carry hash tags (see the README, "Redis Cluster").
   */
  readonly cluster?: {
    readonly rootNodes: readonly string[];
    /** Where to reach each node the cluster announces (`'10.0.0.1:7000'` → `{ host, port }`), e.g. behind NAT. */
    readonly nodeAddressMap?: Readonly<Record<string, { readonly host: string; readonly port: number }>>;
  };
  /** An already-connected node-redis v5 cluster client (`createCluster()`) the host owns. */
  readonly clusterClient?: RedisClusterCommandClient;
  /**
   * Prepended to every key, so one Redis can serve several stores. Default `'oauth:'`. On a cluster it
   * is the start of each hash tag, so it must not contain `{` or `}`; each prefix's token family is one slot.
   */
  readonly prefix?: string;
  /**
   * Seconds between sweeps of expired members out of the token index sets (everything else carries its own
   * TTL); `0` turns the timer off. Default 60. Not on a Redis Cluster, whose sets still expire with their last member.
   */
  readonly sweepIntervalSeconds?: number;
  /**
   * Milliseconds before a command (or the initial connect) gives up with StoreUnavailableError (the
   * router answers 503). Default 5000. A client the store makes also fails at once while disconnected
   * (no offline queue) instead of queueing requests until Redis returns.
   */
  readonly commandTimeoutMs?: number;
  /**
   * How many integrations this process keeps as it last read them, so that a token request reads none from the
   * store (each copy is checked by the save: the contract's `clientCopies`). Default 10,000, about 1–2 KB of heap
   * each. Past it the copy kept longest goes for each new one, so a registry larger than it reads that share of its
   * integrations again on each token request (half of them at twice the bound): set it to the number of
   * integrations that call. An integer from 1 to 10,000,000. A Redis Cluster keeps no copies (an integration and its
   * tokens are in different slots, which no script joins).
   */
  readonly maxIntegrationCopies?: number;
  /**
   * Receives connection losses of a client the store made, with the driver's error as the second argument:
   * log its message and code (`describeStoreError`), never the object. Default: one line per loss on stderr
   * (`consoleStoreLogger`).
   */
  readonly logger?: { warn(message: string, error?: unknown): void };
  /**
   * After every write that revokes or issues (tokens, codes, revocations, integrations, consents, signing keys; not
   * rate-limit counters, nor the sweep's pruning, nor the resumption of a drain a dead instance left), sends `WAIT replicas timeoutMs` to the node that took it, and reports the write
   * unavailable (StoreUnavailableError, a 503) when fewer replicas acknowledged it in time. Redis replicates
   * asynchronously: without this, a primary that dies before its replica received a revocation (or a consumed
   * code, or an issued token) loses it when the replica is promoted, and the revoked token works again. Costs a
   * round trip to the replicas per write, and every such write fails while fewer replicas are connected. Off by
   * default. WAIT counts the writes of its own connection: a `client` given must be one connection, not a pool.
   * See the README, "Replication and failover".
   */
  readonly waitForReplicas?: ReplicaWaitOptions;
}

/** Reads values of many keys in MGET batches: one round trip per 500 keys. */
async function getMany(send: RedisSend, keys: readonly string[]): Promise<(string | null)[]> {
  const values: (string | null)[] = [];
  for (let i = 0; i < keys.length; i += 500) {
    values.push(...((await send(['MGET', ...keys.slice(i, i + 500)])) as (string | null)[]));
  }
  return values;
}

/** How often updateClient converts a version 0.1 record and retries before it gives up. */
const MIGRATE_ATTEMPTS = 3;

/**
 * Integrations as hashes, one field per property: createClient inserts in one script (never replacing), and
 * updateClient sets only the given fields in one script that also checks the id exists and reads the
 * result back, never a read-modify-write from here, so a disable racing a secret rotation keeps both.
 * Records of version 0.1 (one JSON string) are read as they are and converted on their first update.
 * @see RFC 6749 §2 (client registration).
 */
function createRedisClientStore(
  keys: RedisKeys, run: RunScript, send: RedisSend, copies: RevisionCopies | null,
): AdministrationClientStore {
  async function read(clientId: string): Promise<OAuthClient | null> {
    const key = keys.client(clientId);
    try {
      const values = (await send(['HMGET', key, ...CLIENT_FIELDS])) as (string | null)[];
      const client = decodeClientFields(values);
      if (client && copies) copies.keep(client, clientRevisionOf(values));
      return client;
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('WRONGTYPE')) throw err;
      const json = (await send(['GET', key])) as string | null;
      return json === null ? null : decodeLegacyClient(json);
    }
  }

  /** Converts a version 0.1 record to a hash unless it changed since it was read. */
  async function migrate(key: string): Promise<void> {
    const json = (await send(['GET', key])) as string | null;
    if (json !== null) await run(MIGRATE_CLIENT, [key], [json, ...encodeClientFields(decodeLegacyClient(json))]);
  }

  /**
   * disableClient and enableClient: whether `disabled` changed (null: no such integration), converting a version 0.1
   * record first.
   */
  async function setDisabled(clientId: string, disabled: boolean): Promise<boolean | null> {
    copies?.forget(clientId);
    const key = keys.client(clientId);
    for (let attempt = 0; attempt < MIGRATE_ATTEMPTS; attempt++) {
      const reply = (await run(SET_CLIENT_DISABLED, [key], [String(disabled)])) as string;
      if (reply === 'none') return null;
      if (reply !== 'legacy') return reply === 'changed';
      await migrate(key);
    }
    const operation = disabled ? 'disableClient' : 'enableClient';
    throw new Error(`${operation}: the record of integration ${JSON.stringify(clientId)} is neither a hash nor convertible`);
  }

  return {
    findClient: read,
    async createClient(client) {
      // Exactly the record's fields, whatever else the caller's object carries.
      const record: Partial<OAuthClient> = Object.fromEntries(CLIENT_FIELDS.map((f) => [f, client[f]]));
      const fields = encodeClientFields(record);
      const args = [String(client.createdAt.getTime()), client.clientId, ...fields];
      return Number(await run(CREATE_CLIENT, [keys.client(client.clientId), keys.clientList], args)) === 1;
    },
    async updateClient(clientId, changes) {
      copies?.forget(clientId);
      const key = keys.client(clientId);
      const fields = encodeClientFields(definedClientChanges(changes));
      for (let attempt = 0; attempt < MIGRATE_ATTEMPTS; attempt++) {
        const reply = (await run(UPDATE_CLIENT, [key], fields)) as (string | null)[] | string;
        if (reply === 'none') return null;
        if (reply !== 'legacy') return decodeClientFields(reply as (string | null)[]);
        await migrate(key);
      }
      throw new Error(`updateClient: the record of integration ${JSON.stringify(clientId)} is neither a hash nor convertible`);
    },
    async disableClient(clientId) {
      const changed = await setDisabled(clientId, true);
      return changed === null ? null : changed ? 'disabled' : 'already_disabled';
    },
    async enableClient(clientId) {
      const changed = await setDisabled(clientId, false);
      return changed === null ? null : changed ? 'enabled' : 'already_enabled';
    },
    async listClients() {
      // A sorted set, not SCAN or KEYS: listing never walks the keyspace. Reads are pipelined.
      const ids = (await send(['ZRANGE', keys.clientList, '0', '-1'])) as string[];
      const clients = await Promise.all(ids.map(read));
      return clients.filter((c): c is OAuthClient => c !== null).sort(compareClients);
    },
    async deleteClient(clientId) {
      // The tokens went before, with the tombstone (`revokeClientTokens`, which the contract has the caller
      // run first). Codes carry no tag and consents live in their users' slots, with no index by integration
      // that one script could reach: they are left to expire (codes) or to be ignored (a consent granted
      // before the integration's createdAt does not count; a code's tokens are refused by the tombstone).
      copies?.forget(clientId);
      return Number(await run(DELETE_CLIENT, [keys.client(clientId), keys.clientList], [clientId])) === 1;
    },
  };
}

function createRedisConsentStore(keys: RedisKeys, run: RunScript, send: RedisSend): ConsentStore {
  return {
    async findConsent(userId, clientId) {
      const json = (await send(['GET', keys.consent(userId, clientId)])) as string | null;
      return json === null ? null : decodeConsent(json);
    },
    async saveConsent(r) {
      await run(PUT_INDEXED, [keys.consent(r.userId, r.clientId), keys.consentList(r.userId)], [
        encodeConsent(r),
        String(r.grantedAt.getTime()),
        r.clientId,
      ]);
    },
    async revokeConsent(userId, clientId) {
      await run(DELETE_INDEXED, [keys.consent(userId, clientId), keys.consentList(userId)], [clientId]);
    },
    async listConsents(userId) {
      const clientIds = (await send(['ZRANGE', keys.consentList(userId), '0', '-1'])) as string[];
      const values = await getMany(send, clientIds.map((c) => keys.consent(userId, c)));
      // Redis orders equal scores by UTF-8 bytes; store-policy's order is the one every store follows.
      return values.flatMap((j) => (j === null ? [] : [decodeConsent(j)])).sort(compareConsents);
    },
  };
}

/**
 * Creates a Redis-backed Store. Codes, tokens, tombstones and revocation moments carry native TTLs
 * (tombstones and moments `STORE_POLICY.revocationRetentionMs`); every check-and-write (consumeCode,
 * saveTokens, createClient, updateClient, each step of a revocation) is one Lua script, so atomic; indexes
 * are sorted sets, so nothing ever runs KEYS. Revocation is exact: saveTokens checks the grant's tombstone
 * and the integration's and user's revocation moments in the script that inserts. Every script that deletes
 * tokens publishes to `${prefix}revocations`, and the store's revocation feed counts those messages, so
 * `requireBearer` may cache tokens in process and drop them within the notification latency. On a plain
 * Redis, `clientCopies` keeps each integration `findClient` read with a digest of its fields
 * (`clientRevisionOf`), which the save script checks against the record, so the token endpoint authenticates
 * from a copy without ever trusting a stale one.
 *
 * On a Redis Cluster (`cluster` or `clusterClient`) the same scripts run, with hash-tagged keys so each one's
 * keys share a slot (see createRedisKeys); the plain-Redis key layout is unchanged. An integration's record and
 * its tokens are then in different slots, which no script joins, so a cluster store keeps no copies.
 *
 * @example
 * const store = await createRedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'oauth:' });
 * const clustered = await createRedisStore({ cluster: { rootNodes: ['redis://10.0.0.1:7000'] } });
 * @throws TypeError for invalid options; StoreUnavailableError when Redis cannot be reached.
 * @see src/stores/contract.ts (the Store contract), RFC 6749 §4.1.2 (single-use codes).
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<RedisStore> {
  const given = [options.client, options.url, options.cluster, options.clusterClient].filter((o) => o !== undefined && o !== '');
  if (given.length !== 1) {
    throw new TypeError('createRedisStore: give exactly one of the options "client", "url", "cluster" and "clusterClient"');
  }
  const onCluster = options.cluster !== undefined || options.clusterClient !== undefined;
  if (options.cluster && options.cluster.rootNodes.length === 0) {
    throw new TypeError('createRedisStore: option "cluster.rootNodes" must name at least one node');
  }
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`createRedisStore: option "commandTimeoutMs" must be a positive number (got ${timeoutMs})`);
  }
  // The connection's socket timeout is three times it (connectResilientRedis): that is what must fit a timer.
  checkTimerRange('createRedisStore: option "commandTimeoutMs"', timeoutMs, 'milliseconds', 3);
  const maxCopies = integrationCopiesOption('createRedisStore', options.maxIntegrationCopies);
  // Checked before connecting, as every other option is: a bad value must not wait on the network to be told.
  const sweepSeconds = options.sweepIntervalSeconds ?? 60;
  if (typeof sweepSeconds !== 'number' || !Number.isFinite(sweepSeconds) || sweepSeconds < 0) {
    throw new TypeError(`createRedisStore: option "sweepIntervalSeconds" must be a number of seconds ≥ 0 (got ${sweepSeconds})`);
  }
  checkTimerRange('createRedisStore: option "sweepIntervalSeconds"', sweepSeconds, 'seconds');
  const prefix = options.prefix ?? 'oauth:';
  if (onCluster && /[{}]/.test(prefix)) {
    throw new TypeError('createRedisStore: on a Redis Cluster the option "prefix" must not contain "{" or "}" (it goes inside hash tags)');
  }
  const replicaWait = checkReplicaWait(options.waitForReplicas, timeoutMs);
  // A host's logger that throws must not end the host from a socket listener or a timer.
  const logger = guardStoreLogger(options.logger);
  let client: RedisCommandClient;
  let own: ResilientRedisConnection | null = null;
  let ownCluster: ResilientRedisClusterConnection | null = null;

  if (options.client) {
    if (!options.client.isOpen) throw new TypeError('createRedisStore: option "client" must be connected first');
    // A pool sends each command on whichever connection is free: a WAIT there counts another connection's writes.
    if (replicaWait && 'totalClients' in options.client) {
      throw new TypeError('createRedisStore: option "waitForReplicas" needs a "client" of one connection (createClient), not a pool (createClientPool): WAIT counts only its own connection\'s writes');
    }
    client = options.client;
  } else if (options.clusterClient) {
    if (!options.clusterClient.isOpen) throw new TypeError('createRedisStore: option "clusterClient" must be connected first');
    client = viaCluster(options.clusterClient);
  } else if (options.cluster) {
    try {
      ownCluster = await connectResilientRedisCluster({
        rootNodes: options.cluster.rootNodes,
        ...(options.cluster.nodeAddressMap ? { nodeAddressMap: options.cluster.nodeAddressMap } : {}),
        timeoutMs,
        logger,
        label: 'express-oauth-router: Redis',
      });
    } catch (err) {
      return rethrowRedisError(err);
    }
    client = viaCluster(ownCluster.cluster as unknown as RedisClusterCommandClient);
  } else {
    try {
      own = await connectResilientRedis({ url: options.url ?? '', timeoutMs, logger, label: 'express-oauth-router: Redis' });
    } catch (err) {
      return rethrowRedisError(err);
    }
    client = own.client as unknown as RedisCommandClient;
  }

  /**
   * Under the command deadline; an outage is a StoreUnavailableError, and a timeout has a hung connection probed.
   * `firstKey` and `isReadonly` route the command on a cluster: its slot's node is the connection reconnected or probed.
   */
  const bounded = async <T>(sent: () => Promise<T>, firstKey: string | undefined, isReadonly: boolean): Promise<T> => {
    try {
      // A lost connection of the store's own (on a cluster, the command's node's) is made again for this command,
      // which waits for it (within the deadline): once Redis answers again, this command is served, not refused until
      // a backoff ends. A command that finds an attempt under way waits for it, and for one begun after it if it fails:
      // the earlier one may have met the outage this command comes after.
      const reconnecting = own?.reconnect() ?? ownCluster?.reconnect(firstKey, isReadonly);
      if (reconnecting) await withDeadline(reconnecting, timeoutMs);
      return await withDeadline(sent(), timeoutMs);
    } catch (err) {
      if (err instanceof StoreUnavailableError && err.cause === undefined) {
        own?.probe();
        ownCluster?.probe(firstKey, isReadonly);
      }
      return rethrowRedisError(err);
    }
  };
  // The routing key is worked out on a cluster only: a single Redis has one connection, and this is every command's path.
  const send: RedisSend = ownCluster
    ? (args) => bounded(() => client.sendCommand(args), clusterRoutingKey(args), READ_COMMANDS.has(args[0] ?? ''))
    : (args) => bounded(() => client.sendCommand(args), undefined, false);
  const unconfirmed = createScriptRunner(send);
  // A script and its WAIT, on the connection that runs the script: a plain Redis's one, or on a cluster the
  // connection of the node that runs it, wherever a MOVED or ASK sent it (cluster.sendCommand would follow those for
  // the script alone, and the keyless WAIT be answered by the slot's old master: a write it never took, confirmed).
  const cluster = options.clusterClient ?? ownCluster?.cluster;
  const withWait: SendWithWait | null = cluster === undefined
    ? (_key, script, wait) => sendWithWaitOn((args) => client.sendCommand(args), script, wait)
    : clusterScriptWithWait(cluster);
  if (replicaWait && withWait === null) {
    await ownCluster?.close();
    throw new TypeError('createRedisStore: option "waitForReplicas" on a Redis Cluster needs node-redis 5\'s cluster client (createCluster): the store sends each script and its WAIT on the connection of the node that runs the script');
  }
  // Rate-limit counters, the sweeper's pruning and resumed drains go unconfirmed: a counter lost in a failover only lets
  // a few more attempts through, and a prune or a resumed drain's step lost is made again by the next sweep.
  const run = replicaWait && withWait ? confirmedScriptRunner((key, script, wait) => bounded(() => withWait(key, script, wait), key, false), replicaWait) : unconfirmed;
  const keys = createRedisKeys(prefix, onCluster);
  const drains = createRedisDrains(keys, run, unconfirmed, send, revocationChannel(prefix), (err) => {
    logger.warn('express-oauth-router: Redis resumption of an interrupted revocation drain failed (the next sweep or lookup tries again)', err);
  });
  // SCAN reaches one node only: on a cluster the index sets are left to their TTL and to the prune on every add. The
  // sweep also resumes abandoned drains; a cluster resumes them on opening and when a lookup meets the drain marker.
  const sweeper = onCluster
    ? null
    : startRedisSweeper(keys.accessToken('').slice(0, -'at:'.length), send, unconfirmed, sweepSeconds, logger, drains);
  drains.poke();
  // The feed needs a connection of its own (a subscribed one takes no other command): a duplicate of the
  // store's client, or of the host's when it can make one; a client that cannot means no feed, not a wrong one.
  // On a cluster the subscriber is a plain connection to one node (PUBLISH is broadcast to all); with a
  // host's cluster client the store knows no node URLs, so no feed (every token is looked up: correct).
  const source: Partial<DuplicableRedisClient> = own
    ? own.subscriberSource
    : options.cluster
      ? await clusterSubscriberSource(options.cluster.rootNodes, timeoutMs)
      : onCluster ? {} : (client as Partial<DuplicableRedisClient>);
  const feed: RedisRevocationFeed | null = typeof source.duplicate === 'function'
    ? await startRedisRevocationFeed({ source: source as DuplicableRedisClient, prefix, timeoutMs, logger })
    : null;
  const announcer = { channel: revocationChannel(prefix), revoked: () => feed?.bump() };
  // On a cluster an integration's record and its tokens are in different slots, which no script joins: no copies.
  const copies = onCluster ? null : createRevisionCopies(maxCopies);
  let closing: Promise<void> | undefined;
  return {
    clients: createRedisClientStore(keys, run, send, copies),
    codes: createRedisCodeStore(keys, run),
    tokens: createRedisTokenStore(keys, run, send, announcer, !onCluster, drains),
    consents: createRedisConsentStore(keys, run, send),
    keys: createRedisKeyStore(prefix, run, send),
    rateLimits: createRedisRateLimits(prefix, unconfirmed, send),
    ...(feed ? { revocations: feed.feed } : {}),
    ...(copies ? { clientCopies: { find: copies.get } } : {}),
    async backendTime() {
      // TIME answers [seconds, microseconds] (on a cluster, from any node: all are kept in step by NTP alike).
      const [seconds, micros] = (await send(['TIME'])) as [string, string];
      return new Date(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
    },
    sweepExpired: async () => (sweeper ? sweeper.sweepNow() : drains.resumeAbandoned()),
    close() {
      // One closing for every call: a second call (two shutdown hooks) waits for the connections to close, and does
      // not close them again.
      closing ??= (async () => {
        await sweeper?.stop();
        await drains.close();
        await feed?.close();
        await own?.close();
        await ownCluster?.close();
      })();
      return closing;
    },
  };
}
