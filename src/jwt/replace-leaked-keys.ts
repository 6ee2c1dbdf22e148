// Replaces every stored signing key with a new one, for keys that may have leaked: the router's and the CLI's path.
import type { SigningKeyRecord, SigningKeyStore } from '../stores/contract.js';
import { compareSigningKeys } from '../stores/store-policy.js';
import { StoreCapabilityError } from '../clients/client-errors.js';
import { generateSigningKeyRecord } from './generate-signing-key.js';
import { SigningKeysReplacementIncompleteError } from './replacement-incomplete-error.js';

/** What a replacement did: the key it made, the key that signs once it is done, and the kids whose records it deleted. */
export interface ReplacedSigningKeys {
  /** The key this replacement made; in `deleted` when a newer key of a replacement at the same moment signs instead. */
  readonly kid: string;
  /**
   * The key that signs once this call is done: `kid`, or the newest key made meanwhile, beside none of the leaked ones
   * (a replacement's at the same moment, or a planned rotation's; then `kid` is in `deleted`). As the store stood when
   * this call chose what to delete: a replacement that had listed the keys before this one saved its own, and saves a
   * newer key after, replaces it in turn (its result then names the key it leaves).
   */
  readonly signingKid: string;
  /**
   * The kids whose records this call deleted (a kid another call deleted first is not in it). It holds `kid` itself
   * when a replacement running at the same moment made a newer key, which then signs instead (`signingKid`).
   */
  readonly deleted: readonly string[];
}

/**
 * Inserts a new key, then deletes every key the store held when the replacement started: every key in the store may
 * have leaked (they sit side by side, in the store and in each process), so all go; the new one, then the oldest,
 * signs at once. The newest `createdAt` is read from the store, so no key another instance made meanwhile is taken
 * for newer than the new one and kept. The insert comes first: a store is never left without a key for an instance
 * to generate its own into.
 *
 * A key that appeared meanwhile (another replacement's, or a planned rotation's) was never beside the leaked ones:
 * of it and the new key only the newer stays, so replacements running at the same moment leave exactly one key (of
 * two, one lists after the other saved, and it deletes the older of the two new keys, its own or the other's). Each
 * reports only what it deleted itself; its `kid` may then be in its own `deleted` (a newer key it saw signs, and
 * `signingKid` names it), or in the other's (which saw its key as the older): together the two results account for
 * every kid once.
 *
 * A store with `replaceSigningKeys` does all of it in one atomic step instead (`replaceAtomically`), and only that
 * path is safe against a store failing midway: the steps above, on a store without it, leave a failure's leaked keys
 * in the store (SigningKeysReplacementIncompleteError), signing on every other instance until the replacement is run
 * again.
 * `listed` is told the kids of the keys it replaces as soon as they are listed: a replacement at the same moment may
 * delete some first, so they are not all in `deleted`, and a caller that holds keys refuses them all the same. Given,
 * the atomic path lists the keys first too (one read more): every key it lists is gone once it commits, whoever
 * deleted it, and a caller that read one meanwhile (another instance's planned rotation) must not keep it.
 * @throws StoreCapabilityError when the store has neither `replaceSigningKeys` nor `deleteSigningKey`, before anything
 *   is written; SigningKeysReplacementIncompleteError, without `replaceSigningKeys`, when the new key was saved but a
 *   later step failed (what was deleted in it); with it, what the store threw (nothing was done, or all of it).
 * @see RFC 9068 §4, RFC 7517 §5, RFC 9700 §4.10.
 */
export async function replaceLeakedSigningKeys(
  store: SigningKeyStore, listed?: (leaked: ReadonlySet<string>) => void,
): Promise<ReplacedSigningKeys> {
  if (typeof store.replaceSigningKeys === 'function') {
    if (listed) listed(new Set((await store.listSigningKeys()).map((record) => record.kid)));
    return replaceAtomically(store as ReplacingKeyStore);
  }
  if (typeof store.deleteSigningKey !== 'function') {
    throw new StoreCapabilityError('express-oauth-router: replacing leaked signing keys needs store.keys.replaceSigningKeys or store.keys.deleteSigningKey, which this store lacks; '
      + "delete the leaked key's record by hand (README, \"JWT access tokens\")");
  }
  const before = await store.listSigningKeys();
  const leaked = new Set(before.map((record) => record.kid));
  listed?.(leaked);
  const newest = Math.max(0, ...before.map((record) => record.createdAt.getTime()));
  const record: SigningKeyRecord = generateSigningKeyRecord(new Date(Math.max(Date.now(), newest + 1)));
  await store.saveSigningKey(record);
  const deleted: string[] = [];
  try {
    return await deleteReplaced(store as DeletingKeyStore, record, leaked, deleted);
  } catch (error) {
    // The new key is saved and signs: the replacement happened in part, which the caller reports before it rethrows.
    throw new SigningKeysReplacementIncompleteError(record.kid, [...deleted], error, [...leaked]);
  }
}

type DeletingKeyStore = SigningKeyStore & Required<Pick<SigningKeyStore, 'deleteSigningKey'>>;
type ReplacingKeyStore = SigningKeyStore & Required<Pick<SigningKeyStore, 'replaceSigningKeys'>>;

/**
 * The replacement as the store's one atomic step: its new key is the only one left when it commits, so it signs at
 * once on every instance (a store's only key signs from its creation), and the result is true as of that commit. A
 * replacement committed after it deletes its key in turn, and reports it in its own `deleted`. A rejection left
 * everything or nothing: never a new key beside a leaked one, on this instance or any other, so it is rethrown as
 * the store's error, and the same replacement again completes it.
 */
async function replaceAtomically(store: ReplacingKeyStore): Promise<ReplacedSigningKeys> {
  const record = generateSigningKeyRecord(new Date());
  const deleted = await store.replaceSigningKeys(record);
  return { kid: record.kid, signingKid: record.kid, deleted: [...deleted] };
}

/** The deletions of a replacement whose new key `record` is saved; `deleted` collects them as they succeed. */
async function deleteReplaced(
  store: DeletingKeyStore, record: SigningKeyRecord, leaked: ReadonlySet<string>, deleted: string[],
): Promise<ReplacedSigningKeys> {
  const listed = await store.listSigningKeys();
  // Ordered as the store lists the new key, as every instance orders it: a store that keeps createdAt coarser than
  // the record (a DATETIME to the second) lists it older than the record, and it was deleted as a key before itself.
  const saved = listed.find((old) => old.kid === record.kid) ?? record;
  // Every key there when it started goes, even one a coarse createdAt lists as newer (a replacement within the second).
  const others = listed.filter((old) => old.kid !== record.kid);
  const gone = others.filter((old) => leaked.has(old.kid) || compareSigningKeys(old, saved) < 0);
  // A newer key made meanwhile, beside none of the leaked ones, signs instead: this one's key goes with the others.
  // Of several, the newest signs (each of their replacements deletes its own key on seeing a newer one).
  const newer = others.filter((old) => !leaked.has(old.kid) && compareSigningKeys(old, saved) > 0);
  const signing = newer.reduce((newest, old) => (compareSigningKeys(old, newest) > 0 ? old : newest), saved);
  for (const old of signing === saved ? gone : [...gone, saved]) {
    if (await store.deleteSigningKey(old.kid)) deleted.push(old.kid);
  }
  return { kid: record.kid, signingKid: signing.kid, deleted };
}
