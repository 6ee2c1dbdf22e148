// How fast-check draws each command and its picks, and how often: the command mix of every variant.
import fc from 'fast-check';
import { Delete, Disable, Enable, Register, RotateSecret, UpdateScopes } from './admin-commands.js';
import { Authorize, SilentAuthorize } from './authorize-commands.js';
import { Bearer, CheckAll, Introspect } from './check-commands.js';
import { ConsentsPage, SignOut, Withdraw } from './consent-commands.js';
import { ExchangeCode, type VerifierKind } from './exchange-code.js';
import type { Cmd, Flow, Method, SecretKind } from './model.js';
import { Race, RACES } from './race-command.js';
import { AdminRevoke, Revoke } from './revocation-commands.js';
import { READ, SCOPE_SETS, SIGN } from './settings.js';
import { ClientCredentials, Refresh } from './token-commands.js';

/** A pick among the model's subjects, taken modulo their count at run time. */
export const index = fc.nat({ max: 30 });
const secretKind = fc.constantFrom<SecretKind>(...Array<SecretKind>(8).fill('current'), 'previous', 'wrong');
const anyFlow = fc.constantFrom(false, false, false, false, true);
const scopeSet = fc.constantFrom(...SCOPE_SETS);
/** What a client_credentials request asks for: nothing (its registered scopes), a known scope, both, or one the server does not know. */
const requestedScope = fc.constantFrom<string | null>(null, null, null, READ, SIGN, `${READ} ${SIGN}`, 'envelopes:delete');
const method = fc.constantFrom<Method>('basic', 'post');
const who = fc.oneof({ weight: 4, arbitrary: fc.constant<'owner'>('owner') }, { weight: 1, arbitrary: index });

/** Each arbitrary repeated `weight` times: fc.commands picks among its arbitraries uniformly. */
export function weighted(weight: number, arbitrary: fc.Arbitrary<Cmd>): fc.Arbitrary<Cmd>[] {
  return Array.from({ length: weight }, () => arbitrary);
}

/** The command arbitraries; `extra` adds some (the sleeps of the short-lived variant). */
export function commandArbitraries(): fc.Arbitrary<Cmd>[] {
  return [
  ...weighted(1, fc.tuple(fc.constantFrom<Flow>('authorization_code', 'authorization_code', 'client_credentials'), fc.option(index, { freq: 4 }), scopeSet)
    .map(([flow, reuse, scopes]) => new Register(flow, reuse, scopes))),
  ...weighted(3, fc.tuple(index, secretKind, method, anyFlow, requestedScope).map(([c, s, me, a, sc]) => new ClientCredentials(c, s, me, a, sc))),
  ...weighted(4, fc.tuple(index, index, fc.constantFrom<'allow' | 'deny'>('allow', 'allow', 'allow', 'deny'), fc.boolean(), anyFlow, fc.boolean(), fc.option(index, { freq: 2 }))
    .map(([c, u, d, p, a, pkce, sc]) => new Authorize(c, u, d, p, a, pkce, sc))),
  ...weighted(2, fc.tuple(index, index, fc.boolean(), fc.option(index, { freq: 2 })).map(([c, u, pkce, sc]) => new SilentAuthorize(c, u, pkce, sc))),
  fc.tuple(index, fc.option(index, { freq: 2 })).map(([u, w]) => new ConsentsPage(u, w)),
  index.map((u) => new SignOut(u)),
  ...weighted(4, fc.tuple(index, who, secretKind, fc.constantFrom(true, true, true, false), fc.constantFrom<VerifierKind>('its', 'its', 'its', 'its', 'wrong', 'none'), fc.boolean())
    .map(([c, w, s, ok, v, f]) => new ExchangeCode(c, w, s, ok, v, f))),
  ...weighted(4, fc.tuple(index, who, secretKind, requestedScope, fc.boolean()).map(([t, w, s, sc, l]) => new Refresh(t, w, s, sc, l))),
  ...weighted(2, fc.tuple(index, who, secretKind, fc.constantFrom<'none' | 'access_token' | 'refresh_token'>('none', 'access_token', 'refresh_token'), method)
    .map(([t, w, s, h, me]) => new Revoke(t, w, s, h, me))),
  ...weighted(3, fc.tuple(index, fc.oneof(who, fc.constant<'resource-server'>('resource-server')), secretKind).map(([t, w, s]) => new Introspect(t, w, s))),
  fc.constant(new CheckAll()),
  ...weighted(5, fc.tuple(index, fc.boolean(), fc.constantFrom<'me' | 'sign'>('me', 'me', 'sign')).map(([t, twice, route]) => new Bearer(t, twice, route))),
  fc.tuple(index, scopeSet).map(([c, sc]) => new UpdateScopes(c, sc)),
  ...weighted(3, fc.tuple(fc.constantFrom(...RACES), index, fc.constantFrom(0, 0, 1, 2, 4)).map(([k, i, d]) => new Race(k, i, d))),
  index.map((c) => new Disable(c)),
  ...weighted(2, index.map((c) => new Enable(c))),
  fc.tuple(index, fc.boolean()).map(([c, g]) => new RotateSecret(c, g)),
  index.map((c) => new Delete(c)),
  fc.tuple(index, index).map(([u, c]) => new Withdraw(u, c)),
  fc.tuple(index, fc.option(index)).map(([c, u]) => new AdminRevoke(c, u)),
  ];
}
