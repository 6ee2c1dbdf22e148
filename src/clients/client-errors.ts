// Errors of the integration lifecycle functions that callers (the admin API, the CLI) tell apart.

/** A lifecycle operation named a client_id that no integration has. */
export class UnknownClientError extends Error {
  constructor(readonly clientId: string) {
    // An id past any store's limit (STORE_POLICY.maxIdLength, 255) is shown cut, not echoed whole into a terminal or log.
    super(`unknown client_id ${JSON.stringify(clientId.length > 255 ? `${clientId.slice(0, 255)}…` : clientId)}`);
    this.name = 'UnknownClientError';
  }
}

/**
 * An integration was to be registered (or updated, or imported) with scopes the server does not know: not in the
 * vocabulary (`scopes` of `createOAuthAdmin`, the router's `scopes` option for `oauth.admin`, OAUTH_SCOPES for the
 * CLI). The router would never grant them, so the registration is refused rather than kept as a promise it breaks.
 * A `TypeError`, the admin API's error for bad input; `error` is the code an RFC 7591 registration endpoint answers.
 * @see RFC 7591 §3.2.2 (`invalid_client_metadata`), RFC 6749 §3.3.
 */
export class UnknownScopeError extends TypeError {
  /** The RFC 7591 §3.2.2 error code, for a host that answers registrations over HTTP. */
  readonly error = 'invalid_client_metadata';
  /**
   * @param scopes the scopes given that the server does not know.
   * @param known the vocabulary, in the order given.
   */
  constructor(readonly scopes: readonly string[], readonly known: readonly string[]) {
    const listed = scopes.map((scope) => JSON.stringify(scope)).join(', ');
    const vocabulary = known.length > 20 ? `${known.slice(0, 20).join(' ')} …` : known.join(' ');
    super(
      `scope ${listed} ${scopes.length === 1 ? 'is' : 'are'} not among the scopes this server knows (${vocabulary}), so no token could ` +
        'ever carry it: invalid_client_metadata (RFC 7591 §3.2.2). Add it to the router\'s scopes option first, or leave it out',
    );
    this.name = 'UnknownScopeError';
  }
}

/**
 * The store cannot do what was asked, and nothing was changed: it lacks an optional method (`deleteClient`),
 * or it is a store written for contract v1 that does not keep a field the operation relies on (the previous
 * secret of a grace period). Saying so beats a half-done operation, such as cutting off an old secret the
 * operator was promised would keep working.
 */
export class StoreCapabilityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreCapabilityError';
  }
}

/**
 * An operation changed the integration (a rotation replaced its secret, a disable, a narrowing of its scopes), but
 * revoking what it had obtained before failed (the store timed out, its disk was full): the tokens work until revoked
 * again, and the operation must not be reported as done, nor as not done. A rotation's new secret, which exists
 * nowhere else, is in `clientSecret` (`null` for the others); the settings an update wrote, in `fields`.
 * @see RFC 6749 §10.1, RFC 7009 §2.1.
 */
export class RevocationIncompleteError extends Error {
  /**
   * A rotation's new secret, or `null`. Not enumerable: a host that logs the error object (`console.error`,
   * `util.inspect`, a logger's error serializer, JSON) must not write the secret with it (RFC 6819 §5.1.4.1.1).
   */
  declare readonly clientSecret: string | null;
  /**
   * @param change what was written, for the message; by default, a rotation's.
   * @param fields the settings an update wrote (camelCase, as `ClientChanges` names them); empty for the others.
   */
  constructor(
    readonly clientId: string,
    clientSecret: string | null,
    cause: unknown,
    change = `the secret of ${JSON.stringify(clientId)} was replaced`,
    readonly fields: readonly string[] = [],
  ) {
    super(
      `${change}, but revoking the tokens obtained before failed` +
        ` (${cause instanceof Error ? cause.message : String(cause)}); they work until revoked: revoke them again (oauth-admin tokens revoke --client)`,
      { cause },
    );
    this.name = 'RevocationIncompleteError';
    Object.defineProperty(this, 'clientSecret', { value: clientSecret, enumerable: false });
  }
}

/**
 * A rotation with a grace period could not keep the previous secret, because other rotations of the integration
 * kept replacing the secret while it ran: nothing was changed but that no previous secret is kept (a stopped one
 * must never come back as previous). Run it again once the others are done.
 * @see RFC 6749 §2.3.1, §10.1.
 */
export class ConcurrentRotationError extends Error {
  constructor(readonly clientId: string) {
    super(`the secret of ${JSON.stringify(clientId)} kept changing while a rotation with a grace period ran (other rotations at the same time); nothing was changed: rotate again`);
    this.name = 'ConcurrentRotationError';
  }
}

/**
 * A rotation with a grace period was asked for while the grace period of an earlier one still runs. The store keeps
 * one previous secret, so a second would cut off the first old secret at once, days before the date its partners
 * were given; nothing was changed. Wait until `previousSecretValidUntil`, or rotate without a grace period (a leak:
 * every old secret stops and every token is revoked).
 * @see RFC 6749 §2.3.1, RFC 6819 §5.2.3.7 (secret rotation).
 */
export class GracePeriodRunningError extends Error {
  constructor(readonly clientId: string, readonly previousSecretValidUntil: Date) {
    super(
      `the previous secret of ${JSON.stringify(clientId)} keeps working until ${previousSecretValidUntil.toISOString()} (an earlier rotation's grace period), ` +
        'and a second grace period would stop it now; nothing was changed: rotate again after that, or without a grace period',
    );
    this.name = 'GracePeriodRunningError';
  }
}
