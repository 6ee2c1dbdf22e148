// Commands that let time pass, for the short-lived variants: a plain sleep, and a use after a sure expiry.
import { expect } from 'vitest';
import { REDIRECT_URI } from '../app.js';
import { expectError, observe } from './checks.js';
import { verifierField } from './exchange-code.js';
import { effective, SLACK_MS } from './expiry.js';
import { clientPost, send } from './http.js';
import type { Cmd, Model, Real } from './model.js';
import { credentials, current, pick } from './model-queries.js';
import { fact } from './tally.js';

/** Waits, so that short-lived tokens and codes expire: the only command that lets time pass on purpose. */
export class Sleep implements Cmd {
  constructor(readonly ms: number) {}
  check() { return true; }
  async run() { await new Promise((resolve) => setTimeout(resolve, this.ms)); }
  toString() { return `Sleep(${this.ms} ms)`; }
}

/**
 * Uses a live token (so requireBearer caches it) or holds a fresh code, waits until it has surely expired, and uses it
 * again: refused, whatever the bearer cache holds (README: cached "each until its expiresAt"; RFC 6749 §4.1.2, §6).
 */
export class Expire implements Cmd {
  constructor(readonly kind: 'access' | 'refresh' | 'code', readonly subject: number) {}
  check() { return true; }
  private static async until(deadline: number): Promise<void> {
    const wait = deadline - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  async run(m: Model, r: Real) {
    const context = String(this);
    if (this.kind === 'code') {
      const code = pick(m.codes.filter((c) => !c.used), this.subject);
      if (!code) return;
      await Expire.until(code.issued[1] + r.ttl.code * 1000 + SLACK_MS + 5);
      code.used = true;
      const c = code.client;
      const answer = await clientPost(r, 'token', c.clientId, c.secret, 'basic', { grant_type: 'authorization_code', code: code.value, redirect_uri: REDIRECT_URI, ...verifierField(code, 'its') });
      if (credentials(c, 'current').valid && c.flow === 'authorization_code' && current(m, c.clientId) === c) {
        expectError(answer, 'invalid_grant', `${context}: an expired code`);
        fact('expired code refused');
      }
      return;
    }
    const t = pick(m.tokens.filter((x) => x.kind === this.kind && effective(x, r, [Date.now(), Date.now()]) === 'live'), this.subject);
    if (!t) return;
    const deadline = Math.ceil((t.issued[1] + (this.kind === 'access' ? r.ttl.access : r.ttl.refresh) * 1000) / 1000) * 1000 + SLACK_MS + 5;
    if (this.kind === 'access') {
      const before = await send(r, '/api/me', { headers: { Authorization: `Bearer ${t.value}` } });
      observe(t, r, before.at, before.status === 200, `${context}: before expiry`);
      await Expire.until(deadline);
      const after = await send(r, '/api/me', { headers: { Authorization: `Bearer ${t.value}` } });
      expect(after.status, `${context}: requireBearer after expiry${before.status === 200 ? ' (it was cached)' : ''}`).toBe(401);
      fact(`expired access token refused${before.status === 200 ? ' after a cached use' : ''}`);
    } else {
      await Expire.until(deadline);
      const c = t.grant.client;
      const answer = await clientPost(r, 'token', c.clientId, c.secret, 'basic', { grant_type: 'refresh_token', refresh_token: t.value });
      expectError(answer, 'invalid_grant', `${context}: an expired refresh token`);
      fact('expired refresh token refused');
    }
    const rs = m.rs;
    const introspected = await clientPost(r, 'introspect', rs.clientId, rs.secret, 'basic', { token: t.value });
    expect(introspected.json, `${context}: introspection after expiry`).toEqual({ active: false });
  }
  toString() { return `Expire(${this.kind}, ${this.subject})`; }
}
