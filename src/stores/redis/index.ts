// Redis Store: shared state for many API instances, with native TTLs and Lua for every atomic step.
import type { ClientStore, CompleteStore, ConsentStore, OAuthClient } from '../contract.js';
import { compareClients, compareConsents, definedClientChanges } from '../store-policy.js';
import {
  CLIENT_FIELDS,
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
  DELETE_INDEXED,
  MIGRATE_CLIENT,
  PUT_INDEXED,
  UPDATE_CLIENT,
  type RunScript,
} from './scripts.js';
import { createRedisKeyStore } from './keys.js';
import { createRedisRateLimits } from './rate-limits.js';
import { StoreUnavailableError } from '../store-unavailable-error.js';
import { connectResilientRedis, withDeadline, type ResilientRedisConnection } from './connection.js';
import { revocationChannel, startRedisRevocationFeed, type DuplicableRedisClient, type RedisRevocationFeed } from './revocation-feed.js';

export { StoreUnavailableError } from '../store-unavailable-error.js';
export { connectResilientRedis } from './connection.js';
export type { ResilientRedisConnection, RedisConnectionLogger } from './connection.js';

/**
 * The part of a node-redis v5 client the store uses (a `RedisClientType` from `createClient()` fits):
 * raw commands only, so any modules, scripts or RESP version the host configured do not matter.
 * Redis Cluster is not supported: the scripts touch keys of several hash slots (though every script is
 * given all its keys in KEYS). A client that also has node-redis's `duplicate()` gives the store its
 * revocation feed (`store.revocations`, a subscriber connection of its own); one without it, none.
 */
export interface RedisCommandClient {
  readonly isOpen: boolean;
  sendCommand(args: readonly string[]): Promise<unknown>;
}

/** Options of createRedisStore. Give `client` or `url`, not both. */
export interface RedisStoreOptions {
  /** An already-connected node-redis v5 client the host owns; `close()` leaves it open. */
  readonly client?: RedisCommandClient;
  /** `redis://host:6379` or `rediss://…`: the store makes, connects and owns its client. */
  readonly url?: string;
  /** Prepended to every key, so one Redis can serve several stores. Default `'oauth:'`. */
  readonly prefix?: string;
  /**
   * Milliseconds before a command (or the initial connect) gives up with StoreUnavailableError (the
   * router answers 503). Default 5000. A client the store makes also fails at once while disconnected
   * (no offline queue) instead of queueing requests until Redis returns.
   */
  readonly commandTimeoutMs?: number;
  /** Receives connection losses of a client the store made. Default `console`. */
  readonly logger?: { warn(message: string, error?: unknown): void };
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
function createRedisClientStore(keys: RedisKeys, run: RunScript, send: RedisSend): Required<ClientStore> {
  async function read(clientId: string): Promise<OAuthClient | null> {
    const key = keys.client(clientId);
    try {
      return decodeClientFields((await send(['HMGET', key, ...CLIENT_FIELDS])) as (string | null)[]);
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
    async listClients() {
      // A sorted set, not SCAN or KEYS: listing never walks the keyspace. Reads are pipelined.
      const ids = (await send(['ZRANGE', keys.clientList, '0', '-1'])) as string[];
      const clients = await Promise.all(ids.map(read));
      return clients.filter((c): c is OAuthClient => c !== null).sort(compareClients);
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
 * `requireBearer` may cache tokens in process and drop them within the notification latency.
 *
 * @example
 * const store = await createRedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'oauth:' });
 * @throws TypeError for invalid options; StoreUnavailableError when Redis cannot be reached.
 * @see src/stores/contract.ts (the Store contract), RFC 6749 §4.1.2 (single-use codes).
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<CompleteStore> {
  if (!options.client === !options.url) {
    throw new TypeError('createRedisStore: give exactly one of the options "client" and "url"');
  }
  const timeoutMs = options.commandTimeoutMs ?? 5000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`createRedisStore: option "commandTimeoutMs" must be a positive number (got ${timeoutMs})`);
  }
  const prefix = options.prefix ?? 'oauth:';
  const logger = options.logger ?? console;
  let client: RedisCommandClient;
  let own: ResilientRedisConnection | null = null;

  if (options.client) {
    if (!options.client.isOpen) throw new TypeError('createRedisStore: option "client" must be connected first');
    client = options.client;
  } else {
    try {
      own = await connectResilientRedis({ url: options.url ?? '', timeoutMs, logger, label: 'express-oauth-router: Redis' });
    } catch (err) {
      return rethrowRedisError(err);
    }
    client = own.client as unknown as RedisCommandClient;
  }

  const send: RedisSend = async (args) => {
    try {
      return await withDeadline(client.sendCommand(args), timeoutMs);
    } catch (err) {
      if (err instanceof StoreUnavailableError && err.cause === undefined) own?.probe();
      return rethrowRedisError(err);
    }
  };
  const run = createScriptRunner(send);
  const keys = createRedisKeys(prefix);
  // The feed needs a connection of its own (a subscribed one takes no other command): a duplicate of the
  // store's client, or of the host's when it can make one; a client that cannot means no feed, not a wrong one.
  const source = own ? own.client : (client as Partial<DuplicableRedisClient>);
  const feed: RedisRevocationFeed | null = typeof source.duplicate === 'function'
    ? await startRedisRevocationFeed({ source: source as DuplicableRedisClient, prefix, timeoutMs, logger })
    : null;
  const announcer = { channel: revocationChannel(prefix), revoked: () => feed?.bump() };
  return {
    clients: createRedisClientStore(keys, run, send),
    codes: createRedisCodeStore(keys, run),
    tokens: createRedisTokenStore(keys, run, send, announcer),
    consents: createRedisConsentStore(keys, run, send),
    keys: createRedisKeyStore(prefix, run, send),
    rateLimits: createRedisRateLimits(prefix, run, send),
    ...(feed ? { revocations: feed.feed } : {}),
    async close() {
      await feed?.close();
      await own?.close();
    },
  };
}
