// The error of a leaked-key replacement that saved its new key, then failed before every old key was deleted.

/**
 * A leaked-key replacement saved its new key (which signs), then the store failed before every older key was
 * deleted: the keys not in `deleted` still verify. Not done and not undone, so it is reported (`signing_keys.replaced`
 * with `complete: false`) and thrown; the same replacement again finishes it (its new key then goes as an old one).
 * @see RFC 9068 §4, RFC 9700 §4.10.
 */
export class SigningKeysReplacementIncompleteError extends Error {
  /**
   * @param kid the new key, saved.
   * @param deleted the kids deleted before the failure.
   */
  constructor(readonly kid: string, readonly deleted: readonly string[], cause: unknown) {
    super(
      `a new signing key (${kid}) was saved, but deleting the leaked keys failed after ${deleted.length} of them`
        + ` (${cause instanceof Error ? cause.message : String(cause)}); the others still verify: replace the keys again`,
      { cause },
    );
    this.name = 'SigningKeysReplacementIncompleteError';
  }
}
