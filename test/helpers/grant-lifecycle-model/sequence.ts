// The start of one sequence: users of its own, the resource server, and two integrations of each flow in the model.
import { Register } from './admin-commands.js';
import type { Harness } from './harness.js';
import type { MClient, Model, Real } from './model.js';
import { READ, SIGN } from './settings.js';
import type { Variant } from './variants.js';

/** The model and the real side of sequence number `sequence` on `harness`, with the integrations every command can start from. */
export async function startSequence(harness: Harness, variant: Variant, sequence: number): Promise<{ model: Model; real: Real }> {
  const tag = `m-${process.pid}-${Date.now().toString(36)}-${sequence}`;
  const rs: MClient = {
    clientId: harness.rs.clientId, flow: 'client_credentials', generation: 0, secret: harness.rs.secret, previous: null, retired: [],
    disabled: false, deleted: false, consents: new Map(), consentScopes: new Map(), scopes: [], revokedAt: 0,
  };
  const model: Model = { clients: [], tokens: [], codes: [], users: [`${tag}-a`, `${tag}-b`], generations: 0, rs };
  const real: Real = {
    base: harness.base, browsers: new Map(), signedIn: new Set(), ttl: variant.ttl, administer: harness.administer,
    copiesMayLag: variant.instances === 2,
  };
  // Two integrations of each flow to start from, so that every command has subjects from the first one.
  for (const [flow, scopes] of [
    ['authorization_code', []], ['authorization_code', [READ]], ['client_credentials', []], ['client_credentials', [READ, SIGN]],
  ] as const) {
    await new Register(flow, null, scopes).run(model, real);
  }
  return { model, real };
}
