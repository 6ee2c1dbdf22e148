// Commands of the authorization endpoint: a browser's authorization request (with PKCE and scopes), and prompt=none.
import { expect } from 'vitest';
import { REDIRECT_URI } from '../app.js';
import { hiddenField } from '../browser-flow.js';
import { createPkcePair } from '../spec-requests.js';
import { allow, covering, scopeChoice } from './consent-rules.js';
import { browse, pathOf } from './http.js';
import type { Cmd, Model, Real } from './model.js';
import { current, ofFlow, pick } from './model-queries.js';
import { PASSWORD } from './settings.js';
import { fact } from './tally.js';

/** An authorization request of `cmd` (its picks of client, user, PKCE and scope) to one of `clients`, as a browser sends it. */
function authorizationRequest(
  m: Model, cmd: { readonly client: number; readonly user: number; readonly pkce: boolean; readonly scopeIndex: number | null },
  clients: ReturnType<typeof ofFlow>, prompt: 'consent' | 'none' | null,
) {
  const c = pick(clients, cmd.client)!;
  const userId = pick(m.users, cmd.user)!;
  const context = `${String(cmd)} on ${c.clientId} for ${userId}`;
  const state = `s${Math.random().toString(36).slice(2)}`;
  const pkce = cmd.pkce ? createPkcePair() : null;
  const verifier = pkce?.verifier ?? null;
  const requested = scopeChoice((current(m, c.clientId) ?? c).scopes, cmd.scopeIndex);
  const query = new URLSearchParams({
    response_type: 'code', client_id: c.clientId, redirect_uri: REDIRECT_URI, state, ...(prompt === null ? {} : { prompt }),
    ...(requested === null ? {} : { scope: requested.join(' ') }),
    ...(pkce === null ? {} : { code_challenge: pkce.challenge, code_challenge_method: 'S256' }),
  });
  return { c, userId, context, state, verifier, requested, query };
}

/** A browser's authorization request (RFC 6749 §4.1.1): the login page when signed out, the consent page unless a consent covers it. */
export class Authorize implements Cmd {
  constructor(
    readonly client: number, readonly user: number, readonly decision: 'allow' | 'deny', readonly promptConsent: boolean, readonly anyFlow: boolean,
    readonly pkce = false, readonly scopeIndex: number | null = null,
  ) {}
  check(m: Model) { return ofFlow(m, 'authorization_code', this.anyFlow).length > 0; }
  async run(m: Model, r: Real) {
    const { c, userId, context, state, verifier, requested, query } = authorizationRequest(
      m, this, ofFlow(m, 'authorization_code', this.anyFlow), this.promptConsent ? 'consent' : null,
    );
    let page = await browse(r, userId, `/oauth2/authorize?${query}`);
    const from = page.at[0];
    // The id may name a newer registration: it answers (`current`), this generation's record is gone.
    const answering = current(m, c.clientId);
    if (!answering || answering.disabled || answering.flow !== 'authorization_code') {
      // RFC 6749 §4.1.2.1: an unknown (deleted, disabled) client_id or an unregistered redirect_uri is never redirected to.
      expect(page.status, context).toBeGreaterThanOrEqual(400);
      expect(page.headers.get('location'), context).toBeNull();
      return;
    }
    const loginShown = page.status === 200 && page.text.includes('name="username"');
    expect(loginShown, `${context}: the login page if and only if the browser is signed out`).toBe(!r.signedIn.has(userId));
    if (loginShown) {
      const posted = await browse(r, userId, '/oauth2/login', {
        csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: userId, password: PASSWORD,
      });
      expect(posted.status, context).toBe(303);
      r.signedIn.add(userId);
      page = await browse(r, userId, pathOf(posted.headers.get('location'), r.base));
    }
    const pending = requested ?? answering.scopes;
    const remembered = covering(answering, userId, pending);
    let callback: URL;
    if (page.status === 302) {
      expect(this.promptConsent, `${context}: prompt=consent always shows the page`).toBe(false);
      if (remembered === false) expect.fail(`${context}: no consent remembered, yet no consent page`);
      fact(`a remembered consent answered a ${requested === null ? 'request without scope' : 'scoped request'}`);
      answering.consents.set(userId, true);
      callback = new URL(page.headers.get('location')!);
    } else {
      expect(page.status, `${context}: ${page.text.slice(0, 300)}`).toBe(200);
      expect(page.text, context).toContain('name="decision"');
      if (remembered === true && !this.promptConsent) expect.fail(`${context}: consent remembered, yet the consent page`);
      if (remembered === false && answering.consents.get(userId) === true) fact('a remembered consent too narrow for the request: the page');
      if (remembered === 'unknown' && !this.promptConsent) answering.consents.set(userId, false);
      const decided = await browse(r, userId, '/oauth2/consent', {
        csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), decision: this.decision,
      });
      expect(decided.status, context).toBe(303);
      callback = new URL(decided.headers.get('location')!);
      if (this.decision === 'deny') {
        expect(callback.searchParams.get('error'), context).toBe('access_denied');
        expect(callback.searchParams.get('state'), context).toBe(state);
        // A Deny leaves the consent remembered as it was.
        return;
      }
      allow(answering, userId, pending);
    }
    expect(`${callback.origin}${callback.pathname}`, context).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state'), context).toBe(state);
    const code = callback.searchParams.get('code');
    expect(code, context).toBeTruthy();
    m.codes.push({ value: code!, client: answering, userId, scope: pending, issued: [from, Date.now()], verifier, used: false, voided: false, grant: null });
  }
  toString() { return `Authorize(${this.client}, user ${this.user}, ${this.decision}${this.promptConsent ? ', prompt=consent' : ''}${this.anyFlow ? ', any flow' : ''}${this.pkce ? ', PKCE' : ''}${this.scopeIndex === null ? '' : `, scope ${this.scopeIndex}`})`; }
}

