// Two operations at once: a token request racing a revocation, or a code exchanged twice.
import { expect } from 'vitest';
import { REDIRECT_URI } from '../app.js';
import { expectError, expectOneOf, expectRefused } from './checks.js';
import { verifierField } from './exchange-code.js';
import { clientPost, send, type Answer } from './http.js';
import type { Cmd, MClient, MToken, Model, Real } from './model.js';
import { current, pick, reaches } from './model-queries.js';
import { recordClientToken, recordCodeTokens } from './model-issues.js';
import { revokeGrant, revokeWhere } from './model-revocations.js';
import { fact } from './tally.js';

type RaceKind =
  | 'double-exchange' | 'exchange-vs-withdraw' | 'exchange-vs-disable' | 'refresh-vs-revoke' | 'refresh-vs-disable'
  | 'refresh-vs-rotate' | 'token-vs-disable' | 'token-vs-rotate' | 'bearer-vs-revoke';
/** Every race a sequence may draw. */
export const RACES: readonly RaceKind[] = [
  'double-exchange', 'exchange-vs-withdraw', 'exchange-vs-disable', 'refresh-vs-revoke', 'refresh-vs-disable',
  'refresh-vs-rotate', 'token-vs-disable', 'token-vs-rotate', 'bearer-vs-revoke',
];

/**
 * Two operations at once, the second `delay` ms after the first: whatever the interleaving, once both are answered
 * nothing the revocation (or the replay) reached is live, a token issued meanwhile included ("a grant revoked while
 * a token is being issued wins", README Security notes; RFC 6749 §4.1.2, §10.5; RFC 7009 §2.1).
 */
