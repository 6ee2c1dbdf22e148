// What a grant handler receives and returns.
import type { Request } from 'express';
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
  readonly params: FormParams;
  /** The signing keys when `accessTokenFormat` is 'jwt' (RFC 9068); absent for opaque tokens. */
  readonly keyRing?: KeyRing | undefined;
  /** When the token request began, before the client was read: the default `authorizedAt` of its tokens. */
  readonly startedAt: Date;
  /** The token request, read only for the audit events' source address (`req.ip`), and only when heard. */
  readonly req: Request;
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
  handle(context: GrantContext): Promise<TokenResponseBody>;
}