/**
 * An authorization request with `prompt=none` (OpenID Connect Core §3.1.2.1, README "What the endpoints do"): a code
 * when the browser is signed in and a remembered consent covers the request, else `login_required` or
 * `consent_required`, and never a page.
 */
export class SilentAuthorize implements Cmd {
  constructor(readonly client: number, readonly user: number, readonly pkce: boolean, readonly scopeIndex: number | null = null) {}
  check(m: Model) { return ofFlow(m, 'authorization_code', false).length > 0; }
  async run(m: Model, r: Real) {
    const { c, userId, context, state, verifier, requested, query } = authorizationRequest(
      m, this, ofFlow(m, 'authorization_code', false), 'none',
    );
    const page = await browse(r, userId, `/oauth2/authorize?${query}`);
    const answering = current(m, c.clientId);
    if (!answering || answering.disabled || answering.flow !== 'authorization_code') {
      expect(page.status, context).toBeGreaterThanOrEqual(400);
      expect(page.headers.get('location'), context).toBeNull();
      return;
    }
    expect(page.status, `${context}: ${page.text.slice(0, 300)}`).toBe(302);
    const callback = new URL(page.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`, context).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state'), context).toBe(state);
    const error = callback.searchParams.get('error');
    if (!r.signedIn.has(userId)) return expect(error, `${context}: signed out`).toBe('login_required');
    const pending = requested ?? answering.scopes;
    const remembered = covering(answering, userId, pending);
    if (error !== null) {
      expect(error, context).toBe('consent_required');
      expect(remembered, `${context}: a remembered consent answers without a page`).not.toBe(true);
      if (remembered === 'unknown') answering.consents.set(userId, false);
      return;
    }
    expect(remembered, `${context}: a code without a consent`).not.toBe(false);
    answering.consents.set(userId, true);
    const code = callback.searchParams.get('code');
    expect(code, context).toBeTruthy();
    fact('prompt=none answered with a code');
    m.codes.push({ value: code!, client: answering, userId, scope: pending, issued: [page.at[0], Date.now()], verifier, used: false, voided: false, grant: null });
  }
  toString() { return `SilentAuthorize(${this.client}, user ${this.user}${this.pkce ? ', PKCE' : ''}${this.scopeIndex === null ? '' : `, scope ${this.scopeIndex}`})`; }
}
