// Administrative commands: register, rescope, disable, enable, rotate a secret, delete (README "Administration from code").
import { expect } from 'vitest';
import { REDIRECT_URI } from '../app.js';
import type { Cmd, Flow, Model, Real } from './model.js';
import { current, live, pick, reaches } from './model-queries.js';
import { revokeIntegration } from './model-revocations.js';

/** Registers an integration, perhaps under a deleted one's client_id, which must inherit nothing of it. */
export class Register implements Cmd {
  constructor(readonly flow: Flow, readonly reuseDeleted: number | null, readonly scopes: readonly string[] = []) {}
  check(m: Model) { return m.clients.filter((c) => !c.deleted).length < 6; }
  async run(m: Model, r: Real) {
    // Re-registering a deleted client_id: the new integration must inherit none of the old one's tokens, codes or consents.
    const reused = this.reuseDeleted === null ? undefined : pick(m.clients.filter((c) => c.deleted && !current(m, c.clientId)), this.reuseDeleted);
    const { client, clientSecret } = await r.administer((a) => a.createClient({
      name: 'Model integration', flow: this.flow,
      redirectUris: this.flow === 'authorization_code' ? [REDIRECT_URI] : [],
      allowedScopes: this.scopes,
      ...(reused ? { clientId: reused.clientId } : {}),
    }), false);
    m.generations += 1;
    m.clients.push({
      clientId: client.clientId, flow: this.flow, generation: m.generations, secret: clientSecret, previous: null, retired: [],
      disabled: false, deleted: false, consents: new Map(), consentScopes: new Map(), scopes: this.scopes, revokedAt: 0,
    });
  }
  toString() { return `Register(${this.flow}${this.reuseDeleted === null ? '' : `, reuse ${this.reuseDeleted}`}, [${this.scopes.join(' ')}])`; }
}

/**
 * Replaces an integration's scopes. Taking a scope away, or scoping an all-access integration, revokes every token
 * and code it holds (README "The lifecycle"); widening revokes nothing. Whether a remembered consent still covers
 * the new scopes is not a rule the model holds.
 */
export class UpdateScopes implements Cmd {
  constructor(readonly client: number, readonly scopes: readonly string[]) {}
  check(m: Model) { return live(m, () => true).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, () => true), this.client)!;
    const narrowing = (c.scopes.length === 0 && this.scopes.length > 0) || c.scopes.some((x) => !this.scopes.includes(x));
    const updated = await r.administer((a) => a.updateClient(c.clientId, { allowedScopes: this.scopes }), narrowing && reaches(m, c.clientId));
    expect(updated.tokensRevoked, String(this)).toBe(narrowing);
    c.scopes = this.scopes;
    // A remembered consent stays as it was: it still covers what it covered (a scoped request within it).
    if (narrowing) revokeIntegration(m, c);
  }
  toString() { return `UpdateScopes(${this.client}, [${this.scopes.join(' ')}])`; }
}

/** Disables an integration: every token and unredeemed code it holds is revoked. */
export class Disable implements Cmd {
  constructor(readonly client: number) {}
  check(m: Model) { return live(m, () => true).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, () => true), this.client)!;
    await r.administer((a) => a.disableClient(c.clientId), reaches(m, c.clientId));
    c.disabled = true;
    c.previous = null;
    revokeIntegration(m, c);
  }
  toString() { return `Disable(${this.client})`; }
}

/** Enables a disabled integration again: nothing it lost comes back. */
export class Enable implements Cmd {
  constructor(readonly client: number) {}
  check(m: Model) { return live(m, (c) => c.disabled).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, (x) => x.disabled), this.client)!;
    await r.administer((a) => a.enableClient(c.clientId), false);
    c.disabled = false;
  }
  toString() { return `Enable(${this.client})`; }
}

/** Rotates a secret, with a grace period (the old one still authenticates) or without (every token is revoked). */
export class RotateSecret implements Cmd {
  constructor(readonly client: number, readonly grace: boolean) {}
  check(m: Model) { return live(m, () => true).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, () => true), this.client)!;
    if (this.grace && c.previous !== null) {
      // The store keeps one previous secret: a second grace period while one runs is refused, changing nothing.
      await expect(r.administer((a) => a.rotateSecret(c.clientId, { gracePeriodSeconds: 3600 }), false)).rejects.toThrow(/grace/i);
      return;
    }
    const rotated = await r.administer((a) => a.rotateSecret(c.clientId, this.grace ? { gracePeriodSeconds: 3600 } : {}), !this.grace && reaches(m, c.clientId));
    expect(rotated.tokensRevoked).toBe(!this.grace);
    if (this.grace) {
      c.previous = c.secret;
    } else {
      if (c.previous !== null) c.retired.push(c.previous);
      c.previous = null;
      revokeIntegration(m, c);
    }
    c.retired.push(c.secret);
    c.secret = rotated.clientSecret;
  }
  toString() { return `RotateSecret(${this.client}${this.grace ? ', grace' : ''})`; }
}

/** Deletes an integration: every token and unredeemed code it holds is revoked. */
export class Delete implements Cmd {
  constructor(readonly client: number) {}
  check(m: Model) { return live(m, () => true).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, () => true), this.client)!;
    await r.administer((a) => a.deleteClient(c.clientId), reaches(m, c.clientId));
    c.deleted = true;
    c.disabled = true;
    revokeIntegration(m, c);
  }
  toString() { return `Delete(${this.client})`; }
}
