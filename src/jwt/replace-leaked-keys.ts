// Replaces every stored signing key with a new one, for keys that may have leaked: the router's and the CLI's path.
import type { SigningKeyRecord, SigningKeyStore } from '../stores/contract.js';
import { compareSigningKeys } from '../stores/store-policy.js';
import { StoreCapabilityError } from '../clients/client-errors.js';
import { generateSigningKeyRecord } from './generate-signing-key.js';

/** What a replacement did: the new key, and the kids whose records it deleted. */
export interface ReplacedSigningKeys {
  readonly kid: string;
  readonly deleted: readonly string[];
}

/**
 * Inserts a new key, then deletes every key ordered before it. Every key in the store may have leaked (they sit side
 * by side, in the store and in each process), so all go; the new one, then the oldest, signs at once. The newest
 * `createdAt` is read from the store, so no key another instance made meanwhile is taken for newer than the new one
 * and kept; a key made after the new one is newer, was never beside the leaked ones, and stays. The insert comes
 * first: a store is never left without a key for an instance to generate its own into.
 * @throws StoreCapabilityError when the store has no `deleteSigningKey`, before anything is written.
 * @see RFC 9068 §4, RFC 7517 §5, RFC 9700 §4.10.
 */
export async function replaceLeakedSigningKeys(store: SigningKeyStore): Promise<ReplacedSigningKeys> {
  if (typeof store.deleteSigningKey !== 'function') {
    throw new StoreCapabilityError('express-oauth-router: replacing leaked signing keys needs store.keys.deleteSigningKey, which this store lacks; '
      + "delete the leaked key's record by hand (README, \"JWT access tokens\")");
  }
  const before = await store.listSigningKeys();
  const newest = Math.max(0, ...before.map((record) => record.createdAt.getTime()));
  const record: SigningKeyRecord = generateSigningKeyRecord(new Date(Math.max(Date.now(), newest + 1)));
  await store.saveSigningKey(record);
  const deleted: string[] = [];
  const listed = await store.listSigningKeys();
  // Ordered as the store lists the new key, as every instance orders it: a store that keeps createdAt coarser than
  // the record (a DATETIME to the second) lists it older than the record, and it was deleted as a key before itself.
  const saved = listed.find((old) => old.kid === record.kid) ?? record;
  for (const old of listed) {
    if (old.kid === record.kid || compareSigningKeys(old, saved) >= 0) continue;
    if (await store.deleteSigningKey(old.kid)) deleted.push(old.kid);
  }
  return { kid: record.kid, deleted };
}
