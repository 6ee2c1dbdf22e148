// What a grant handler receives and returns.
import type { Request, Response } from 'express';
import type { ClientFlow, GrantType, OAuthClient, Store } from '../stores/contract.js';
import type { UserAuth } from '../user-auth.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { FormParams } from '../http/read-form.js';
import type { KeyRing } from '../jwt/key-ring.js';

/** Everything one token request needs, passed explicitly (no all-purpose context object). */
export interface GrantContext {
  readonly store: Store;
  readonly userAuth: UserAuth;
  readonly options: ResolvedOptions;
  readonly issuer: ResolvedIssuer;
  readonly client: OAuthClient;
  /**
   * The revision of the store's integration copy `client` was authenticated from, when it was (only for a grant
   * with `clientCopies`): the save refuses the tokens if the integration has changed since.
   */
  readonly clientRevision?: string | undefined;
  /**
   * Present only when `client` came from a copy: authenticates the request again against the integration looked
   * up, as if no copy had been read, and resolves to this context with that integration (and no revision, and
   * no `lookedUp`). Its refusal (`invalid_client`, `unauthorized_client`) is then the request's answer. One
   * lookup per request: later calls share the first one's outcome.
   */
  readonly lookedUp?: (() => Promise<GrantContext>) | undefined;
  readonly params: FormParams;
  /** The signing keys when `accessTokenFormat` is 'jwt' (RFC 9068); absent for opaque tokens. */
  readonly keyRing?: KeyRing | undefined;
  /** When the token request began, before the client was read: the default `authorizedAt` of its tokens. */
  readonly startedAt: Date;
  /**
   * The token request, read for the audit events' source address (`req.ip`), only when heard, and for its connection
   * (connectionGone).
   */
  readonly req: Request;
  /**
   * The token request's answer, read only to tell whether it can still reach the client: not once the host has answered
   * (answeredByHost: connect-timeout's 503) nor once the client has hung up (connectionGone). Nothing is saved for an
   * answer no one hears, and what was saved meanwhile is revoked.
   */
  readonly res: Response;
  /** What this grant's `prefetch` started, when it has one: a read under way while the client was authenticated. */
  readonly prefetched?: Promise<unknown> | undefined;
}

/** The successful token response (RFC 6749 §5.1, SPEC §2 "Token response"). */
export interface TokenResponseBody {
  readonly access_token: string;
  readonly refresh_token?: string;
  readonly expires_in: number;
  readonly token_type: 'Bearer';
  readonly scope?: string;
}

/** One grant type: which integration flow may use it, and how it is served. */
export interface GrantHandler {
  readonly grantType: GrantType;
  /** SPEC §5.5: the integration's configured flow decides which grants it may use. */
  readonly flow: ClientFlow;
  /**
   * Whether the client may be authenticated from the store's copy (`Store.clientCopies`), and how a copy that
   * proves stale is settled:
   * - `'rerun'`: the whole `handle` runs again, once, after a lookup, when the save refuses the copy's revision
   *   or the copy's settings or scopes refuse the request (`SettingsRefusalError`, `InvalidScopeError`;
   *   client_credentials, refresh_token: they read, then save);
   * - `'resume'`: `handle` cannot run twice (the code exchange consumed its code), so it judges again itself,
   *   through `GrantContext.lookedUp`, what the copy decided: the integration's settings and the save.
   *
   * Under either, any other OAuth error is answered only once a lookup has authenticated the request too.
   */
  readonly clientCopies: false | 'rerun' | 'resume';
  /**
   * A store read that depends on the request alone, started before the client is authenticated so that its
   * round trip overlaps authentication's (two in turn become one on a networked store). Reads only: nothing is
   * written, consumed or answered before the client is known, and a failed authentication is answered without
   * waiting for it. A code is never read so: consuming it is a write (RFC 6749 §4.1.3, the client first).
   */
  prefetch?(store: Store, params: FormParams): Promise<unknown> | undefined;
  handle(context: GrantContext): Promise<TokenResponseBody>;
}
