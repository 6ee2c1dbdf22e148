// Token requests other than the code exchange: client_credentials (RFC 6749 §4.4) and refresh (RFC 6749 §6).
import { expect } from 'vitest';
import { expectError, observe, sameMillisecondRefusal } from './checks.js';
import { effective, tokenExpiry } from './expiry.js';
import { clientPost } from './http.js';
import type { Cmd, MToken, Method, Model, Real, SecretKind } from './model.js';
import { recordClientToken } from './model-issues.js';
import { credentials, ofFlow, pick, presenter } from './model-queries.js';
import { READ, SIGN } from './settings.js';
import { fact } from './tally.js';

/** A client_credentials token request (RFC 6749 §4.4), with a right or wrong secret and perhaps a scope. */
export class ClientCredentials implements Cmd {
  constructor(readonly client: number, readonly secret: SecretKind, readonly method: Method, readonly anyFlow: boolean, readonly scope: string | null = null) {}
  check(m: Model) { return ofFlow(m, 'client_credentials', this.anyFlow).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(ofFlow(m, 'client_credentials', this.anyFlow), this.client)!;
    const { secret, valid } = credentials(c, this.secret);
    const answer = await clientPost(r, 'token', c.clientId, secret, this.method, {
      grant_type: 'client_credentials', ...(this.scope === null ? {} : { scope: this.scope }),
    });
    const context = `${this} on ${c.clientId} [${c.scopes.join(' ')}]`;
    if (!valid) return expectError(answer, 'invalid_client', context);
    if (c.flow !== 'client_credentials') return expectError(answer, 'unauthorized_client', context);
    // RFC 6749 §3.3: a scope the server does not know, or the integration may not be granted, is invalid_scope.
    const requested = this.scope === null ? null : this.scope.split(' ');
    const known = [READ, SIGN];
    if (requested && requested.some((x) => !known.includes(x) || (c.scopes.length > 0 && !c.scopes.includes(x)))) {
      return expectError(answer, 'invalid_scope', context);
    }
    if (sameMillisecondRefusal(answer, c)) return;
    expect(answer.status, `${context}: ${answer.text}`).toBe(200);
    const scope = requested ?? c.scopes;
    expect(answer.json.token_type, context).toBe('Bearer');
    expect(answer.json.refresh_token, `${context}: RFC 6749 §4.4.3, no refresh token`).toBeUndefined();
    recordClientToken(m, c, scope, answer, 'live');
  }
  toString() { return `ClientCredentials(${this.client}, ${this.secret}, ${this.method}${this.anyFlow ? ', any flow' : ''}${this.scope === null ? '' : `, scope ${this.scope}`})`; }
}

/** A refresh request (RFC 6749 §6), perhaps for a narrower scope, by the token's client or another. */
export class Refresh implements Cmd {
  constructor(readonly token: number, readonly who: number | 'owner', readonly secret: SecretKind, readonly scope: string | null = null, readonly live = false) {}
  check(m: Model) { return m.tokens.some((t) => t.kind === 'refresh'); }
  async run(m: Model, r: Real) {
    // `live`: one the model holds live, where there is one (most refresh tokens of a long sequence are dead).
    const all = m.tokens.filter((x) => x.kind === 'refresh');
    const alive = all.filter((x) => x.state === 'live');
    const t = pick(this.live && alive.length > 0 ? alive : all, this.token)!;
    const owner = t.grant.client;
    const p = presenter(m, owner, this.who);
    if (!p) return;
    const { secret, valid } = credentials(p, this.secret);
    const answer = await clientPost(r, 'token', p.clientId, secret, 'basic', {
      grant_type: 'refresh_token', refresh_token: t.value, ...(this.scope === null ? {} : { scope: this.scope }),
    });
    const context = `${this} of a refresh token of ${owner.clientId} [${t.grant.scope.join(' ')}] by ${p.clientId}`;
    fact(`refresh: ${effective(t, r, answer.at)} token, ${valid ? 'right' : 'wrong'} secret, ${p === owner ? 'owner' : 'other'}, ${answer.status}`);
    if (!valid) return expectError(answer, 'invalid_client', context);
    if (p.flow !== 'authorization_code') return expectError(answer, 'unauthorized_client', context);
    if (p !== owner) return expectError(answer, 'invalid_grant', context);
    // RFC 6749 §6: a narrower scope may be asked for, none "not originally granted" (an all-access grant: any the
    // server knows); the token is looked up first, so a dead one is invalid_grant whatever it asks for.
    const requested = this.scope === null ? null : this.scope.split(' ');
    const scopeOk = requested === null || requested.every((x) => [READ, SIGN].includes(x) && (t.grant.scope.length === 0 || t.grant.scope.includes(x)));
    if (!scopeOk) {
      const known = effective(t, r, answer.at);
      if (known === 'dead') return expectError(answer, 'invalid_grant', context);
      if (known === 'live') return expectError(answer, 'invalid_scope', context);
      observe(t, r, answer.at, answer.json.error === 'invalid_scope', context);
      return expectError(answer, answer.json.error === 'invalid_scope' ? 'invalid_scope' : 'invalid_grant', context);
    }
    if (effective(t, r, answer.at) === 'unknown') {
      observe(t, r, answer.at, answer.status === 200, context);
      if (answer.status !== 200) return expectError(answer, 'invalid_grant', context);
    }
    if (t.state !== 'dead' && tokenExpiry(t, r, answer.at) === 'expired') fact('refresh with an expired, unrevoked refresh token');
    if (effective(t, r, answer.at) === 'live' && sameMillisecondRefusal(answer, owner)) return;
    if (effective(t, r, answer.at) === 'dead') return expectError(answer, 'invalid_grant', context);
    expect(answer.status, `${context}: ${answer.text}`).toBe(200);
    if (t.grant.tokens.length > 1) fact('refresh token used again');
    // SPEC §4.5: refresh tokens are not rotated, and the old one stays valid (README, Options: refreshTokenTtl).
    expect(answer.json.refresh_token, context).toBeUndefined();
    if (requested !== null) fact(`refresh asked for ${requested.length === t.grant.scope.length ? 'its grant\'s scope' : 'a narrower scope'}`);
    const access: MToken = {
      value: answer.json.access_token as string, kind: 'access', grant: t.grant, state: 'live', issued: answer.at, ...(requested === null ? {} : { scope: requested }),
    };
    t.grant.tokens.push(access);
    m.tokens.push(access);
  }
  toString() { return `Refresh(${this.token}${this.live ? ' live' : ''}, ${this.who}, ${this.secret}${this.scope === null ? '' : `, scope ${this.scope}`})`; }
}
