// Pure lookups in the model: which integration answers, which a command picks, what a secret or revocation reaches.
import type { Flow, MClient, Model, SecretKind } from './model.js';

/** The integrations not deleted that satisfy `predicate`. */
export function live(model: Model, predicate: (client: MClient) => boolean): MClient[] {
  return model.clients.filter((c) => !c.deleted && predicate(c));
}

/** The registration that answers for a client_id now (the latest generation), if any. */
export function current(model: Model, clientId: string): MClient | undefined {
  return [...model.clients].reverse().find((c) => c.clientId === clientId && !c.deleted);
}

/** The `index`-th item, counted round, or undefined when there is none. */
export function pick<T>(items: readonly T[], index: number): T | undefined {
  return items.length === 0 ? undefined : items[index % items.length];
}

/** Whether a revocation of `clientId`'s tokens (for `userId` only, if given) reaches a token the model holds not dead. */
export function reaches(model: Model, clientId: string, userId?: string): boolean {
  return model.tokens.some((t) => t.state !== 'dead' && t.grant.client.clientId === clientId && (userId === undefined || t.grant.userId === userId));
}

/** The secret a client presents, and whether the model says it authenticates. */
export function credentials(client: MClient, kind: SecretKind): { secret: string; valid: boolean } {
  if (kind === 'current') return { secret: client.secret, valid: !client.disabled && !client.deleted };
  if (kind === 'previous') {
    if (client.previous !== null) return { secret: client.previous, valid: !client.disabled && !client.deleted };
    const retired = client.retired.at(-1);
    if (retired !== undefined) return { secret: retired, valid: false };
  }
  return { secret: `${client.secret.slice(0, -4)}XXXX`, valid: false };
}
/** The clients of `flow`, or with `anyFlow` every client: most requests come from an integration of the right flow. */
export function ofFlow(m: Model, flow: Flow, anyFlow: boolean): MClient[] {
  return anyFlow ? m.clients : m.clients.filter((c) => c.flow === flow);
}

/** `owner`: the client_id the code, grant or token was issued to (its answering registration); else another client. */
export function presenter(m: Model, owner: MClient, who: number | 'owner'): MClient | undefined {
  if (who === 'owner') return current(m, owner.clientId) ?? owner;
  return pick(m.clients.filter((c) => c.clientId !== owner.clientId), who);
}
