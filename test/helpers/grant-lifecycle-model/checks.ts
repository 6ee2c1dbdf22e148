// Assertions shared by the commands: RFC error answers, and reconciling what the server answered with the model.
import { expect } from 'vitest';
import { effective, tokenExpiry } from './expiry.js';
import { clientPost, send, type Answer } from './http.js';
import type { MClient, MToken, Model, Real, Window } from './model.js';
import { fact } from './tally.js';

/** RFC 6749 §5.2 error answer (and RFC 7009 §2.2.1 / RFC 7662 §2.3, which defer to it). */
export function expectError(answer: Answer, error: string, context: string): void {
  const status = error === 'invalid_client' ? 401 : 400;
  expect({ status: answer.status, error: answer.json.error }, context).toEqual({ status, error });
  expect(answer.headers.get('content-type'), context).toBe('application/json;charset=UTF-8');
  if (status === 401) expect(answer.headers.get('www-authenticate') ?? '', context).toMatch(/^Basic realm="/);
}

/**
 * Whether an `invalid_grant` may be the store's refusal of a save authorized in the very millisecond of a revocation of
 * the client's tokens: sent after it returned, but begun (or, for a code, authorized) in that same millisecond.
 */
export function sameMillisecondRefusal(answer: Answer, client: MClient, authorizedFrom = answer.at[0]): boolean {
  const refused = answer.status === 400 && answer.json.error === 'invalid_grant';
  const within = Math.min(answer.at[0], authorizedFrom) - client.revokedAt <= 1;
  if (refused && within) fact('a request begun in the millisecond of a revocation was refused');
  return refused && within;
}

/**
 * Reconciles an observation within `at` with the model: a token the model holds live or dead must answer so; where
 * either answer is allowed, the model learns what it can (active: not revoked; refused while surely unexpired: revoked).
 */
export function observe(token: MToken, r: Real, at: Window, active: boolean, context: string): void {
  const expected = effective(token, r, at);
  if (expected !== 'unknown') {
    expect(active ? 'live' : 'dead', context).toBe(expected);
    return;
  }
  if (active) token.state = 'live';
  else if (tokenExpiry(token, r, at) === 'fresh') token.state = 'dead';
}

/** What a token request racing a revocation may answer: issued (and then revoked), or refused as the revocation left it. */
export function expectOneOf(answer: Answer, allowed: readonly string[], context: string): void {
  const outcome = answer.status === 200 ? 'ok' : String(answer.json.error);
  expect(allowed, `${context}: answered ${answer.status} ${answer.text}`).toContain(outcome);
  if (outcome !== 'ok') expectError(answer, outcome, context);
}

/** Asks the server whether a token the model holds dead is refused: by requireBearer and by introspection (the resource server sees any token). */
export async function expectRefused(m: Model, r: Real, value: string, kind: 'access' | 'refresh', context: string): Promise<void> {
  if (kind === 'access') {
    const bearer = await send(r, '/api/me', { headers: { Authorization: `Bearer ${value}` } });
    expect(bearer.status, `${context}: requireBearer after the race`).toBe(401);
  }
  const rs = m.rs;
  const introspected = await clientPost(r, 'introspect', rs.clientId, rs.secret, 'basic', { token: value });
  expect(introspected.json, `${context}: introspection after the race`).toEqual({ active: false });
}
