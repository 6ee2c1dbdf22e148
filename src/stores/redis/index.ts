// Redis Store: shared state for many API instances, with native TTLs and Lua for every atomic step.
import type { ClientStore, ConsentStore, Store } from '../contract.js';
import {
  createRedisKeys,
  decodeClient,
  decodeConsent,
  encodeClient,
  encodeConsent,
  type RedisKeys,
} from './codec.js';
import { rethrowRedisError } from './errors.js';
import { createRedisCodeStore, createRedisTokenStore, type RedisSend } from './grants.js';
import { createScriptRunner, DELETE_INDEXED, PUT_INDEXED, type RunScript } from './scripts.js';
import { createRedisKeyStore } from './keys.js';
import { StoreUnavailableError } from '../store-unavailable-error.js';
import { connectResilientRedis, withDeadline, type ResilientRedisConnection } from './connection.js';

export { StoreUnavailableError } from '../store-unavailable-error.js';
export { connectResilientRedis } from './connection.js';
export type { ResilientRedisConnection, RedisConnectionLogger } from './connection.js';

/**
 * The part of a node-redis v5 client the store uses (a `RedisClientType` from `createClient()` fits):
 * raw commands only, so any modules, scripts or RESP version the host configured do not matter.
 * Redis Cluster is not supported: the scripts touch keys of several hash slots.
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

function createRedisClientStore(keys: RedisKeys, run: RunScript, send: RedisSend): ClientStore {
  return {
    async findClient(clientId) {
      const json = (await send(['GET', keys.client(clientId)])) as string | null;
      return json === null ? null : decodeClient(json);
    },
    async saveClient(c) {
      await run(PUT_INDEXED, [keys.client(c.clientId), keys.clientList], [
        encodeClient(c),
        String(c.createdAt.getTime()),
        c.clientId,
      ]);
    },
    async listClients() {
      // A sorted set, not SCAN or KEYS: listing never walks the keyspace.
      const ids = (await send(['ZRANGE', keys.clientList, '0', '-1'])) as string[];
      const clients = (await getMany(send, ids.map(keys.client))).flatMap((j) => (j === null ? [] : [decodeClient(j)]));
      // Redis orders equal scores by bytes; re-sort so ties follow JavaScript's string order exactly.
      return clients.sort(
        (a, b) =>
          a.createdAt.getTime() - b.createdAt.getTime() || (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0),
      );
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
      return values.flatMap((j) => (j === null ? [] : [decodeConsent(j)]));
    },
  };
}

/**
 * Creates a Redis-backed Store. Codes, tokens and tombstones carry native TTLs; consumeCode, saveTokens
 * and revokeGrant are Lua scripts (atomic); indexes are sorted sets, so nothing ever runs KEYS.
 *
 * @example
 * const store = await createRedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'oauth:' });
 * @throws TypeError for invalid options; StoreUnavailableError when Redis cannot be reached.
 * @see src/stores/contract.ts (the Store contract), RFC 6749 §4.1.2 (single-use codes).
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
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
  return {
    clients: createRedisClientStore(keys, run, send),
    codes: createRedisCodeStore(keys, run),
    tokens: createRedisTokenStore(keys, run, send),
    consents: createRedisConsentStore(keys, run, send),
    keys: createRedisKeyStore(prefix, run, send),
    async close() {
      await own?.close();
    },
  };
}
