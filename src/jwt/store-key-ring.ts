// Package-generated signing keys kept in the store: lazy load, first-start convergence, rotation, retirement.
import { createPrivateKey } from 'node:crypto';
import type { SigningKeyRecord, SigningKeyStore } from '../stores/contract.js';
import type { Logger } from '../options.js';
import type { KeyRing } from './key-ring.js';
import { toSigningKey, type SigningKey } from './signing-key.js';
import { generateSigningKeyRecord } from './generate-signing-key.js';
import { replaceLeakedSigningKeys, type ReplacedSigningKeys } from './replace-leaked-keys.js';
import { SigningKeysReplacementIncompleteError } from './replacement-incomplete-error.js';
import { JWKS_MAX_AGE_MS } from './jwks-endpoint.js';
import { StoreUnavailableError } from '../stores/store-unavailable-error.js';

/** How long a loaded key set is trusted for signing before it is re-read (picks up another instance's rotation). */
const SIGNER_REFRESH_MS = 60_000;
/**
 * Unknown kids re-read the store at most this often, so garbage kids cannot flood it. Counted apart from
 * ordinary loads: the first unknown kid after a rotation elsewhere is looked up at once.
 */
const UNKNOWN_KID_REFRESH_MS = 5_000;
/**
 * Beyond accessTokenTtl, how long a superseded key stays published: another instance may sign with it until
 * its next refresh (SIGNER_REFRESH_MS), plus a minute for clock skew between instances.
 */
const RETIREMENT_MARGIN_MS = SIGNER_REFRESH_MS + 60_000;
/**
 * How long a new key is published before it signs: every instance's JWKS lists it after its next refresh
 * (SIGNER_REFRESH_MS), a resource server's cached JWK Set has expired one max-age later (JWKS_MAX_AGE_MS), plus a
 * minute for clock skew between instances. A token signed sooner could meet a resource server that cannot verify it.
 */
export const PUBLICATION_DELAY_MS = SIGNER_REFRESH_MS + JWKS_MAX_AGE_MS + 60_000;

/** How a store key ring is built. */
export interface StoreKeyRingOptions {
  /**
   * Only verify (an opaque router reading the kid of a JWT issued before the switch): no key is ever generated, an
   * empty store loads as no key (every JWT refused), no key is retired or deleted (the store is only read), and
   * `rotate` and `signer` refuse.
   */
  readonly verifyOnly?: boolean;
}

interface LoadedKey {
  readonly key: SigningKey;
  readonly createdAt: number;
  /** When it starts signing: at once for the first key of a store, PUBLICATION_DELAY_MS after its creation for any later one. */
  readonly signsFrom: number;
  /** The instant after which it no longer verifies. */
  readonly verifyUntil: number;
}

interface LoadedKeys {
  /** Oldest first. */
  readonly keys: readonly LoadedKey[];
  readonly byKid: ReadonlyMap<string, LoadedKey>;
  /** performance.now() at the load: the refresh periods are durations, which a wall clock stepped back (NTP) would stretch. */
  readonly loadedAt: number;
}

/** The newest key that signs by now; the oldest live one where none does yet (its successor is still being published). */
function signerAt(keys: LoadedKeys, now: number): LoadedKey {
  let signer = keys.keys[0]!;
  for (const entry of keys.keys) if (entry.signsFrom <= now) signer = entry;
  return signer;
}

function byAge(a: SigningKeyRecord, b: SigningKeyRecord): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0);
}

/**
 * A KeyRing over `store.keys`. Every live key is published at once; the newest key (createdAt, then kid) signs once
 * it has been published for PUBLICATION_DELAY_MS (a store's first key at once), so no resource server meets a token
 * whose key its cached JWK Set lacks. A key superseded at instant S (when the next one starts signing) verifies
 * until S + accessTokenTtl + margin, so rotation never cuts short a token already issued. Two instances on an empty
 * store insert with `onlyIfNone` and re-read, so they converge on one key. `verifyOnly` (an opaque router's ring) never
 * makes a key: it only tells which of the store's keys still verify (none, on a store that holds none).
 * @see RFC 9068 §4, RFC 7517 §5 (JWK Set), RFC 7638 (kid).
 */