export class Race implements Cmd {
  constructor(readonly kind: RaceKind, readonly subject: number, readonly delay: number) {}
  check() { return true; }
  private later<T>(run: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => { setTimeout(() => { run().then(resolve, reject); }, this.delay); });
  }
  async run(m: Model, r: Real) {
    const context = String(this);
    const usable = (c: MClient) => !c.deleted && !c.disabled && current(m, c.clientId) === c;
    if (this.kind.startsWith('double-exchange') || this.kind.startsWith('exchange-')) {
      const code = pick(m.codes.filter((c) => !c.used && usable(c.client)), this.subject);
      if (!code) return;
      const c = code.client;
      const exchange = () => clientPost(r, 'token', c.clientId, c.secret, 'basic', { grant_type: 'authorization_code', code: code.value, redirect_uri: REDIRECT_URI, ...verifierField(code, 'its') });
      code.used = true;
      let answer: Answer;
      if (this.kind === 'double-exchange') {
        const [first, second] = await Promise.all([exchange(), this.later(exchange)]);
        const ok = [first, second].filter((a) => a.status === 200);
        expect(ok.length, `${context}: a code is redeemed at most once`).toBeLessThanOrEqual(1);
        for (const a of [first, second]) if (a.status !== 200) expectError(a, 'invalid_grant', context);
        answer = ok[0] ?? first;
      } else if (this.kind === 'exchange-vs-withdraw') {
        [answer] = await Promise.all([exchange(), this.later(() => r.administer((_a, withdraw) => withdraw(code.userId, c.clientId), reaches(m, c.clientId, code.userId)))]);
        expectOneOf(answer, ['ok', 'invalid_grant'], context);
        c.consents.set(code.userId, false);
        revokeWhere(m, c.clientId, (t) => t.grant.client.clientId === c.clientId && t.grant.userId === code.userId, (x) => x.client.clientId === c.clientId && x.userId === code.userId);
      } else {
        [answer] = await Promise.all([exchange(), this.later(() => r.administer((a) => a.disableClient(c.clientId), reaches(m, c.clientId)))]);
        expectOneOf(answer, ['ok', 'invalid_grant', 'invalid_client'], context);
        c.disabled = true;
        c.previous = null;
        revokeWhere(m, c.clientId, (t) => t.grant.client.clientId === c.clientId, (x) => x.client.clientId === c.clientId);
      }
      if (answer.status === 200) {
        fact(`race: ${this.kind} issued, then revoked`);
        const { access, refresh } = recordCodeTokens(m, code, answer, 'dead');
        await expectRefused(m, r, access.value, 'access', context);
        await expectRefused(m, r, refresh.value, 'refresh', context);
      }
      return;
    }
    if (this.kind.startsWith('refresh-')) {
      const t = pick(m.tokens.filter((x) => x.kind === 'refresh' && x.state === 'live' && usable(x.grant.client)), this.subject);
      if (!t) return;
      const c = t.grant.client;
      const refresh = () => clientPost(r, 'token', c.clientId, c.secret, 'basic', { grant_type: 'refresh_token', refresh_token: t.value });
      let answer: Answer;
      if (this.kind === 'refresh-vs-revoke') {
        let revoked: Answer;
        [answer, revoked] = await Promise.all([refresh(), this.later(() => clientPost(r, 'revoke', c.clientId, c.secret, 'basic', { token: t.value }))]);
        expect(revoked.status, context).toBe(200);
        expectOneOf(answer, ['ok', 'invalid_grant'], context);
        revokeGrant(t.grant);
      } else if (this.kind === 'refresh-vs-disable') {
        [answer] = await Promise.all([refresh(), this.later(() => r.administer((a) => a.disableClient(c.clientId), reaches(m, c.clientId)))]);
        expectOneOf(answer, ['ok', 'invalid_grant', 'invalid_client'], context);
        c.disabled = true;
        c.previous = null;
        revokeWhere(m, c.clientId, (x) => x.grant.client.clientId === c.clientId, (x) => x.client.clientId === c.clientId);
      } else {
        let rotated: { clientSecret: string };
        [answer, rotated] = await Promise.all([refresh(), this.later(() => r.administer((a) => a.rotateSecret(c.clientId), reaches(m, c.clientId)))]);
        expectOneOf(answer, ['ok', 'invalid_grant', 'invalid_client'], context);
        if (c.previous !== null) c.retired.push(c.previous);
        c.previous = null;
        c.retired.push(c.secret);
        c.secret = rotated.clientSecret;
        revokeWhere(m, c.clientId, (x) => x.grant.client.clientId === c.clientId, (x) => x.client.clientId === c.clientId);
      }
      await expectRefused(m, r, t.value, 'refresh', context);
      if (answer.status === 200) {
        fact(`race: ${this.kind} issued, then revoked`);
        const access: MToken = { value: answer.json.access_token as string, kind: 'access', grant: t.grant, state: 'dead', issued: answer.at };
        t.grant.tokens.push(access);
        m.tokens.push(access);
        await expectRefused(m, r, access.value, 'access', context);
      }
      return;
    }
    if (this.kind.startsWith('token-')) {
      const c = pick(m.clients.filter((x) => x.flow === 'client_credentials' && usable(x)), this.subject);
      if (!c) return;
      const token = () => clientPost(r, 'token', c.clientId, c.secret, 'basic', { grant_type: 'client_credentials' });
      let answer: Answer;
      if (this.kind === 'token-vs-disable') {
        [answer] = await Promise.all([token(), this.later(() => r.administer((a) => a.disableClient(c.clientId), reaches(m, c.clientId)))]);
        c.disabled = true;
        c.previous = null;
      } else {
        let rotated: { clientSecret: string };
        [answer, rotated] = await Promise.all([token(), this.later(() => r.administer((a) => a.rotateSecret(c.clientId), reaches(m, c.clientId)))]);
        if (c.previous !== null) c.retired.push(c.previous);
        c.previous = null;
        c.retired.push(c.secret);
        c.secret = rotated.clientSecret;
      }
      expectOneOf(answer, ['ok', 'invalid_grant', 'invalid_client'], context);
      revokeWhere(m, c.clientId, (x) => x.grant.client.clientId === c.clientId, () => false);
      if (answer.status === 200) {
        fact(`race: ${this.kind} issued, then revoked`);
        const access = recordClientToken(m, c, c.scopes, answer, 'dead');
        await expectRefused(m, r, access.value, 'access', context);
      }
      return;
    }
    // bearer-vs-revoke: the cached token may be served while the revocation runs, never once it has returned.
    const t = pick(m.tokens.filter((x) => x.kind === 'access' && x.state === 'live' && usable(x.grant.client)), this.subject);
    if (!t) return;
    const c = t.grant.client;
    const [during, revoked] = await Promise.all([
      send(r, '/api/me', { headers: { Authorization: `Bearer ${t.value}` } }),
      this.later(() => clientPost(r, 'revoke', c.clientId, c.secret, 'basic', { token: t.value })),
    ]);
    expect([200, 401], context).toContain(during.status);
    expect(revoked.status, context).toBe(200);
    t.state = 'dead';
    await expectRefused(m, r, t.value, 'access', context);
  }
  toString() { return `Race(${this.kind}, ${this.subject}, ${this.delay} ms)`; }
}
