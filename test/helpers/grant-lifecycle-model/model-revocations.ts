// How a revocation changes the model: the tokens it reaches die, the unredeemed codes it reaches are voided.
import type { MClient, MCode, MGrant, MToken, Model } from './model.js';

/** Every token the revocation reaches dies; every unredeemed code it reaches is voided. */
export function revokeWhere(model: Model, clientId: string, token: (t: MToken) => boolean, code: (c: MCode) => boolean): void {
  // The store refuses saves authorized at or before the revocation's millisecond (README, the conformance rules on
  // tombstones): a request begun in that same millisecond, though sent after the revocation returned, may be refused.
  const now = Date.now();
  for (const c of model.clients) if (c.clientId === clientId) c.revokedAt = now;
  for (const t of model.tokens) if (token(t)) t.state = 'dead';
  for (const c of model.codes) if (!c.used && code(c)) c.voided = true;
}

/** Every token and unredeemed code of the integration dies: a disable, a rotation without grace, a deletion, a narrowing. */
export function revokeIntegration(model: Model, c: MClient): void {
  revokeWhere(model, c.clientId, (t) => t.grant.client.clientId === c.clientId, (code) => code.client.clientId === c.clientId);
}

/** Every token of the grant dies: a refresh token's revocation (RFC 7009 §2.1), a replayed code (RFC 6749 §4.1.2). */
export function revokeGrant(grant: MGrant): void {
  for (const t of grant.tokens) t.state = 'dead';
  if (grant.refresh) grant.refresh.state = 'dead';
}