export function createStoreKeyRing(store: SigningKeyStore, accessTokenTtl: number, logger: Logger, { verifyOnly = false }: StoreKeyRingOptions = {}): KeyRing {
  const ttlMs = accessTokenTtl * 1000;
  /** Parsed keys by kid, so a reload does not parse every PEM again. */
  const parsed = new Map<string, SigningKey>();
  let loaded: LoadedKeys | null = null;
  let loading: Promise<LoadedKeys> | null = null;
  let lastUnknownKidReload = Number.NEGATIVE_INFINITY;
  let lastVerifierRefresh = Number.NEGATIVE_INFINITY;
  /**
   * Kids this instance replaced as leaked: never used again, even from a key set loaded before the replacement, which
   * is what this instance holds when reading the store's keys again failed right after it, nor when a replacement
   * the store failed midway left their records (loads skip them, so its new key signs here at once, and delete them).
   * Only grows by a replacement.
   */
  const replacedHere = new Set<string>();
  /**
   * Kids held or listed as a store's atomic replacement (`replaceSigningKeys`) started, which then failed: it did all
   * of it or nothing, and only the store knows which (an answer lost after the commit). Not used until a read of the
   * keys started after the failure answers (`after`, counted in `loadsStarted`): the key set held meanwhile may be
   * the leaked one the store has deleted, and an attacker holding a leaked key would be honoured here all along.
   */
  let unsettled: { readonly kids: ReadonlySet<string>; readonly after: number } | null = null;
  let loadsStarted = 0;

  /** A kid this instance does not sign or verify with: replaced here as leaked, or held while a failed replacement is unsettled. */
  function refused(kid: string): boolean {
    return replacedHere.has(kid) || (unsettled?.kids.has(kid) ?? false);
  }

  function parse(record: SigningKeyRecord): SigningKey | null {
    const cached = parsed.get(record.kid);
    if (cached) return cached;
    try {
      const key = toSigningKey(createPrivateKey(record.privateKeyPem));
      if (key.kid !== record.kid || key.algorithm !== record.algorithm) throw new Error('kid or algorithm does not match the key');
      parsed.set(record.kid, key);
      return key;
    } catch (err) {
      // One unreadable record must not take token issuance down; it simply never verifies anything.
      logger.error(`express-oauth-router: ignoring stored signing key ${record.kid}: ${(err as Error).message}`);
      return null;
    }
  }

  /**
   * Deletes the records of keys retired here (they never verify again), when the store can: a retired key's private
   * part then leaves the store, and a longer `accessTokenTtl` later cannot bring it back. A delete per retired key,
   * once, within the load; a failure leaves the records, retired all the same, for the next load. Also the records a
   * leaked-key replacement the store failed midway left: deleted, they stop signing on the other instances too.
   */
  async function deleteRetired(retired: readonly string[]): Promise<void> {
    if (retired.length === 0 || typeof store.deleteSigningKey !== 'function') return;
    try {
      for (const kid of retired) await store.deleteSigningKey(kid);
    } catch (err) {
      // The keys read are what this load serves; deleting waits for the next load (at most one a minute, so one line).
      logger.warn(`express-oauth-router: could not delete a retired or leaked signing key's record (${(err as Error).message}); the next load tries again`);
    }
  }

  async function load(): Promise<LoadedKeys> {
    let records = await store.listSigningKeys();
    // A verify-only ring (an opaque router's) makes no key: a store that holds none has signed nothing that could have leaked.
    if (records.length === 0 && verifyOnly) return { keys: [], byKid: new Map(), loadedAt: performance.now() };
    if (records.length === 0) {
      await store.saveSigningKey(generateSigningKeyRecord(new Date()), { onlyIfNone: true });
      // Re-read whether or not we won: the winner's key is the one everybody signs with.
      records = await store.listSigningKeys();
    }
    const now = Date.now();
    // A leaked key whose record a failed replacement left is not beside its replacement: that one signs at once, as
    // the oldest key left, rather than after being published while a leaked key signs (RFC 9700 §4.14).
    const sorted = records.filter((record) => !replacedHere.has(record.kid)).sort(byAge);
    // The store's first key signs from its creation (there is no other); every later one PUBLICATION_DELAY_MS after.
    const signsFrom = (i: number): number => sorted[i]!.createdAt.getTime() + (i === 0 ? 0 : PUBLICATION_DELAY_MS);
    const keys: LoadedKey[] = [];
    // Retired keys are the oldest ones (each retires after its successor signs), so deleting them leaves every
    // remaining key's successor, and so its retirement, as it was; the oldest left already signs.
    const retired: string[] = [];
    for (const [i, record] of sorted.entries()) {
      // A verify-only ring (an opaque router's) retires no key by its own accessTokenTtl: the JWTs it is asked about
      // were issued under the JWT instances' lifetime, maybe longer, and their records' expiry bounds them. Retired by
      // it, and deleted, a key would leave the JWT instances still in a rolling switch refusing their own live tokens.
      const verifyUntil = i + 1 < sorted.length && !verifyOnly ? signsFrom(i + 1) + ttlMs + RETIREMENT_MARGIN_MS : Number.POSITIVE_INFINITY;
      if (verifyUntil <= now) {
        retired.push(record.kid);
        continue;
      }
      const key = parse(record);
      if (!key) continue;
      keys.push({ key, createdAt: record.createdAt.getTime(), signsFrom: signsFrom(i), verifyUntil });
    }
    for (const kid of parsed.keys()) if (!records.some((record) => record.kid === kid)) parsed.delete(kid);
    // The leaked records first: the other instances keep signing with them until they are gone (RFC 9700 §4.14).
    const leftLeaked = records.filter((record) => replacedHere.has(record.kid)).map((record) => record.kid);
    await deleteRetired([...leftLeaked, ...retired]);
    if (keys.length === 0 && !verifyOnly) throw new Error('express-oauth-router: the store holds no usable signing key');
    return { keys, byKid: new Map(keys.map((entry) => [entry.key.kid, entry])), loadedAt: performance.now() };
  }

  /** Every key replaced as leaked (replaceLeakedSigningKeys), then read again here: this instance refuses them at once. */
  async function replaceLeaked(): Promise<ReplacedSigningKeys> {
    // The keys held here, and those being read, as it starts: every one of them is replaced, by this call or by one at
    // the same moment, which may delete it first (so it is not in this call's `deleted`). Both: a read under way may
    // fail, and the keys held are then what this instance goes on using.
    const [heldKeys, heldReading] = [loaded, loading];
    const held = [heldKeys, heldReading];
    // And every key the store held as it starts, which this instance may have read only meanwhile.
    let leaked: ReadonlySet<string> = new Set();
    // Whether the keys were listed: a failure before (the listing itself) wrote nothing, which is known for sure.
    let listed = false;
    let replaced: ReplacedSigningKeys;
    try {
      replaced = await replaceLeakedSigningKeys(store, (kids) => { leaked = kids; listed = true; });
    } catch (error) {
      // Every key it replaced, deleted before the failure or not, is never signed or verified with here again, and
      // the keys are read afresh: the new key, saved, signs here at once.
      if (error instanceof SigningKeysReplacementIncompleteError) {
        for (const kid of error.leaked) replacedHere.add(kid);
        for (const kid of error.deleted) replacedHere.add(kid);
      }
      // The store's atomic replacement (replaceSigningKeys) failing did all of it or nothing, and only the store
      // knows which (its answer lost after the commit): read afresh, this instance signs with what the store holds,
      // rather than with a deleted leaked key until its next refresh. Until that read answers, the keys held or listed
      // as it started are not used: the store unreadable, they would sign and verify here though deleted.
      if (loaded) loaded = { ...loaded, loadedAt: Number.NEGATIVE_INFINITY };
      // A listing that failed came before the atomic step: nothing was done, and the keys held (which verify JWTs with no
      // store) stay in use.
      if (!(error instanceof SigningKeysReplacementIncompleteError) && typeof store.replaceSigningKeys === 'function' && listed) {
        const kids = new Set(leaked);
        const after = loadsStarted;
        for (const entry of heldKeys?.keys ?? []) kids.add(entry.key.kid);
        unsettled = { kids, after };
        // A read under way as it started answers with keys held here from then on: refused too, until settled.
        const read = await heldReading?.catch(() => null);
        for (const entry of read?.keys ?? []) kids.add(entry.key.kid);
      }
      throw error;
    }
    for (const kid of [...replaced.deleted, ...leaked]) replacedHere.add(kid);
    if (loading) await loading.catch(() => undefined);
    try {
      await reload();
    } catch (err) {
      // The replacement is done: rejecting here told the caller it failed and left it out of the audit events. The
      // keys are read again at the next signature (refused until then, rather than signed with a deleted key), and
      // none held before it (the leaked ones, whoever deleted them) is used from the key set kept meanwhile.
      const before = await Promise.all(held.map((keys) => Promise.resolve(keys).catch(() => null)));
      for (const keys of before) for (const entry of keys?.keys ?? []) if (entry.key.kid !== replaced.signingKid) replacedHere.add(entry.key.kid);
      if (loaded) loaded = { ...loaded, loadedAt: Number.NEGATIVE_INFINITY };
      logger.error(`express-oauth-router: signing keys replaced as leaked, but reading them again failed (${(err as Error).message}); `
        + 'this instance reads them at its next signature');
    }
    // Another key than its own signs: a replacement at the same moment made a newer one, and this one's was deleted.
    const signs = replaced.signingKid === replaced.kid ? `${replaced.kid} signs now`
      : `${replaced.signingKid}, a newer key of a replacement at the same moment, signs (${replaced.kid} deleted)`;
    logger.warn(`express-oauth-router: signing keys replaced as leaked: ${signs}; deleted `
      + `${replaced.deleted.length === 0 ? 'none' : replaced.deleted.join(', ')}. Other instances stop using them when they next read the store (within a minute)`);
    return replaced;
  }

  /** One load at a time: concurrent callers share it. */
  function reload(): Promise<LoadedKeys> {
    if (loading) return loading;
    const started = ++loadsStarted;
    loading = load()
      .then((keys) => {
        // Read after a failed atomic replacement: what the store holds is known again, leaked keys gone or not.
        if (unsettled !== null && started > unsettled.after) unsettled = null;
        return (loaded = keys);
      })
      .finally(() => { loading = null; });
    return loading;
  }

  function lookup(keys: LoadedKeys, kid: string): SigningKey | null {
    const entry = keys.byKid.get(kid);
    return entry && entry.verifyUntil > Date.now() && !refused(kid) ? entry.key : null;
  }

  async function fresh(): Promise<LoadedKeys> {
    if (loaded && performance.now() - loaded.loadedAt < SIGNER_REFRESH_MS) return loaded;
    try {
      return await reload();
    } catch (err) {
      // A stale key set still signs and verifies correctly; only another instance's rotation is missed.
      if (loaded) return loaded;
      throw err;
    }
  }

  /**
   * A verifier's keys are served as loaded; past the refresh period, the store is read again in the background (one
   * read at a time, at most once a period), so the next check sees another instance's rotation, and with it the
   * moment the old key retires. A process that only verifies (it never signs nor serves the JWKS) otherwise kept a
   * superseded key verifying for as long as it ran, unless a token of the new key happened to arrive. Not awaited: a
   * store that is down must not delay a JWT's verification, which needs no store.
   */
  function refreshForVerifying(keys: LoadedKeys): void {
    const now = performance.now();
    if (now - keys.loadedAt < SIGNER_REFRESH_MS || loading || now - lastVerifierRefresh < SIGNER_REFRESH_MS) return;
    lastVerifierRefresh = now;
    reload().catch(() => {
      // The keys loaded stay in use; the next period tries again.
    });
  }

  return {
    async signer() {
      const keys = await fresh();
      if (keys.keys.length === 0) throw new Error('express-oauth-router: the store holds no usable signing key');
      const { key } = signerAt(keys, Date.now());
      if (!refused(key.kid)) return key;
      // Only a key set loaded before this instance's leaked-key replacement finished, the store unreadable since, has one.
      // Read during it, the set holds the replacement's new key too, which signs at once (a leaked key's successor is
      // not waited for): the newest key not replaced signs. None there: refused until the store is read again.
      for (let i = keys.keys.length - 1; i >= 0; i--) if (!refused(keys.keys[i]!.key.kid)) return keys.keys[i]!.key;
      throw new StoreUnavailableError('express-oauth-router: the signing keys replaced as leaked could not be read again');
    },
    async findKey(kid) {
      // Replaced here as leaked: never found again, so a token of it does not send the store a read every few seconds.
      if (replacedHere.has(kid)) return null;
      const keys = loaded ?? (await reload());
      refreshForVerifying(keys);
      const hit = lookup(keys, kid);
      if (hit) return hit;
      if (loading) return lookup(await loading, kid);
      // On the monotonic clock, as loadedAt: a wall clock stepped back would refuse a new key's tokens as long as the step.
      if (performance.now() - lastUnknownKidReload < UNKNOWN_KID_REFRESH_MS) return null;
      lastUnknownKidReload = performance.now();
      // Maybe another instance rotated: read the store again (rate-limited above).
      return lookup(await reload(), kid);
    },
    stillVerifies(kid) {
      // Not loaded yet: nothing was found, so nothing was verified with it; answered as findKey would, once loaded.
      if (!loaded) return true;
      // Past the refresh period, the store is read in the background, as by findKey: another instance's rotation
      // must retire the key here even while every request is answered from the memory of verified tokens.
      refreshForVerifying(loaded);
      return lookup(loaded, kid) !== null;
    },
    async publishedKeys() {
      const keys = await fresh();
      const now = Date.now();
      const published = [...keys.byKid.values()].filter((entry) => entry.verifyUntil > now && !refused(entry.key.kid)).map((entry) => entry.key);
      // Every key held refused (a failed replacement unsettled, the store unreadable since): no key set is known to
      // publish. An empty one would be cached for its max-age by every resource server, which would then refuse the
      // tokens of the key the store holds, so a 503 (no-store) instead, as the token endpoint answers meanwhile.
      if (published.length === 0) throw new StoreUnavailableError('express-oauth-router: the signing keys could not be read again since a failed replacement');
      return published;
    },
    async rotate(options = {}) {
      if (verifyOnly) throw new Error('express-oauth-router: a verify-only key ring rotates no key');
      if (options.leaked === true) return replaceLeaked();
      const current = loaded ?? (await reload());
      // Strictly newer than every key even within one millisecond, so the new key wins the order.
      const newest = current.keys[current.keys.length - 1]!.createdAt;
      const record = generateSigningKeyRecord(new Date(Math.max(Date.now(), newest + 1)));
      await store.saveSigningKey(record);
      // A load started before the insert would not see it: wait it out, then read again.
      if (loading) await loading.catch(() => undefined);
      await reload();
      return { kid: record.kid, signingKid: null, deleted: [] };
    },
  };
}
