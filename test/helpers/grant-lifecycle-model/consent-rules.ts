// The model of remembered consents: which scopes a request asks for, what a consent covers, what an Allow leaves.
import type { MClient } from './model.js';
import { pick } from './model-queries.js';
import { READ, SIGN } from './settings.js';

/**
 * The scopes an authorization request may ask for, by index: none (the integration's registered scopes), or a
 * non-empty set within them (any, for an all-access integration), always in the order READ, SIGN.
 */
export function scopeChoice(registered: readonly string[], index: number | null): readonly string[] | null {
  if (index === null) return null;
  const within = registered.length === 0 ? [READ, SIGN] : registered;
  const choices = [[READ], [SIGN], [READ, SIGN]].filter((set) => set.every((x) => within.includes(x)));
  return pick(choices, index) ?? null;
}

/** Whether the user's remembered consent covers `requested` (README "Scopes": an all-access one covers all; none stands in for an all-access request). */
export function covering(c: MClient, userId: string, requested: readonly string[]): boolean | 'unknown' {
  const remembered = c.consents.get(userId) ?? false;
  if (remembered !== true) return remembered;
  const consented = c.consentScopes.get(userId) ?? [];
  return consented.length === 0 || (requested.length > 0 && requested.every((x) => consented.includes(x)));
}

/**
 * An Allow on the consent page: the consent keeps what was approved before, within what the integration may still be
 * granted, beside what was just approved (consent-scope-after-allow.ts: incremental authorization).
 */
export function allow(c: MClient, userId: string, approved: readonly string[]): void {
  const before = c.consents.get(userId) === true ? c.consentScopes.get(userId)! : null;
  let after = approved;
  if (approved.length > 0 && before !== null) {
    if (before.length === 0) after = c.scopes.length === 0 ? [] : approved;
    else {
      const kept = before.filter((x) => approved.includes(x) || c.scopes.length === 0 || c.scopes.includes(x));
      after = [...kept, ...approved.filter((x) => !kept.includes(x))];
    }
  }
  c.consents.set(userId, true);
  c.consentScopes.set(userId, after);
}
