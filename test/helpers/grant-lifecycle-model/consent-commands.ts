// Commands of the user's side: the connected-applications page, signing out, and withdrawing a consent from code.
import { expect } from 'vitest';
import { hiddenField } from '../browser-flow.js';
import { browse } from './http.js';
import type { Cmd, Model, Real } from './model.js';
import { current, live, pick, reaches } from './model-queries.js';
import { revokeWhere } from './model-revocations.js';
import { fact } from './tally.js';

/**
 * The user's connected applications (GET /oauth2/consents): the login page when signed out; signed in, every enabled
 * integration whose consent the model holds remembered is listed, none whose consent is withdrawn or was never given
 * (a client_id registered again included). `withdraw`: then withdraws one listed there, as withdrawConsent does.
 */
export class ConsentsPage implements Cmd {
  constructor(readonly user: number, readonly withdraw: number | null) {}
  check() { return true; }
  async run(m: Model, r: Real) {
    const userId = pick(m.users, this.user)!;
    const context = `${this} for ${userId}`;
    const page = await browse(r, userId, '/oauth2/consents');
    expect(page.status, context).toBe(200);
    expect(page.text.includes('name="username"'), `${context}: the login page if and only if signed out`).toBe(!r.signedIn.has(userId));
    if (!r.signedIn.has(userId)) return;
    const listed = [...page.text.matchAll(/name="client_id" value="([^"]*)"/g)].map((x) => x[1]!);
    for (const clientId of new Set(m.clients.map((c) => c.clientId))) {
      const c = current(m, clientId);
      const remembered = c?.consents.get(userId) ?? false;
      if (remembered === false) expect(listed, `${context}: ${clientId} listed without a consent`).not.toContain(clientId);
      else if (remembered === true && !c!.disabled) expect(listed, `${context}: ${clientId}'s consent not listed`).toContain(clientId);
    }
    if (this.withdraw === null || listed.length === 0) return;
    const clientId = pick(listed, this.withdraw)!;
    const c = current(m, clientId)!;
    const answer = await browse(r, userId, '/oauth2/consents/withdraw', { csrf_token: hiddenField(page.text, 'csrf_token'), client_id: clientId });
    expect(answer.status, `${context}: withdrawing ${clientId}`).toBe(303);
    fact('consent withdrawn on the consents page');
    c.consents.set(userId, false);
    revokeWhere(m, clientId, (t) => t.grant.client.clientId === clientId && t.grant.userId === userId, (code) => code.client.clientId === clientId && code.userId === userId);
  }
  toString() { return `ConsentsPage(user ${this.user}${this.withdraw === null ? '' : `, withdraw ${this.withdraw}`})`; }
}

/** Signs the browser out (POST /oauth2/logout with the session's CSRF token): its next authorization request asks for the password. */
export class SignOut implements Cmd {
  constructor(readonly user: number) {}
  check() { return true; }
  async run(m: Model, r: Real) {
    const userId = pick(m.users, this.user)!;
    if (!r.signedIn.has(userId)) return;
    const page = await browse(r, userId, '/oauth2/consents');
    const answer = await browse(r, userId, '/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(answer.status, String(this)).toBe(200);
    r.signedIn.delete(userId);
  }
  toString() { return `SignOut(user ${this.user})`; }
}

/** Withdraws a user's consent from code (withdrawConsent): that user's tokens and codes of the integration die. */
export class Withdraw implements Cmd {
  constructor(readonly user: number, readonly client: number) {}
  check(m: Model) { return live(m, (c) => c.flow === 'authorization_code').length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, (x) => x.flow === 'authorization_code'), this.client)!;
    const userId = pick(m.users, this.user)!;
    await r.administer((_a, withdraw) => withdraw(userId, c.clientId), reaches(m, c.clientId, userId));
    c.consents.set(userId, false);
    revokeWhere(m, c.clientId, (t) => t.grant.client.clientId === c.clientId && t.grant.userId === userId, (code) => code.client.clientId === c.clientId && code.userId === userId);
  }
  toString() { return `Withdraw(user ${this.user}, ${this.client})`; }
}
