// A small from-scratch Store with switchable faults, to prove the conformance suite catches each one.
import type {
  AuthorizationCodeRecord,
  ClientCopy,
  ConsentRecord,
  OAuthClient,
  SigningKeyRecord,
  Store,
  TokenRecord,
} from '../../src/stores/contract.js';
import { applyClientChanges, compareIds } from '../../src/stores/store-policy.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { SimulateOutage } from '../../src/testing/index.js';

/** The faults a toy store can be built with; without any, it is a correct store. */
export type Fault =
  /** (a) saveTokens reads the tombstones in one round trip and inserts in the next (check outside the insert). */
  | 'save-checks-tombstones-a-turn-before-inserting'
  /** (b) ids compared case-insensitively, lists ordered case-insensitively (a `_ci` collation). */
  | 'ids-ignore-case'
  /** (b) ids compared ignoring trailing spaces (a PAD SPACE collation). */
  | 'ids-ignore-trailing-spaces'
  /** (c) the driver's raw error escapes during an outage instead of StoreUnavailableError. */
  | 'raw-errors-in-outage'
  /**
   * (c) during an outage, the one method named by `rawErrorMethod` (say `keys.replaceSigningKeys`) rejects with a plain
   * Error, as a method added later outside the wrapper that turns driver errors into StoreUnavailableError would.
   */
  | 'raw-error-in-one-method-in-outage'
  /**
   * (c) during an outage, a save of the form `splitSave` names (with a refresh token, or with `newGrant`) writes its
   * access token and then fails before the refresh token or the grant, with a StoreUnavailableError, leaving the
   * access token: a save split over two statements without a transaction, the first sent before the connection dropped.
   */
  | 'save-leaves-access-token-in-outage'
  /**
   * (c) during an outage, a save of the form `splitSave` names rejects with a plain Error, as a second statement (the
   * refresh token's insert, the grant row) outside the wrapper that turns driver errors into StoreUnavailableError would.
   */
  | 'raw-error-saving-refresh-or-grant-in-outage'
  /** the one method named by `hangMethod` (say `tokens.findRefreshToken`) never settles: a driver call with no timeout. */
  | 'one-method-hangs'
  /** (c) once the backend has been out, the store never works again (no reconnection). */
  | 'no-recovery-after-outage'
  /** (d) onlyIfNone counts the keys in one round trip and inserts in the next. */
  | 'only-if-none-checks-a-turn-before-inserting'
  /** deleteSigningKey checks the kid in one round trip and deletes it in the next (each of two concurrent deletes counts one). */
  | 'delete-signing-key-checks-a-turn-before-deleting'
  /**
   * replaceSigningKeys lists the keys in one round trip, then deletes what it listed and inserts in the next (a
   * replacement built of the three non-atomic steps: of two concurrent ones, both new keys are left).
   */
  | 'replace-signing-keys-deletes-what-it-listed'
  /** replaceSigningKeys answers a kid it stores already with [] at once (taken for a finished retry), deleting nothing. */
  | 'replace-signing-keys-stops-at-a-known-kid'
  /**
   * revokeAccessToken and revokeGrant check the token or the grant's tombstone in one round trip and write in the
   * next, answering true when their check found it unrevoked: of two concurrent revocations, each reports it.
   */
  | 'revoke-checks-a-turn-before-writing'
  /**
   * revokeGrant of a grant that holds tokens deletes them in one round trip and records the tombstone in the next (a
   * grant holding none is tombstoned at once): a refresh whose save lands between the two keeps its new access token.
   * Concurrent revocations alone never show it (one of them deletes, the answer is decided with the tombstone).
   */
  | 'revoke-grant-deletes-a-turn-before-tombstone'
  /**
   * revokeGrant of a grant that holds no token (two replays of a code whose exchange saved nothing) reads the
   * tombstone in one round trip and writes it in the next, answering from the read: each of two such replays reports
   * the revocation. A grant holding tokens is revoked atomically, so races on such a grant never show it.
   */
  | 'revoke-empty-grant-checks-a-turn-before-writing'
  /** (e) updateClient reads the whole record, then writes it all back a round trip later. */
  | 'update-client-reads-then-writes-whole-record'
  /** disableClient reads the flag in one round trip and writes it in the next (each of two concurrent disables reports it). */
  | 'disable-client-reads-a-turn-before-writing'
  /** enableClient reads the flag in one round trip and writes it in the next (each of two concurrent enables reports it). */
  | 'enable-client-reads-a-turn-before-writing'
  /** (f) consumeCode reads the code in one round trip and marks it used in the next. */
  | 'consume-code-checks-a-turn-before-marking'
  /** (g) revokeClientTokens deletes tokens but records no tombstone at all. */
  | 'revoke-client-tokens-without-tombstones'
  /** revokeClientTokens records the revocation moment but tombstones no grant whose refresh token it removed. */
  | 'revoke-client-tokens-without-grant-tombstones'
  /** a repeated revokeClientTokens keeps the first moment instead of the latest. */
  | 'revocation-keeps-first-moment'
  /** a repeated revokeClientTokens writes its own moment over the recorded one, earlier or not (last write wins). */
  | 'revocation-overwrites-moment'
  /** a user revocation also refuses other users' and client_credentials saves at that client. */
  | 'user-revocation-refuses-whole-client'
  /** rateLimits.hit reads the count in one round trip and writes count + 1 in the next. */
  | 'rate-limit-hit-reads-then-writes'
  /** clientCopies is offered, but saveTokens ignores `clientRevision` (a stale copy gets tokens). */
  | 'save-ignores-client-revision'
  /** saveTokens given `newGrant` takes the hint as a pass and skips the grant's tombstone. */
  | 'new-grant-skips-grant-tombstone'
  /** every revocation moves the feed's mark three round trips before it deletes (an announcement sent ahead of the commit). */
  | 'feed-moves-before-the-delete'
  /** the feed's mark counts this store's own revocations only: a peer's revocations never move it. */
  | 'feed-counts-own-revocations-only'
  /** the feed goes on answering its mark while its connection is cut, and never hears what was revoked meanwhile. */
  | 'feed-keeps-mark-through-outage'
  /** (client, user) and (user, client) pairs keyed by joining the ids with ':' (`${clientId}:${userId}`). */
  | 'pair-keys-joined-by-colon'
  /** code and token hashes kept in 40 characters (a `VARCHAR(40)` that truncates): the 43-character digests cut short. */
  | 'hashes-cut-to-40-characters'
  /**
   * every check a round trip before its write (saveTokens, consumeCode, updateClient, onlyIfNone, hit, replaceSigningKeys,
   * revokeAccessToken, revokeGrant), each call
   * behind a lock of this store object: atomic within one process, never across instances on the backend.
   */
  | 'atomic-in-process-only'
  /** codes' and tokens' dates kept as local wall-clock text (mysql2's default `timezone: 'local'` on DATETIME). */
  | 'dates-in-local-wall-clock'
  /** backendTime answers a server clock 2 h ahead of this machine's (a server NTP does not reach). */
  | 'backend-clock-two-hours-ahead';

