// Whether an authorization request asks for a sign-in newer than the one the session has (prompt=login, max_age).
import type { Request } from 'express';
import { InvalidRequestError } from '../errors.js';
import { readOAuthSession } from './oauth-session.js';

/** At most 10 digits: over 300 years in seconds, and never a number JavaScript rounds. */
const MAX_AGE = /^[0-9]{1,10}$/;

/**
 * The request's `max_age` in seconds, or `undefined` without one.
 * @throws InvalidRequestError unless a non-negative integer, sent once. @see OpenID Connect Core §3.1.2.1.
 */
export function maxAgeOf(query: URLSearchParams): number | undefined {
  // RFC 6749 §3.1: a parameter sent without a value is omitted, so `max_age=&max_age=60` is max_age 60.
  const values = query.getAll('max_age').filter((value) => value !== '');
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new InvalidRequestError('max_age must be sent once');
  if (!MAX_AGE.test(values[0]!)) throw new InvalidRequestError('max_age must be a non-negative number of seconds');
  return Number(values[0]);
}

/**
 * How long the mark of a sign-in answers its request: the 303 back to the authorization endpoint is followed at once,
 * and a mark left by one that never was (a closed tab) must not make an old sign-in count as fresh later.
 */
const SIGNED_IN_FOR_MS = 60_000;

/**
 * Takes the mark of a sign-in made through the login form for the request with this validated query (the login POST
 * sets it, `startSignedInSession`), and whether it was there. Taken whatever the request asks, so a mark serves the
 * request that led to the sign-in, once, within a minute, and not a later copy of it.
 */
export function takeSignInFor(req: Request, query: string, now = Date.now()): boolean {
  const data = readOAuthSession(req);
  if (data?.signedInFor === undefined) return false;
  const { query: signedInFor, at } = data.signedInFor;
  delete data.signedInFor;
  return signedInFor === query && now - at >= 0 && now - at < SIGNED_IN_FOR_MS;
}

/**
 * Whether the router's own sign-in is too old for the request: `prompt=login` asks for one made for it, `max_age`
 * for one at most that many seconds old (OpenID Connect Core §3.1.2.1: "the Authorization Server MUST attempt to
 * actively re-authenticate the End-User"). A sign-in the login form made for this very request always satisfies it.
 */
export function needsSignInAgain(req: Request, prompts: readonly string[], maxAge: number | undefined, signedInForThis: boolean, now = Date.now()): boolean {
  if (signedInForThis) return false;
  if (prompts.includes('login')) return true;
  if (maxAge === undefined) return false;
  const signedInAt = readOAuthSession(req)?.signedInAt ?? 0;
  return now - signedInAt > maxAge * 1000;
}
