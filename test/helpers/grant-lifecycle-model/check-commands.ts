// Commands that only ask: introspection (RFC 7662), requireBearer (RFC 6750), and every token at once.
import { expect } from 'vitest';
import { expectError, observe } from './checks.js';
import { tokenExpiry } from './expiry.js';
import { clientPost, send } from './http.js';
import type { Cmd, Model, Real, SecretKind } from './model.js';
import { scopeOf } from './model.js';
import { credentials, pick, presenter } from './model-queries.js';
import { SIGN } from './settings.js';
import { fact } from './tally.js';

/** An introspection request (RFC 7662 §2.1) by the token's client, another, or the resource server. */
export class Introspect implements Cmd {
  constructor(readonly token: number, readonly who: number | 'owner' | 'resource-server', readonly secret: SecretKind) {}
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const t = pick(m.tokens, this.token)!;
    const owner = t.grant.client;
    const rs = m.rs;
    const p = this.who === 'resource-server' ? rs : presenter(m, owner, this.who);
    if (!p) return;
    const { secret, valid } = credentials(p, this.secret);
    const answer = await clientPost(r, 'introspect', p.clientId, secret, 'basic', { token: t.value });
    const context = `${this} of a ${t.kind} token of ${owner.clientId} by ${p.clientId}`;
    if (!valid) return expectError(answer, 'invalid_client', context);
    expect(answer.status, context).toBe(200);
    // RFC 7662 §2.2 (and README): a client sees its own tokens, a listed resource server any; the rest is inactive.
    if (p !== owner && p !== rs) return expect(answer.json, context).toEqual({ active: false });
    observe(t, r, answer.at, answer.json.active === true, context);
    if (answer.json.active !== true) return expect(answer.json, context).toEqual({ active: false });
    expect(answer.json.client_id, context).toBe(owner.clientId);
    expect(answer.json.sub, context).toBe(t.grant.userId ?? undefined);
    // RFC 7662 §2.2: scope only for a token that has one (all-access tokens have none).
    expect(answer.json.scope, context).toBe(scopeOf(t).length > 0 ? scopeOf(t).join(' ') : undefined);
    if (t.kind === 'access') expect(answer.json.token_type, context).toBe('Bearer');
    else expect(answer.json.token_use, context).toBe('refresh_token');
  }
  toString() { return `Introspect(${this.token}, ${this.who}, ${this.secret})`; }
}

/** A request to the API behind requireBearer (RFC 6750 §2.1), once or twice (the second one from its cache). */
export class Bearer implements Cmd {
  constructor(readonly token: number, readonly twice: boolean, readonly route: 'me' | 'sign' = 'me') {}
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const t = pick(m.tokens, this.token)!;
    const context = `${this} with a ${t.kind} token of ${t.grant.client.clientId} (${t.state}, scope [${scopeOf(t).join(' ')}])`;
    // requireBearer({ scope }) passes an all-access token or one that has the scope; a live token without it is 403 (RFC 6750 §3.1).
    const entitled = this.route === 'me' || scopeOf(t).length === 0 || scopeOf(t).includes(SIGN);
    for (let i = 0; i < (this.twice ? 2 : 1); i += 1) {
      const answer = await send(r, `/api/${this.route}`, { headers: { Authorization: `Bearer ${t.value}` } });
      if (t.kind === 'refresh') {
        // A refresh token is never an access token (RFC 6750 §3.1).
        expect(answer.status, context).toBe(401);
      } else {
        const expired = tokenExpiry(t, r, answer.at) === 'expired' && t.state !== 'dead';
        fact(`bearer with a ${expired ? 'expired, unrevoked' : t.state} access token${i === 1 ? ' (again)' : ''}`);
        observe(t, r, answer.at, answer.status === 200 || answer.status === 403, context);
      }
      if (answer.status === 403) {
        expect(entitled, `${context}: refused for its scope`).toBe(false);
        expect(answer.headers.get('www-authenticate') ?? '', context).toMatch(/^Bearer realm="[^"]*", error="insufficient_scope"/);
      } else if (answer.status === 200) {
        expect(entitled, `${context}: served without the scope`).toBe(true);
        expect(answer.json.clientId, context).toBe(t.grant.client.clientId);
        expect(answer.json.userId, context).toBe(t.grant.userId);
      } else {
        expect(answer.status, `${context}: ${answer.text}`).toBe(401);
        expect(answer.headers.get('www-authenticate') ?? '', context).toMatch(/^Bearer realm="[^"]*", error="invalid_token"/);
      }
    }
  }
  toString() { return `Bearer(${this.token}${this.twice ? ', twice' : ''}${this.route === 'sign' ? ', scope route' : ''})`; }
}

/**
 * Checks every token the model holds at once, through requireBearer (access tokens) and the resource server's
 * introspection (all): a revocation that reached too far (a live token of another grant, user or integration
 * refused) or not far enough shows here even when no later command picks that token.
 */
export class CheckAll implements Cmd {
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const rs = m.rs;
    for (const t of m.tokens) {
      const context = `${this}: a ${t.kind} token of ${t.grant.client.clientId} for ${t.grant.userId ?? 'no user'}`;
      if (t.kind === 'access') {
        const bearer = await send(r, '/api/me', { headers: { Authorization: `Bearer ${t.value}` } });
        expect([200, 401], `${context}: ${bearer.text}`).toContain(bearer.status);
        observe(t, r, bearer.at, bearer.status === 200, `${context}: requireBearer`);
      }
      const introspected = await clientPost(r, 'introspect', rs.clientId, rs.secret, 'basic', { token: t.value });
      observe(t, r, introspected.at, introspected.json.active === true, `${context}: introspection`);
    }
    fact('every token checked');
  }
  toString() { return 'CheckAll'; }
}
