// Authorization requests of a signed-in user waiting for consent in the session: bounded in number, size and age.
import type { Request } from 'express';
import { createRandomToken } from '../crypto/random-token.js';
import { oauthSession, readOAuthSession, type PendingAuthorization } from './oauth-session.js';

/** The newest requests a session keeps (one per open consent tab); an older one's form then expires. */
export const MAX_PENDING = 10;
const MAX_AGE_MS = 10 * 60 * 1000;
// What savePendingRequest hands out (createRandomToken): anything else, `__proto__` included, is no request of ours.
const REQUEST_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * Stores a validated request and returns its id (for the consent form's hidden `request_id`). Only the
 * newest MAX_PENDING of the last ten minutes are kept, each holding validated parameters only, so a session
 * stays small whatever a client or an attacker sends.
 */
export function savePendingRequest(req: Request, pending: PendingAuthorization): string {
  const data = oauthSession(req);
  const id = createRandomToken();
  data.pending = withNewest(data.pending, id, pending, (p) => p.createdAt);
  return id;
}

/** `entries` with `value` added under `id`: only the newest MAX_PENDING of the last ten minutes, by `at`. */
function withNewest<T>(entries: Record<string, T> | undefined, id: string, value: T, at: (entry: T) => number): Record<string, T> {
  const now = Date.now();
  const kept = Object.entries(entries ?? {})
    .filter(([, entry]) => now - at(entry) < MAX_AGE_MS)
    .sort(([, a], [, b]) => at(a) - at(b))
    .slice(-(MAX_PENDING - 1));
  return Object.fromEntries([...kept, [id, value]]);
}

/** The request stored under `id` in this session, whatever its age, or `null`. */
function storedPendingRequest(req: Request, id: unknown): PendingAuthorization | null {
  if (typeof id !== 'string' || !REQUEST_ID.test(id)) return null;
  return readOAuthSession(req)?.pending?.[id] ?? null;
}

const isExpired = (pending: PendingAuthorization): boolean => Date.now() - pending.createdAt >= MAX_AGE_MS;

/** The pending request, or `null` when unknown or older than ten minutes. */
export function findPendingRequest(req: Request, id: unknown): PendingAuthorization | null {
  const pending = storedPendingRequest(req, id);
  return pending && !isExpired(pending) ? pending : null;
}

/**
 * A pending request kept in the session but past its ten minutes, or `null`. Not to be answered (findPendingRequest
 * refuses it): the consent form only starts it afresh from its validated query, so a user who read the page slowly
 * is shown it again rather than an error (WCAG 2.2.1: a time limit the user can extend).
 */
export function findExpiredPendingRequest(req: Request, id: unknown): PendingAuthorization | null {
  const pending = storedPendingRequest(req, id);
  return pending && isExpired(pending) ? pending : null;
}

/** Removes a pending request: each is answered once. */
export function deletePendingRequest(req: Request, id: string): void {
  const data = readOAuthSession(req);
  if (data?.pending) delete data.pending[id];
}

/**
 * Records that this session answered request `id` (Allow or Deny), as it leaves the pending ones: a later POST of its
 * form (a Back button, a second tab) can then tell "answered, this way" from "expired" or "dropped". Bounded as the
 * pending requests are: the newest MAX_PENDING of the last ten minutes.
 */
export function markRequestAnswered(req: Request, id: string, decision: 'allow' | 'deny'): void {
  const data = oauthSession(req);
  data.answered = withNewest(data.answered, id, { decision, at: Date.now() }, (a) => a.at);
}

/** How this session answered request `id` in the last ten minutes, or `null`. */
export function answeredDecision(req: Request, id: unknown): 'allow' | 'deny' | null {
  if (typeof id !== 'string' || !REQUEST_ID.test(id)) return null;
  const answered = readOAuthSession(req)?.answered?.[id];
  return answered && Date.now() - answered.at < MAX_AGE_MS ? answered.decision : null;
}
