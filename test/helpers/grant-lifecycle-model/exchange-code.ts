// The code exchange command (RFC 6749 §4.1.3, RFC 7636 §4.6): one try per code, a replay revokes its grant.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { REDIRECT_URI } from '../app.js';
import { expectError, sameMillisecondRefusal } from './checks.js';
import { expiry } from './expiry.js';
import { clientPost } from './http.js';
import type { Cmd, MCode, Model, Real, SecretKind } from './model.js';
import { credentials, pick, presenter } from './model-queries.js';
import { recordCodeTokens } from './model-issues.js';
import { revokeGrant } from './model-revocations.js';
import { fact } from './tally.js';

/** What an exchange sends as code_verifier: the code's own (none for a code without a challenge), another, or none. */
export type VerifierKind = 'its' | 'wrong' | 'none';

/** The code_verifier field an exchange sends for `kind` (RFC 7636 §4.5). */
export function verifierField(code: MCode, kind: VerifierKind): { code_verifier?: string } {
  if (kind === 'none' || (kind === 'its' && code.verifier === null)) return {};
  return { code_verifier: kind === 'its' ? code.verifier! : randomBytes(32).toString('base64url') };
}

/** Exchanges a code (RFC 6749 §4.1.3): by its client or another, with a right or wrong secret, redirect_uri and verifier. */
export class ExchangeCode implements Cmd {
  constructor(readonly code: number, readonly who: number | 'owner', readonly secret: SecretKind, readonly redirectOk: boolean, readonly verifier: VerifierKind = 'its', readonly fresh = false) {}
  check(m: Model) { return m.codes.length > 0; }
  async run(m: Model, r: Real) {
    // `fresh`: a code not presented before, where there is one (else most picks of a long sequence are replays).
    const unused = m.codes.filter((c) => !c.used);
    const code = pick(this.fresh && unused.length > 0 ? unused : m.codes, this.code)!;
    const p = presenter(m, code.client, this.who);
    if (!p) return;
    const { secret, valid } = credentials(p, this.secret);
    const answer = await clientPost(r, 'token', p.clientId, secret, 'basic', {
      grant_type: 'authorization_code', code: code.value, redirect_uri: this.redirectOk ? REDIRECT_URI : 'https://client.example/other',
      ...verifierField(code, this.verifier),
    });
    const context = `${this} of a code of ${code.client.clientId} by ${p.clientId}`;
    if (!valid) {
      expectError(answer, 'invalid_client', context);
      // README ("The stores also spare the token endpoint its integration lookup"): served from a copy of the
      // integration read before another instance disabled it or rotated its secret, the exchange has used its code
      // up by the time the lookup refuses the client.
      if (r.copiesMayLag && !code.used) code.maybeUsed = true;
      return;
    }
    if (p.flow !== 'authorization_code') return expectError(answer, 'unauthorized_client', context);
    const codeExpiry = expiry(code.issued, r.ttl.code, answer.at, false);
    if (code.used) {
      // RFC 6749 §4.1.2: a code presented twice has leaked; every token issued from it is revoked. Once the code
      // itself has expired a store may have forgotten it: the model then holds its tokens' fate open.
      expectError(answer, 'invalid_grant', context);
      if (!code.grant) return;
      if (codeExpiry === 'fresh') {
        if (code.grant.tokens.some((t) => t.state !== 'dead')) fact('replayed code revoked a live grant');
        revokeGrant(code.grant);
      } else {
        for (const t of [...code.grant.tokens, code.grant.refresh!]) if (t.state === 'live') t.state = 'unknown';
      }
      return;
    }
    code.used = true;
    if (code.maybeUsed && answer.status === 400 && answer.json.error === 'invalid_grant') {
      fact('code used up by a request served from a stale copy');
      return expectError(answer, 'invalid_grant', context);
    }
    if (codeExpiry === 'expired') fact('exchange of an expired code');
    // RFC 7636 §4.6: a wrong or missing verifier, or one sent for a code without a challenge, is invalid_grant, and
    // the code is used up all the same (README Security notes: one try per code).
    const verifierOk = this.verifier === 'its' || (this.verifier === 'none' && code.verifier === null);
    if (!verifierOk) fact(`exchange with ${this.verifier === 'none' ? 'no' : 'a wrong'} code_verifier${code.verifier === null ? ' for a code without a challenge' : ''}`);
    if (p === code.client && this.redirectOk && verifierOk && sameMillisecondRefusal(answer, code.client, code.issued[0])) return;
    if (p !== code.client || !this.redirectOk || !verifierOk || code.voided || codeExpiry === 'expired') return expectError(answer, 'invalid_grant', context);
    if (codeExpiry === 'unknown' && answer.status !== 200) return expectError(answer, 'invalid_grant', context);
    expect(answer.status, `${context}: ${answer.text}`).toBe(200);
    expect(answer.json.token_type, context).toBe('Bearer');
    expect(typeof answer.json.refresh_token, context).toBe('string');
    recordCodeTokens(m, code, answer, 'live');
  }
  toString() { return `ExchangeCode(${this.code}${this.fresh ? ' fresh' : ''}, ${this.who}, ${this.secret}, ${this.redirectOk ? 'same redirect_uri' : 'other redirect_uri'}, verifier ${this.verifier})`; }
}
