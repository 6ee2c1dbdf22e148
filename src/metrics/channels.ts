// The diagnostics channels the router reports timings and error answers on: free when nobody subscribes.
import * as diagnosticsChannel from 'node:diagnostics_channel';
import type { OAuthEvents } from '../events/oauth-events.js';

/**
 * The names of the `node:diagnostics_channel` channels the router publishes on. `express-oauth-router/metrics`
 * subscribes to them; any other observer (a tracer) may too. Nothing is measured or built while a channel has
 * no subscriber, so a host without metrics pays one property read per request.
 */
export const DIAGNOSTICS_CHANNELS = {
  /** One `TokenRequestMessage` per answered token request (RFC 6749 §3.2). */
  tokenRequest: 'express-oauth-router:token-request',
  /** One `BearerCheckMessage` per request `requireBearer` decided on (RFC 6750 §2.1). */
  bearerCheck: 'express-oauth-router:bearer-check',
  /** One `ErrorAnswerMessage` per OAuth error answered (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1). */
  errorAnswer: 'express-oauth-router:error',
  /**
   * One `BcryptWorkerFailureMessage` per bcrypt worker thread that failed with client secret checks under way (RFC 6749
   * §5.2 `server_error`): process-wide, as the worker is shared by every router of the process.
   */
  bcryptWorkerFailure: 'express-oauth-router:bcrypt-worker-failure',
} as const;

/** Where an error was answered: the endpoint, or `bearer` for `requireBearer` on the host's routes. */
export type ErrorEndpoint = 'authorization' | 'token' | 'revocation' | 'introspection' | 'bearer';

/** What every message carries: which router sent it (its `events`, so one observer can tell routers apart). */
export interface ChannelMessageBase {
  readonly source: OAuthEvents;
}

/** A token request answered. Never carries the client, the user or a token. */
export interface TokenRequestMessage extends ChannelMessageBase {
  /** A grant type the endpoint serves, or `unknown` (missing, unsupported, or the body was unreadable). */
  readonly grantType: string;
  /**
   * `undelivered`: the request ended with no answer of the router's, the host having answered it (connect-timeout's
   * 503) or its client having hung up; what it saved was revoked (`token.revoked`, cause `undelivered`).
   */
  readonly outcome: 'success' | 'error' | 'undelivered';
  /** From the request reaching the endpoint to its answer being handed to Node. */
  readonly seconds: number;
}

/** A bearer check decided: the request went on to the host's handler (`success`) or was refused (`error`). */
export interface BearerCheckMessage extends ChannelMessageBase {
  readonly outcome: 'success' | 'error';
  readonly seconds: number;
  /**
   * Where the decision came from: `hit`, the router's memory (the bearer cache, or the JWT verifier's memory of
   * tokens it verified); `miss`, a store lookup or a JWT signature verification; `null` when the request carried no
   * well-formed Bearer token (refused before any of them).
   */
  readonly cache: 'hit' | 'miss' | null;
}

/** An OAuth error answered. `error` is an RFC error code, or `missing_token` for a request without credentials. */
export interface ErrorAnswerMessage extends ChannelMessageBase {
  readonly endpoint: ErrorEndpoint;
  readonly error: string;
  readonly status: number;
}

/**
 * How the worker that checks imported bcrypt secrets failed: it stopped (`crash`: an uncaught error, out of memory,
 * terminated), answered none of its checks for the watchdog's bound and was ended (`hang`), or stopped or went silent
 * before it had loaded bcryptjs (`start_failed`). A worker that stops while idle lost nothing and is not reported.
 */
export type BcryptWorkerFailureReason = 'crash' | 'hang' | 'start_failed';

/**
 * A bcrypt worker thread failed; its checks were answered 500 `server_error`. Names no router (`source`): one worker
 * serves every router of the process, and its checks may have come from several. Never carries a secret or a hash.
 */
export interface BcryptWorkerFailureMessage {
  readonly reason: BcryptWorkerFailureReason;
  /** The checks it had under way, each now answered 500. */
  readonly checks: number;
}

/** The channels, made once: `channel()` returns the same object for a name anyway. */
export const tokenRequestChannel = diagnosticsChannel.channel(DIAGNOSTICS_CHANNELS.tokenRequest);
export const bearerCheckChannel = diagnosticsChannel.channel(DIAGNOSTICS_CHANNELS.bearerCheck);
export const errorAnswerChannel = diagnosticsChannel.channel(DIAGNOSTICS_CHANNELS.errorAnswer);
export const bcryptWorkerFailureChannel = diagnosticsChannel.channel(DIAGNOSTICS_CHANNELS.bcryptWorkerFailure);

/**
 * Reports an error answer when anyone listens. Call it where the answer is sent, once per answer.
 * @see RFC 6749 §4.1.2.1, §5.2, RFC 6750 §3.1 (the error codes).
 */
export function reportErrorAnswer(source: OAuthEvents, endpoint: ErrorEndpoint, error: string, status: number): void {
  if (errorAnswerChannel.hasSubscribers) {
    errorAnswerChannel.publish({ source, endpoint, error, status } satisfies ErrorAnswerMessage);
  }
}
