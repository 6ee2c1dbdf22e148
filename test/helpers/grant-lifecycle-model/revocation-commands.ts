// Revocation paths: a client's RFC 7009 request, and the administrator's revokeTokens.
import { expect } from 'vitest';
import { expectError, observe } from './checks.js';
import { clientPost } from './http.js';
import type { Cmd, Method, Model, Real, SecretKind } from './model.js';
import { credentials, live, pick, presenter, reaches } from './model-queries.js';
import { revokeGrant, revokeWhere } from './model-revocations.js';

/** A revocation request (RFC 7009 §2.1) by the token's client or another, with or without a hint. */
export class Revoke implements Cmd {
  constructor(readonly token: number, readonly who: number | 'owner', readonly secret: SecretKind, readonly hint: 'none' | 'access_token' | 'refresh_token', readonly method: Method) {}
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const t = pick(m.tokens, this.token)!;
    const owner = t.grant.client;
    const p = presenter(m, owner, this.who);
    if (!p) return;
    const { secret, valid } = credentials(p, this.secret);
    const answer = await clientPost(r, 'revoke', p.clientId, secret, this.method, {
      token: t.value, ...(this.hint === 'none' ? {} : { token_type_hint: this.hint }),
    });
    const context = `${this} of a ${t.kind} token of ${owner.clientId} by ${p.clientId}`;
    if (!valid) return expectError(answer, 'invalid_client', context);
    if (p !== owner) {
      // RFC 7009 §2.1: another client's live token is refused; an invalid one is answered 200 (§2.2).
      observe(t, r, answer.at, answer.status === 400, context);
      if (answer.status === 400) return expectError(answer, 'invalid_request', context);
      expect(answer.status, context).toBe(200);
      return;
    }
    expect(answer.status, `${context}: ${answer.text}`).toBe(200);
    // RFC 7009 §2.1: a refresh token revokes its grant, access tokens included; an access token itself only.
    if (t.kind === 'refresh') revokeGrant(t.grant);
    else t.state = 'dead';
  }
  toString() { return `Revoke(${this.token}, ${this.who}, ${this.secret}, hint ${this.hint}, ${this.method})`; }
}

/** The administrator's revokeTokens for an integration, or for one of its users. */
export class AdminRevoke implements Cmd {
  constructor(readonly client: number, readonly user: number | null) {}
  check(m: Model) { return live(m, () => true).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, () => true), this.client)!;
    const userId = this.user === null ? undefined : pick(m.users, this.user)!;
    await r.administer((a) => a.revokeTokens(userId === undefined ? { clientId: c.clientId } : { clientId: c.clientId, userId }), reaches(m, c.clientId, userId));
    revokeWhere(
      m, c.clientId,
      (t) => t.grant.client.clientId === c.clientId && (userId === undefined || t.grant.userId === userId),
      (code) => code.client.clientId === c.clientId && (userId === undefined || code.userId === userId),
    );
  }
  toString() { return `AdminRevoke(${this.client}${this.user === null ? '' : `, user ${this.user}`})`; }
}
