// The error of a leaked-key replacement that saved its new key, then failed before every old key was deleted.

/**
 * A leaked-key replacement saved its new key, then the store failed before every older key was deleted: the records
 * of the kids in `leaked` but not in `deleted` are still in the store. The instance that ran it signs with the new key
 * and refuses every kid in `leaked` at once, and deletes those records at its next read of the keys the store answers;
 * the others (and every instance after `oauth-admin keys replace-leaked`) read only the store, where a leaked key left
 * still signs and verifies until then (or until the replacement is run again). Not done and not undone, so it is
 * reported (`signing_keys.replaced` with `complete: false`) and thrown; the same replacement again finishes it (its
 * new key then goes as an old one). Only from a store without `keys.replaceSigningKeys`: with it the replacement is one
 * atomic step of the store, and a failure rejects with the store's own error, having changed everything or nothing.
 * @see RFC 9068 §4, RFC 9700 §4.10, §4.14.
 */
export class SigningKeysReplacementIncompleteError extends Error {
  /**
   * @param kid the new key, saved.
   * @param deleted the kids deleted before the failure.
   * @param cause what the store threw.
   * @param leaked every kid the store held when the replacement started, all replaced (`deleted` among them).
   */
  constructor(readonly kid: string, readonly deleted: readonly string[], cause: unknown, readonly leaked: readonly string[] = deleted) {
    super(
      `a new signing key (${kid}) was saved, but deleting the leaked keys failed after ${deleted.length} of them`
        + ` (${cause instanceof Error ? cause.message : String(cause)}); the others are still in the store: replace the keys again`,
      { cause },
    );
    this.name = 'SigningKeysReplacementIncompleteError';
  }
}
