// What the model holds of integrations, grants, tokens and codes, and of the server and browsers it drives.
import type fc from 'fast-check';
import type { OAuthAdmin } from '../../../src/admin/create-oauth-admin.js';
import type { FetchBrowser } from '../fetch-cookie-jar.js';

/** The flow an integration is registered for. */
export type Flow = 'authorization_code' | 'client_credentials';
/** What the model knows of a token, a grant or a consent: `unknown` where a rule allows either answer. */
export type Known = 'live' | 'dead' | 'unknown';

/** One registration of a client_id: a re-registration under the same id is another generation, owning nothing of the first. */
export interface MClient {
  readonly clientId: string;
  readonly flow: Flow;
  readonly generation: number;
  secret: string;
  /** The secret a graceful rotation replaced, while its grace period runs. */
  previous: string | null;
  /** Secrets that no longer authenticate. */
  readonly retired: string[];
  disabled: boolean;
  deleted: boolean;
  /** userId → whether a remembered consent skips the consent page. */
  readonly consents: Map<string, boolean | 'unknown'>;
  /** userId → the scope its remembered consent holds (none: all-access), while `consents` says true. */
  readonly consentScopes: Map<string, readonly string[]>;
  /** When the model last saw a revocation of this client_id's tokens return (ms since the epoch). */
  revokedAt: number;
  /** Its registered scopes; none: all-access (README "Scopes"). */
  scopes: readonly string[];
}

/** A token the server issued: its grant, and what the model knows of its revocation. */
export interface MToken {
  readonly value: string;
  readonly kind: 'access' | 'refresh';
  readonly grant: MGrant;
  /** Whether it is revoked; expiry is judged apart, from `issued`. */
  state: Known;
  /** Between when its request was sent and when it was answered (ms since the epoch). */
  readonly issued: Window;
  /** Its scope, where a refresh asked for less than its grant's (RFC 6749 §6); else its grant's. */
  readonly scope?: readonly string[];
}

/** The scope a token carries. */
export function scopeOf(t: MToken): readonly string[] {
  return t.scope ?? t.grant.scope;
}

/** Two instants bracketing a server-side moment: a request's sending and its answer. */
export type Window = readonly [from: number, to: number];

/** Lifetimes of the server under test, in seconds. */
export interface Lifetimes {
  readonly access: number;
  readonly refresh: number;
  readonly code: number;
}

/** A grant: the tokens one code exchange or client_credentials request issued, and those refreshed from it. */
export interface MGrant {
  readonly client: MClient;
  readonly userId: string | null;
  /** The scope its tokens carry; none: all-access. */
  readonly scope: readonly string[];
  readonly tokens: MToken[];
  refresh: MToken | null;
}

/** An authorization code the server issued, and what became of it. */
export interface MCode {
  readonly value: string;
  readonly client: MClient;
  readonly userId: string;
  readonly scope: readonly string[];
  readonly issued: Window;
  /** The PKCE code_verifier whose S256 challenge the authorization request sent, or null for none (RFC 7636). */
  readonly verifier: string | null;
  used: boolean;
  /** Perhaps used up by a request that a stale copy of its integration let through (second-instance variant). */
  maybeUsed?: boolean;
  /** Voided by a revocation before its exchange (disable, rotation, withdrawal, delete). */
  voided: boolean;
  grant: MGrant | null;
}

/** What one sequence has done: its integrations, tokens, codes and users. */
export interface Model {
  readonly clients: MClient[];
  readonly tokens: MToken[];
  readonly codes: MCode[];
  readonly users: readonly string[];
  generations: number;
  /** The resource server: listed for introspection, it sees any token (RFC 7662 §2.2). */
  readonly rs: MClient;
}

/** The server under test and this sequence's browsers (one cookie jar per user). */
export interface Real {
  readonly base: string;
  /** One browser (cookie jar) per user. */
  readonly browsers: Map<string, FetchBrowser>;
  /** The users whose browser holds the router's sign-in: signed in at an authorization request, not signed out since. */
  readonly signedIn: Set<string>;
  readonly ttl: Lifetimes;
  /** Whether the router's copies of integrations may be older than a change another instance made. */
  readonly copiesMayLag: boolean;
  /**
   * Runs an administrative operation: through this router, or through a second instance on the same data. After a
   * revoking one on a second instance it waits for this instance's revocation feed to move (README: a revocation by
   * another instance is refused "once its notification arrives"; at once on SQLite).
   */
  administer<T>(op: (admin: OAuthAdmin, withdraw: (userId: string, clientId: string) => Promise<void>) => Promise<T>, revokes: boolean): Promise<T>;
}
/** Which secret a request presents: the current one, the one before it, or a wrong one. */
export type SecretKind = 'current' | 'previous' | 'wrong';
/** How a client authenticates: client_secret_basic or client_secret_post (RFC 6749 §2.3.1). */
export type Method = 'basic' | 'post';
/**
 * A command of the sequences: sends its requests, checks the answers and updates the model. Each picks its subjects by
 * index at run time, so sequences shrink well.
 */
export type Cmd = fc.AsyncCommand<Model, Real>;
