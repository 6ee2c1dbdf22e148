// Authorization requests waiting in the session for login and consent: bounded in number and age.
import type { Request } from 'express';
import { createRandomToken } from '../crypto/random-token.js';
import { oauthSession, type PendingAuthorization } from './oauth-session.js';

const MAX_PENDING = 10;
const MAX_AGE_MS = 10 * 60 * 1000;

/** Stores a validated request and returns its id (for the forms' hidden `request_id`). */
export function savePendingRequest(req: Request, pending: PendingAuthorization): string {
  const data = oauthSession(req);
  const now = Date.now();
  const kept = Object.entries(data.pending ?? {})
    .filter(([, p]) => now - p.createdAt < MAX_AGE_MS)
    .sort(([, a], [, b]) => a.createdAt - b.createdAt)
    .slice(-(MAX_PENDING - 1));
  const id = createRandomToken();
  data.pending = Object.fromEntries([...kept, [id, pending]]);
  return id;
}

/** The pending request, or `null` when unknown or older than ten minutes. */
export function findPendingRequest(req: Request, id: unknown): PendingAuthorization | null {
  if (typeof id !== 'string') return null;
  const pending = oauthSession(req).pending?.[id];
  if (!pending || Date.now() - pending.createdAt >= MAX_AGE_MS) return null;
  return pending;
}

/** Removes a pending request: each is answered once. */
export function deletePendingRequest(req: Request, id: string): void {
  const data = oauthSession(req);
  if (data.pending) delete data.pending[id];
}