export interface ToyStoreOptions {
  readonly faults?: readonly Fault[];
  /** What one round trip to the toy backend costs: an event-loop turn (default) or a microtask. */
  readonly turn?: 'macrotask' | 'microtask';
  /**
   * Round trips saveTokens makes before it reads the tombstones (BEGIN, reading the integration...):
   * with the check-then-insert fault, the window then opens only when the revocation starts that much later.
   */
  readonly saveLeadingTurns?: number;
  /**
   * The outage hook cuts this store's own connection only, as a proxy in front of one instance would: a peer still
   * reaches the backend (and may revoke while this store hears nothing). Default: the whole backend is out.
   */
  readonly outageCutsStoreOnly?: boolean;
  /** With `raw-error-in-one-method-in-outage`: the method (`part.method`) whose outage error is a plain Error. */
  readonly rawErrorMethod?: string;
  /** With the split-save faults: the saves they break, those with a refresh token or those with `newGrant`. */
  readonly splitSave?: 'refresh' | 'newGrant';
  /** With `one-method-hangs`: the method (`part.method`) that never settles. */
  readonly hangMethod?: string;
}

interface Backend {
  out: boolean;
  wasOut: boolean;
}
const backends = new WeakMap<Store, { backend: Backend; link: Backend; storeOnly: boolean; cutAt: () => void; restored: () => void }>();

/** The outage hook of toy stores. */
export const simulateToyOutage: SimulateOutage = async (store) => {
  const { backend, link, storeOnly, cutAt, restored } = backends.get(store)!;
  const cut = storeOnly ? link : backend;
  cut.out = true;
  cut.wasOut = true;
  cutAt();
  return async () => {
    cut.out = false;
    restored();
  };
};

const copy = <T>(value: T): T => structuredClone(value);

/** What a driver that writes Dates in the process's zone sends: `2026-11-30 07:21:04.123`, no offset. */
function wallClock(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** What it reads back: the text taken as local time in the zone the process has now. */
function fromWallClock(text: string): Date {
  const [y, mo, d, h, mi, s, ms] = text.split(/[-: .]/).map(Number) as [number, number, number, number, number, number, number];
  return new Date(y, mo - 1, d, h, mi, s, ms);
}

type Dated = { readonly expiresAt: Date; readonly issuedAt?: Date };

/** A record as the fault keeps it: its dates as wall-clock text (typed as the record, as a driver's row would be). */
function toWallClock<T extends Dated>(record: T): T {
  const text = (date: Date | undefined) => (date === undefined ? undefined : wallClock(date));
  return { ...record, expiresAt: text(record.expiresAt), ...('issuedAt' in record ? { issuedAt: text(record.issuedAt) } : {}) } as unknown as T;
}

/** A record as read back: wall-clock text taken in the zone the process has now; other records as they are. */
function readDates<T extends Dated>(record: T): T {
  const date = (value: unknown) => (typeof value === 'string' ? fromWallClock(value) : value);
  return { ...record, expiresAt: date(record.expiresAt), ...('issuedAt' in record ? { issuedAt: date(record.issuedAt) } : {}) } as T;
}

/** What a toy backend holds: every store opened on it (`openToyPeer`) shares it, as instances share a database. */
interface ToyBackendState {
  readonly backend: Backend;
  readonly clients: Map<string, OAuthClient>;
  readonly revisions: Map<string, string>;
  readonly codes: Map<string, { record: AuthorizationCodeRecord; used: boolean }>;
  readonly tokens: Map<string, { kind: 'access' | 'refresh'; record: TokenRecord }>;
  readonly revokedGrants: Set<string>;
  readonly clientRevokedAt: Map<string, number>;
  readonly userRevokedAt: Map<string, number>;
  readonly consents: Map<string, ConsentRecord>;
  readonly keys: Map<string, SigningKeyRecord>;
  readonly windows: Map<string, { count: number; resetAt: number }>;
  /** Every write (integration revisions) and every revocation (the feed's mark) on the backend. */
  readonly counters: { writes: number; mark: number };
}

const opened = new WeakMap<Store, { readonly options: ToyStoreOptions; readonly state: ToyBackendState }>();

/** A second toy store on the backend of `store`, with the same options, as another instance would open it. */
export function openToyPeer(store: Store): Store {
  const { options, state } = opened.get(store)!;
  return createToyStore(options, state);
}

/** Creates a toy store: Maps of records, one `turn()` per round trip, and the faults asked for. */
export function createToyStore(options: ToyStoreOptions = {}, shared?: ToyBackendState): Store {
  const faults = new Set(options.faults ?? []);
  const has = (fault: Fault) => faults.has(fault);
  const inProcessOnly = has('atomic-in-process-only');
  /** A check-then-write gap: its own fault, or every one of them behind the in-process lock. */
  const gap = (fault: Fault) => has(fault) || inProcessOnly;
  const wall = <T extends Dated>(record: T): T => (has('dates-in-local-wall-clock') ? toWallClock(record) : record);
  const state: ToyBackendState = shared ?? {
    backend: { out: false, wasOut: false }, clients: new Map(), revisions: new Map(), codes: new Map(), tokens: new Map(),
    revokedGrants: new Set(), clientRevokedAt: new Map(), userRevokedAt: new Map(), consents: new Map(), keys: new Map(),
    windows: new Map(), counters: { writes: 0, mark: 0 },
  };
  const { backend, clients, revisions, codes, tokens, revokedGrants, clientRevokedAt, userRevokedAt, consents, keys, windows } = state;
  // This store's own connection: cut alone by the outage hook with `outageCutsStoreOnly`.
  const link: Backend = { out: false, wasOut: false };
  const key = (id: string): string => {
    let folded = id;
    if (has('ids-ignore-case')) folded = folded.toLowerCase();
    if (has('ids-ignore-trailing-spaces')) folded = folded.replace(/ +$/, '');
    return folded;
  };
  const hashKey = (hash: string): string => (has('hashes-cut-to-40-characters') ? key(hash).slice(0, 40) : key(hash));
  const pair = (a: string, b: string) => (has('pair-keys-joined-by-colon') ? `${key(a)}:${key(b)}` : JSON.stringify([key(a), key(b)]));
  const order = (a: string, b: string) => compareIds(key(a), key(b)) || compareIds(a, b);

  async function turn(): Promise<void> {
    if (options.turn === 'microtask') await Promise.resolve();
    else await new Promise<void>((resolve) => setImmediate(resolve));
    if (backend.out || link.out || (has('no-recovery-after-outage') && (backend.wasOut || link.wasOut))) {
      if (has('raw-errors-in-outage')) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });
      throw new StoreUnavailableError('the toy backend is unreachable');
    }
  }

  // Each integration's revision (a counter of every write, so a re-created id gets a new one) and, per store, its copy.
  const copies = new Map<string, ClientCopy>();
  const revise = (clientId: string): void => { revisions.set(key(clientId), String((state.counters.writes += 1))); };
  // The revocation feed: moves in the same synchronous block as every deletion it announces, on the backend (every
  // store on it sees it), or with the fault on this store only.
  const feed = has('feed-counts-own-revocations-only') ? { mark: 0 } : state.counters;
  // The mark when this store's connection was last cut, and (with the fault) the revocations it never heard.
  let heardUpTo = 0;
  let unheard = 0;
  /** With the fault, moves the mark, then lets round trips pass before the revocation deletes anything. */
  async function announcedAhead(): Promise<void> {
    if (!has('feed-moves-before-the-delete')) return;
    feed.mark += 1;
    for (let n = 0; n < 3; n++) await turn();
  }

  function refused(token: TokenRecord, since: number, newGrant = false): boolean {
    if (!(newGrant && has('new-grant-skips-grant-tombstone')) && revokedGrants.has(key(token.grantId))) return true;
    if ((clientRevokedAt.get(key(token.clientId)) ?? -Infinity) >= since) return true;
    if (has('user-revocation-refuses-whole-client')) {
      return [...userRevokedAt].some(([k, at]) => JSON.parse(k)[0] === key(token.clientId) && at >= since);
    }
    return token.userId !== null && (userRevokedAt.get(pair(token.clientId, token.userId)) ?? -Infinity) >= since;
  }

  function find(kind: 'access' | 'refresh', tokenHash: string): TokenRecord | null {
    const stored = tokens.get(hashKey(tokenHash));
    const record = stored && readDates(stored.record);
    if (!stored || !record || stored.kind !== kind || record.expiresAt.getTime() <= Date.now()) return null;
    return copy(record);
  }

  function remember(map: Map<string, number>, at: string, now: number): void {
    if (has('revocation-keeps-first-moment') && map.has(at)) return;
    map.set(at, has('revocation-overwrites-moment') ? now : Math.max(now, map.get(at) ?? -Infinity));
  }

  const store: Store = {
    // The toy backend's clock is this process's, as an NTP-synced server's is; with the fault it is 2 h ahead.
    async backendTime() {
      await turn();
      return new Date(Date.now() + (has('backend-clock-two-hours-ahead') ? 2 * 3_600_000 : 0));
    },
    clients: {
      async findClient(clientId) {
        await turn();
        const client = clients.get(key(clientId));
        if (client) copies.set(key(clientId), { client: copy(client), revision: revisions.get(key(clientId))! });
        return client ? copy(client) : null;
      },

      async createClient(client) {
        await turn();
        if (clients.has(key(client.clientId))) return false;
        clients.set(key(client.clientId), copy(client));
        revise(client.clientId);
        return true;
      },
      async updateClient(clientId, changes) {
        await turn();
        const read = clients.get(key(clientId));
        if (!read) return null;
        if (gap('update-client-reads-then-writes-whole-record')) await turn();
        const base = gap('update-client-reads-then-writes-whole-record') ? read : clients.get(key(clientId))!;
        const updated = applyClientChanges(base, copy(changes));
        clients.set(key(clientId), updated);
        revise(clientId);
        return copy(updated);
      },
      async disableClient(clientId) {
        await turn();
        const read = clients.get(key(clientId));
        if (!read) return null;
        if (gap('disable-client-reads-a-turn-before-writing')) await turn();
        const current = clients.get(key(clientId));
        if (!current) return null;
        clients.set(key(clientId), applyClientChanges(current, { disabled: true, previousClientSecretHash: null, previousClientSecretExpiresAt: null }));
        revise(clientId);
        return read.disabled ? 'already_disabled' : 'disabled';
      },
      async enableClient(clientId) {
        await turn();
        const read = clients.get(key(clientId));
        if (!read) return null;
        if (gap('enable-client-reads-a-turn-before-writing')) await turn();
        const current = clients.get(key(clientId));
        if (!current) return null;
        clients.set(key(clientId), applyClientChanges(current, { disabled: false }));
        revise(clientId);
        return read.disabled ? 'enabled' : 'already_enabled';
      },
      async listClients() {
        await turn();
        return [...clients.values()].map(copy).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || order(a.clientId, b.clientId));
      },
      async deleteClient(clientId) {
        await turn();
        if (!clients.delete(key(clientId))) return false;
        revisions.delete(key(clientId));
        for (const [hash, code] of codes) if (code.record.clientId === clientId) codes.delete(hash);
        for (const [hash, token] of tokens) if (token.record.clientId === clientId) tokens.delete(hash);
        for (const [pairKey, consent] of consents) if (consent.clientId === clientId) consents.delete(pairKey);
        return true;
      },
    },
    codes: {
      async saveCode(record) {
        await turn();
        codes.set(hashKey(record.codeHash), { record: wall(copy(record)), used: false });
      },
      async consumeCode(codeHash) {
        await turn();
        const found = codes.get(hashKey(codeHash));
        const stored = found && { ...found, record: readDates(found.record) };
        if (!stored || stored.record.expiresAt.getTime() <= Date.now()) return { kind: 'not_found' };
        if (stored.used) return { kind: 'replayed', grantId: stored.record.grantId };
        if (gap('consume-code-checks-a-turn-before-marking')) await turn();
        codes.set(hashKey(codeHash), { record: found!.record, used: true });
        return { kind: 'consumed', record: copy(stored.record) };
      },
    },
    tokens: {
      async saveTokens(access, refresh, { authorizedAt, clientRevision, newGrant }) {
        const split = options.splitSave === 'refresh' ? refresh !== null : options.splitSave === 'newGrant' && newGrant === true;
        if (split && (backend.out || link.out)) {
          if (has('raw-error-saving-refresh-or-grant-in-outage')) throw new Error('insert of the second row failed: connection lost');
          if (has('save-leaves-access-token-in-outage')) {
            // The access token's statement went out before the connection dropped; the second one did not.
            tokens.set(hashKey(access.tokenHash), { kind: 'access', record: wall(copy(access)) });
            throw new StoreUnavailableError('the toy backend is unreachable');
          }
        }
        for (let i = 0; i < (options.saveLeadingTurns ?? 0); i++) await turn();
        await turn();
        const since = authorizedAt.getTime();
        const stale = clientRevision !== undefined && !has('save-ignores-client-revision')
          && revisions.get(key(access.clientId)) !== clientRevision;
        const isRefused = stale || refused(access, since, newGrant) || (refresh !== null && refused(refresh, since, newGrant));
        if (gap('save-checks-tombstones-a-turn-before-inserting')) await turn();
        if (isRefused) return false;
        tokens.set(hashKey(access.tokenHash), { kind: 'access', record: wall(copy(access)) });
        if (refresh) tokens.set(hashKey(refresh.tokenHash), { kind: 'refresh', record: wall(copy(refresh)) });
        return true;
      },
      async findAccessToken(tokenHash) {
        await turn();
        return find('access', tokenHash);
      },
      async findRefreshToken(tokenHash) {
        await turn();
        return find('refresh', tokenHash);
      },
      // Both answer whether this call revoked: decided with the write, or with the fault a round trip before it.
      async revokeAccessToken(tokenHash) {
        await turn();
        await announcedAhead();
        const found = tokens.get(hashKey(tokenHash))?.kind === 'access';
        if (gap('revoke-checks-a-turn-before-writing')) await turn();
        const removed = tokens.get(hashKey(tokenHash))?.kind === 'access' && tokens.delete(hashKey(tokenHash));
        if (!has('feed-moves-before-the-delete')) feed.mark += 1;
        return gap('revoke-checks-a-turn-before-writing') ? found : removed;
      },
      async revokeGrant(grantId) {
        await turn();
        await announcedAhead();
        if (has('revoke-grant-deletes-a-turn-before-tombstone')) {
          const held = [...tokens].filter(([, { record }]) => key(record.grantId) === key(grantId)).map(([hash]) => hash);
          if (held.length > 0) {
            for (const hash of held) tokens.delete(hash);
            if (!has('feed-moves-before-the-delete')) feed.mark += 1;
            await turn();
            const first = !revokedGrants.has(key(grantId));
            revokedGrants.add(key(grantId));
            return first;
          }
        }
        const unrevoked = !revokedGrants.has(key(grantId));
        if (has('revoke-empty-grant-checks-a-turn-before-writing')
          && ![...tokens.values()].some(({ record }) => key(record.grantId) === key(grantId))) {
          await turn();
          revokedGrants.add(key(grantId));
          for (const [hash, { record }] of tokens) if (key(record.grantId) === key(grantId)) tokens.delete(hash);
          if (!has('feed-moves-before-the-delete')) feed.mark += 1;
          return unrevoked;
        }
        if (gap('revoke-checks-a-turn-before-writing')) await turn();
        const first = !revokedGrants.has(key(grantId));
        revokedGrants.add(key(grantId));
        for (const [hash, { record }] of tokens) if (key(record.grantId) === key(grantId)) tokens.delete(hash);
        if (!has('feed-moves-before-the-delete')) feed.mark += 1;
        return gap('revoke-checks-a-turn-before-writing') ? unrevoked : first;
      },
      async revokeClientTokens(clientId, userId) {
        await turn();
        await announcedAhead();
        const now = Date.now();
        const tombstones = !has('revoke-client-tokens-without-tombstones');
        if (tombstones && userId === undefined) remember(clientRevokedAt, key(clientId), now);
        if (tombstones && userId !== undefined) remember(userRevokedAt, pair(clientId, userId), now);
        for (const [hash, { kind, record }] of tokens) {
          if (key(record.clientId) !== key(clientId)) continue;
          if (userId !== undefined && (record.userId === null || key(record.userId) !== key(userId))) continue;
          if (kind === 'refresh' && tombstones && !has('revoke-client-tokens-without-grant-tombstones')) revokedGrants.add(key(record.grantId));
          tokens.delete(hash);
        }
        if (!has('feed-moves-before-the-delete')) feed.mark += 1;
      },
    },
    clientCopies: {
      find(clientId) {
        const kept = copies.get(key(clientId));
        return kept && { client: copy(kept.client), revision: kept.revision };
      },
    },
    revocations: {
      // While its connection is cut the feed hears nothing: null, as the contract asks; with the fault it goes on
      // answering the mark it had, and never hears what was revoked meanwhile.
      mark: () => {
        if (!link.out) return feed.mark - unheard;
        return has('feed-keeps-mark-through-outage') ? heardUpTo - unheard : null;
      },
    },
    consents: {
      async findConsent(userId, clientId) {
        await turn();
        const consent = consents.get(pair(userId, clientId));
        return consent ? copy(consent) : null;
      },
      async saveConsent(record) {
        await turn();
        consents.set(pair(record.userId, record.clientId), copy(record));
      },
      async revokeConsent(userId, clientId) {
        await turn();
        consents.delete(pair(userId, clientId));
      },
      async listConsents(userId) {
        await turn();
        return [...consents.values()]
          .filter((consent) => key(consent.userId) === key(userId))
          .map(copy)
          .sort((a, b) => a.grantedAt.getTime() - b.grantedAt.getTime() || order(a.clientId, b.clientId));
      },
    },
    rateLimits: {
      async hit(id, windowMs, now) {
        await turn();
        const at = now.getTime();
        const current = windows.get(key(id));
        const next = current && current.resetAt > at ? { count: current.count + 1, resetAt: current.resetAt } : { count: 1, resetAt: at + windowMs };
        if (gap('rate-limit-hit-reads-then-writes')) await turn();
        windows.set(key(id), next);
        return { count: next.count, resetAt: new Date(next.resetAt) };
      },
      async get(id, now) {
        await turn();
        const current = windows.get(key(id));
        return current && current.resetAt > now.getTime() ? { count: current.count, resetAt: new Date(current.resetAt) } : null;
      },
      async release(id, resetAt) {
        await turn();
        const current = windows.get(key(id));
        if (current && current.resetAt === resetAt.getTime() && current.count > 0) current.count -= 1;
      },
      async reset(id) {
        await turn();
        windows.delete(key(id));
      },
    },
    keys: {
      async listSigningKeys() {
        await turn();
        return [...keys.values()].map(copy).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || order(a.kid, b.kid));
      },
      async saveSigningKey(record, saveOptions = {}) {
        await turn();
        if (keys.has(key(record.kid)) || (saveOptions.onlyIfNone === true && keys.size > 0)) return false;
        if (gap('only-if-none-checks-a-turn-before-inserting')) await turn();
        keys.set(key(record.kid), copy(record));
        return true;
      },
      async deleteSigningKey(kid) {
        await turn();
        if (!keys.has(key(kid))) return false;
        if (gap('delete-signing-key-checks-a-turn-before-deleting')) await turn();
        keys.delete(key(kid));
        return true;
      },
      async replaceSigningKeys(record) {
        await turn();
        if (has('replace-signing-keys-stops-at-a-known-kid') && keys.has(key(record.kid))) return [];
        const others = () => [...keys.entries()].filter(([id]) => id !== key(record.kid));
        const listed = others();
        if (gap('replace-signing-keys-deletes-what-it-listed')) await turn();
        const deleted = (gap('replace-signing-keys-deletes-what-it-listed') ? listed : others()).filter(([id]) => keys.delete(id));
        if (!keys.has(key(record.kid))) keys.set(key(record.kid), copy(record));
        return deleted.map(([, stored]) => stored.kid);
      },
    },
  };
  if (has('raw-error-in-one-method-in-outage')) {
    // `part.method`, or a method of the store itself (`backendTime`).
    const path = (options.rawErrorMethod ?? '').split('.');
    const name = path.pop()!;
    const methods = path.reduce<Record<string, unknown> | undefined>((at, part) => at?.[part] as Record<string, unknown> | undefined,
      store as unknown as Record<string, unknown>) as Record<string, (...args: unknown[]) => Promise<unknown>> | undefined;
    const method = methods?.[name];
    if (!method) throw new Error(`raw-error-in-one-method-in-outage: the toy store has no ${String(options.rawErrorMethod)}`);
    methods![name] = async (...args) => {
      try {
        return await method(...args);
      } catch (err) {
        throw backend.out || link.out ? new Error(`${options.rawErrorMethod} failed: connection lost`) : err;
      }
    };
  }
  if (has('one-method-hangs')) {
    const [part, name] = (options.hangMethod ?? '').split('.') as [string, string];
    const methods = (store as unknown as Record<string, Record<string, unknown> | undefined>)[part];
    if (typeof methods?.[name] !== 'function') throw new Error(`one-method-hangs: the toy store has no ${String(options.hangMethod)}`);
    methods[name] = () => new Promise<never>(() => undefined);
  }
  if (inProcessOnly) {
    // One queue per store object: this process's calls never overlap, another instance's do.
    let tail: Promise<unknown> = Promise.resolve();
    const parts = store as unknown as Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>>;
    for (const part of ['clients', 'codes', 'tokens', 'consents', 'rateLimits', 'keys']) {
      for (const [name, method] of Object.entries(parts[part]!)) {
        parts[part]![name] = (...args) => {
          const call = tail.then(() => method(...args));
          tail = call.catch(() => undefined);
          return call;
        };
      }
    }
  }
  backends.set(store, {
    backend, link, storeOnly: options.outageCutsStoreOnly === true,
    cutAt: () => { heardUpTo = feed.mark; },
    restored: () => { if (has('feed-keeps-mark-through-outage')) unheard += feed.mark - heardUpTo; },
  });
  opened.set(store, { options, state });
  return store;
}
