// Model-based test: random sequences of grant-lifecycle operations, sent over real HTTP to the router on each built-in store, checked against a small model of what must hold.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import express from 'express';
import fc from 'fast-check';
import pg from 'pg';
import { createClient } from 'redis';
import { builtInStores, type OpenedStore, type StoreCase } from '../helpers/built-in-stores.js';
import { createOAuthRouter } from '../../src/router.js';
import type { OAuthRouter } from '../../src/types.js';
import type { UserAuth } from '../../src/user-auth.js';
import { createOAuthAdmin, type OAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { withdrawConsent } from '../../src/consents/withdraw-consent.js';
import type { Store } from '../../src/stores/contract.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';

/*
 * What the model holds (README "What the endpoints do", "Administration from code", Security notes):
 * - a token is live until revoked or expired: revoking an access token ends it alone, a refresh token its grant
 *   (RFC 7009 §2.1); a replayed code ends its grant (RFC 6749 §4.1.2); disabling, rotating without a grace period,
 *   deleting, `revokeTokens` and withdrawing consent end every token they reach and void unredeemed codes; enabling
 *   brings none back; a client_id registered again after a delete inherits nothing;
 * - refresh tokens are not rotated (SPEC §4.5): one stays valid however often it is used;
 * - a code is used up by its first exchange, right or wrong: a wrong or missing PKCE verifier, or one sent for a code
 *   issued without a challenge, is invalid_grant (RFC 7636 §4.6) and leaves nothing to redeem;
 * - JWT access tokens under `jwt: { checkRevocation: true }` answer exactly as opaque ones do (README "JWT access
 *   tokens (RFC 9068)": requireBearer then requires the token's record, through the same exact cache);
 * - requireBearer and introspection agree with the model on every token, its bearer cache included (exact on this
 *   instance; another instance's revocation counts once this instance's feed has moved, at once on SQLite);
 * - every refusal is the RFC's status and code, nothing answers 5xx and the router logs no error.
 * The client authentication flood limit is off: the sequences present wrong secrets on purpose.
 */

/**
 * Sequences per store and commands per sequence. `OAUTH_TEST_MODEL_RUNS` (and the three below) raise the counts for a
 * longer hunt; `OAUTH_TEST_MODEL_SEED` and `OAUTH_TEST_MODEL_PATH` replay a failure (fast-check prints both);
 * `OAUTH_TEST_MODEL_TALLY=1` prints the answers and situations the sequences reached.
 */
const RUNS = Number(process.env.OAUTH_TEST_MODEL_RUNS ?? 40);
/** Sequences of the short-lived variant, whose sleeps make each take seconds. */
const EXPIRY_RUNS = Number(process.env.OAUTH_TEST_MODEL_EXPIRY_RUNS ?? 3);
/** Sequences of each JWT access token variant (one instance, two instances). */
const JWT_RUNS = Number(process.env.OAUTH_TEST_MODEL_JWT_RUNS ?? 20);
/** Sequences of the variant whose administrative operations go through a second instance. */
const TWO_INSTANCE_RUNS = Number(process.env.OAUTH_TEST_MODEL_TWO_INSTANCE_RUNS ?? 20);
const SEED = process.env.OAUTH_TEST_MODEL_SEED === undefined ? undefined : Number(process.env.OAUTH_TEST_MODEL_SEED);
const PATH = process.env.OAUTH_TEST_MODEL_PATH;
const MAX_COMMANDS = 60;
/** First port of the servers under test (each store and variant takes the next: 24 from it); 0 (any) unless a run must keep to a range. */
const PORT = Number(process.env.OAUTH_TEST_MODEL_PORT ?? 0);

const REDIRECT_URI = 'https://client.example/callback';
const PASSWORD = 'model-password-0123456789';
const RESOURCE_SERVER = 'model-resource-server';
const READ = 'envelopes:read';
const SIGN = 'envelopes:sign';
/** The scope sets an integration may be registered or updated with: none (all-access), one, both. */
const SCOPE_SETS: readonly (readonly string[])[] = [[], [READ], [READ, SIGN]];

// ---------------------------------------------------------------------------------------------------------------
// The model.

type Flow = 'authorization_code' | 'client_credentials';
/** What the model knows of a token, a grant or a consent: `unknown` where a rule allows either answer. */
type Known = 'live' | 'dead' | 'unknown';

/** One registration of a client_id: a re-registration under the same id is another generation, owning nothing of the first. */
interface MClient {
  readonly clientId: string;
  readonly flow: Flow;
  readonly generation: number;
  secret: string;
  /** The secret a graceful rotation replaced, while its grace period runs. */
  previous: string | null;
  /** Secrets that no longer authenticate. */
  readonly retired: string[];
  disabled: boolean;
  deleted: boolean;
  /** userId → whether a remembered consent skips the consent page. */
  readonly consents: Map<string, boolean | 'unknown'>;
  /** userId → the scope its remembered consent holds (none: all-access), while `consents` says true. */
  readonly consentScopes: Map<string, readonly string[]>;
  /** When the model last saw a revocation of this client_id's tokens return (ms since the epoch). */
  revokedAt: number;
  /** Its registered scopes; none: all-access (README "Scopes"). */
  scopes: readonly string[];
}

interface MToken {
  readonly value: string;
  readonly kind: 'access' | 'refresh';
  readonly grant: MGrant;
  /** Whether it is revoked; expiry is judged apart, from `issued`. */
  state: Known;
  /** Between when its request was sent and when it was answered (ms since the epoch). */
  readonly issued: Window;
  /** Its scope, where a refresh asked for less than its grant's (RFC 6749 §6); else its grant's. */
  readonly scope?: readonly string[];
}

function scopeOf(t: MToken): readonly string[] {
  return t.scope ?? t.grant.scope;
}

/** Two instants bracketing a server-side moment: a request's sending and its answer. */
type Window = readonly [from: number, to: number];

/** Lifetimes of the server under test, in seconds. */
interface Lifetimes {
  readonly access: number;
  readonly refresh: number;
  readonly code: number;
}

/** Clock tolerance between the test and the stores (one machine: PostgreSQL's and Redis's clocks are this one's). */
const SLACK_MS = 50;

/**
 * Whether a thing issued within `issued` with `ttl` seconds has expired when checked within `at`. Tokens expire at a
 * whole second (issue-tokens.ts rounds up), codes at their millisecond.
 */
function expiry(issued: Window, ttl: number, at: Window, wholeSecond: boolean): 'fresh' | 'expired' | 'unknown' {
  const earliest = issued[0] + ttl * 1000;
  const latest = wholeSecond ? Math.ceil((issued[1] + ttl * 1000) / 1000) * 1000 : issued[1] + ttl * 1000;
  if (at[1] < earliest - SLACK_MS) return 'fresh';
  if (at[0] > latest + SLACK_MS) return 'expired';
  return 'unknown';
}

function tokenExpiry(t: MToken, r: Real, at: Window): 'fresh' | 'expired' | 'unknown' {
  return expiry(t.issued, t.kind === 'access' ? r.ttl.access : r.ttl.refresh, at, true);
}

/** What the server must answer for a token checked within `at`: revoked or expired is dead, neither is live. */
function effective(t: MToken, r: Real, at: Window): Known {
  if (t.state === 'dead') return 'dead';
  const e = tokenExpiry(t, r, at);
  if (e === 'expired') return 'dead';
  return t.state === 'live' && e === 'fresh' ? 'live' : 'unknown';
}

interface MGrant {
  readonly client: MClient;
  readonly userId: string | null;
  /** The scope its tokens carry; none: all-access. */
  readonly scope: readonly string[];
  readonly tokens: MToken[];
  refresh: MToken | null;
}

interface MCode {
  readonly value: string;
  readonly client: MClient;
  readonly userId: string;
  readonly scope: readonly string[];
  readonly issued: Window;
  /** The PKCE code_verifier whose S256 challenge the authorization request sent, or null for none (RFC 7636). */
  readonly verifier: string | null;
  used: boolean;
  /** Perhaps used up by a request that a stale copy of its integration let through (second-instance variant). */
  maybeUsed?: boolean;
  /** Voided by a revocation before its exchange (disable, rotation, withdrawal, delete). */
  voided: boolean;
  grant: MGrant | null;
}

interface Model {
  readonly clients: MClient[];
  readonly tokens: MToken[];
  readonly codes: MCode[];
  readonly users: readonly string[];
  generations: number;
}

/** The server under test and this sequence's browsers (one cookie jar per user). */
interface Real {
  readonly base: string;
  readonly jars: Map<string, Map<string, string>>;
  /** The users whose browser holds the router's sign-in: signed in at an authorization request, not signed out since. */
  readonly signedIn: Set<string>;
  readonly ttl: Lifetimes;
  /** Whether the router's copies of integrations may be older than a change another instance made. */
  readonly copiesMayLag: boolean;
  /**
   * Runs an administrative operation: through this router, or through a second instance on the same data. After a
   * revoking one on a second instance it waits for this instance's revocation feed to move (README: a revocation by
   * another instance is refused "once its notification arrives"; at once on SQLite).
   */
  administer<T>(op: (admin: OAuthAdmin, withdraw: (userId: string, clientId: string) => Promise<void>) => Promise<T>, revokes: boolean): Promise<T>;
}

function live(model: Model, predicate: (client: MClient) => boolean): MClient[] {
  return model.clients.filter((c) => !c.deleted && predicate(c));
}

/** The registration that answers for a client_id now (the latest generation), if any. */
function current(model: Model, clientId: string): MClient | undefined {
  return [...model.clients].reverse().find((c) => c.clientId === clientId && !c.deleted);
}

function pick<T>(items: readonly T[], index: number): T | undefined {
  return items.length === 0 ? undefined : items[index % items.length];
}

/** Every token the revocation reaches dies; every unredeemed code it reaches is voided. */
function revokeWhere(model: Model, clientId: string, token: (t: MToken) => boolean, code: (c: MCode) => boolean): void {
  // The store refuses saves authorized at or before the revocation's millisecond (README, the conformance rules on
  // tombstones): a request begun in that same millisecond, though sent after the revocation returned, may be refused.
  const now = Date.now();
  for (const c of model.clients) if (c.clientId === clientId) c.revokedAt = now;
  for (const t of model.tokens) if (token(t)) t.state = 'dead';
  for (const c of model.codes) if (!c.used && code(c)) c.voided = true;
}

/** Every token and unredeemed code of the integration dies: a disable, a rotation without grace, a deletion, a narrowing. */
function revokeIntegration(model: Model, c: MClient): void {
  revokeWhere(model, c.clientId, (t) => t.grant.client.clientId === c.clientId, (code) => code.client.clientId === c.clientId);
}

/** Whether a revocation of `clientId`'s tokens (for `userId` only, if given) reaches a token the model holds not dead. */
function reaches(model: Model, clientId: string, userId?: string): boolean {
  return model.tokens.some((t) => t.state !== 'dead' && t.grant.client.clientId === clientId && (userId === undefined || t.grant.userId === userId));
}

function revokeGrant(grant: MGrant): void {
  for (const t of grant.tokens) t.state = 'dead';
  if (grant.refresh) grant.refresh.state = 'dead';
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP.

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
  /** When it was sent and when its answer was read. */
  readonly at: Window;
}

async function send(real: Real, path: string, init: { method?: string; headers?: Record<string, string>; form?: Record<string, string> } = {}): Promise<Answer> {
  const from = Date.now();
  const res = await fetch(`${real.base}${path}`, {
    method: init.method ?? (init.form ? 'POST' : 'GET'),
    redirect: 'manual',
    headers: { ...(init.form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}), ...init.headers },
    ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
  });
  const text = await res.text();
  const to = Date.now();
  let json: Record<string, unknown> = {};
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(text) as Record<string, unknown>;
  const line = `${init.method ?? (init.form ? 'POST' : 'GET')} ${path.split('?')[0]} ${res.status} ${json.error ?? ''}`.trim();
  tally.set(line, (tally.get(line) ?? 0) + 1);
  expect(res.status, `never a 5xx: ${path} ${text.slice(0, 200)}`).toBeLessThan(500);
  return { status: res.status, headers: res.headers, text, json, at: [from, to] };
}

/** Answers seen, by endpoint, status and error: what the sequences covered. */
const tally = new Map<string, number>();

/** Counts a situation the model reached, for the tally. */
function fact(name: string): void {
  tally.set(`fact: ${name}`, (tally.get(`fact: ${name}`) ?? 0) + 1);
}

/** The browser of one user: GETs and same-origin form POSTs with its cookies. */
async function browse(real: Real, userId: string, path: string, form?: Record<string, string>): Promise<Answer> {
  let jar = real.jars.get(userId);
  if (!jar) real.jars.set(userId, (jar = new Map()));
  const answer = await send(real, path, {
    headers: { Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'Sec-Fetch-Site': 'same-origin' } : {}) },
    ...(form ? { form } : {}),
  });
  for (const line of answer.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return answer;
}

function hidden(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no hidden field ${name} in page`);
  return match[1]!;
}

function pathOf(location: string | null, base: string): string {
  expect(location).toBeTruthy();
  const url = new URL(location!, base);
  return `${url.pathname}${url.search}`;
}

type SecretKind = 'current' | 'previous' | 'wrong';
type Method = 'basic' | 'post';

/** The secret a client presents, and whether the model says it authenticates. */
function credentials(client: MClient, kind: SecretKind): { secret: string; valid: boolean } {
  if (kind === 'current') return { secret: client.secret, valid: !client.disabled && !client.deleted };
  if (kind === 'previous') {
    if (client.previous !== null) return { secret: client.previous, valid: !client.disabled && !client.deleted };
    const retired = client.retired.at(-1);
    if (retired !== undefined) return { secret: retired, valid: false };
  }
  return { secret: `${client.secret.slice(0, -4)}XXXX`, valid: false };
}

/** POSTs a form to a client-authenticated endpoint with client_secret_basic or client_secret_post. */
function clientPost(real: Real, endpoint: 'token' | 'revoke' | 'introspect', clientId: string, secret: string, method: Method, form: Record<string, string>): Promise<Answer> {
  if (method === 'post') return send(real, `/oauth2/${endpoint}`, { form: { ...form, client_id: clientId, client_secret: secret } });
  const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  const header = `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
  return send(real, `/oauth2/${endpoint}`, { headers: { Authorization: header }, form });
}

/** RFC 6749 §5.2 error answer (and RFC 7009 §2.2.1 / RFC 7662 §2.3, which defer to it). */
function expectError(answer: Answer, error: string, context: string): void {
  const status = error === 'invalid_client' ? 401 : 400;
  expect({ status: answer.status, error: answer.json.error }, context).toEqual({ status, error });
  expect(answer.headers.get('content-type'), context).toBe('application/json;charset=UTF-8');
  if (status === 401) expect(answer.headers.get('www-authenticate') ?? '', context).toMatch(/^Basic realm="/);
}

/**
 * Whether an `invalid_grant` may be the store's refusal of a save authorized in the very millisecond of a revocation of
 * the client's tokens: sent after it returned, but begun (or, for a code, authorized) in that same millisecond.
 */
function sameMillisecondRefusal(answer: Answer, client: MClient, authorizedFrom = answer.at[0]): boolean {
  const refused = answer.status === 400 && answer.json.error === 'invalid_grant';
  const within = Math.min(answer.at[0], authorizedFrom) - client.revokedAt <= 1;
  if (refused && within) fact('a request begun in the millisecond of a revocation was refused');
  return refused && within;
}

/**
 * Reconciles an observation within `at` with the model: a token the model holds live or dead must answer so; where
 * either answer is allowed, the model learns what it can (active: not revoked; refused while surely unexpired: revoked).
 */
function observe(token: MToken, r: Real, at: Window, active: boolean, context: string): void {
  const expected = effective(token, r, at);
  if (expected !== 'unknown') {
    expect(active ? 'live' : 'dead', context).toBe(expected);
    return;
  }
  if (active) token.state = 'live';
  else if (tokenExpiry(token, r, at) === 'fresh') token.state = 'dead';
}

// ---------------------------------------------------------------------------------------------------------------
// Commands. Each picks its subjects by index at run time, so sequences shrink well.

type Cmd = fc.AsyncCommand<Model, Real>;

class Register implements Cmd {
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

/** The clients of `flow`, or with `anyFlow` every client: most requests come from an integration of the right flow. */
function ofFlow(m: Model, flow: Flow, anyFlow: boolean): MClient[] {
  return anyFlow ? m.clients : m.clients.filter((c) => c.flow === flow);
}

class ClientCredentials implements Cmd {
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
    const grant: MGrant = { client: c, userId: null, scope, tokens: [], refresh: null };
    const token: MToken = { value: answer.json.access_token as string, kind: 'access', grant, state: 'live', issued: answer.at };
    grant.tokens.push(token);
    m.tokens.push(token);
  }
  toString() { return `ClientCredentials(${this.client}, ${this.secret}, ${this.method}${this.anyFlow ? ', any flow' : ''}${this.scope === null ? '' : `, scope ${this.scope}`})`; }
}

/**
 * The scopes an authorization request may ask for, by index: none (the integration's registered scopes), or a
 * non-empty set within them (any, for an all-access integration), always in the order READ, SIGN.
 */
function scopeChoice(registered: readonly string[], index: number | null): readonly string[] | null {
  if (index === null) return null;
  const within = registered.length === 0 ? [READ, SIGN] : registered;
  const choices = [[READ], [SIGN], [READ, SIGN]].filter((set) => set.every((x) => within.includes(x)));
  return pick(choices, index) ?? null;
}

/** Whether the user's remembered consent covers `requested` (README "Scopes": an all-access one covers all; none stands in for an all-access request). */
function covering(c: MClient, userId: string, requested: readonly string[]): boolean | 'unknown' {
  const remembered = c.consents.get(userId) ?? false;
  if (remembered !== true) return remembered;
  const consented = c.consentScopes.get(userId) ?? [];
  return consented.length === 0 || (requested.length > 0 && requested.every((x) => consented.includes(x)));
}

/**
 * An Allow on the consent page: the consent keeps what was approved before, within what the integration may still be
 * granted, beside what was just approved (consent-scope-after-allow.ts: incremental authorization).
 */
function allow(c: MClient, userId: string, approved: readonly string[]): void {
  const before = c.consents.get(userId) === true ? c.consentScopes.get(userId)! : null;
  let after = approved;
  if (approved.length > 0 && before !== null) {
    if (before.length === 0) after = c.scopes.length === 0 ? [] : approved;
    else {
      const kept = before.filter((x) => approved.includes(x) || c.scopes.length === 0 || c.scopes.includes(x));
      after = [...kept, ...approved.filter((x) => !kept.includes(x))];
    }
  }
  c.consents.set(userId, true);
  c.consentScopes.set(userId, after);
}

/** An authorization request of `cmd` (its picks of client, user, PKCE and scope) to one of `clients`, as a browser sends it. */
function authorizationRequest(
  m: Model, cmd: { readonly client: number; readonly user: number; readonly pkce: boolean; readonly scopeIndex: number | null },
  clients: ReturnType<typeof ofFlow>, prompt: 'consent' | 'none' | null,
) {
  const c = pick(clients, cmd.client)!;
  const userId = pick(m.users, cmd.user)!;
  const context = `${String(cmd)} on ${c.clientId} for ${userId}`;
  const state = `s${Math.random().toString(36).slice(2)}`;
  const verifier = cmd.pkce ? randomBytes(32).toString('base64url') : null;
  const requested = scopeChoice((current(m, c.clientId) ?? c).scopes, cmd.scopeIndex);
  const query = new URLSearchParams({
    response_type: 'code', client_id: c.clientId, redirect_uri: REDIRECT_URI, state, ...(prompt === null ? {} : { prompt }),
    ...(requested === null ? {} : { scope: requested.join(' ') }),
    ...(verifier === null ? {} : { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' }),
  });
  return { c, userId, context, state, verifier, requested, query };
}

class Authorize implements Cmd {
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
        csrf_token: hidden(page.text, 'csrf_token'), request_id: hidden(page.text, 'request_id'), username: userId, password: PASSWORD,
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
        csrf_token: hidden(page.text, 'csrf_token'), request_id: hidden(page.text, 'request_id'), decision: this.decision,
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
class SilentAuthorize implements Cmd {
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

/**
 * The user's connected applications (GET /oauth2/consents): the login page when signed out; signed in, every enabled
 * integration whose consent the model holds remembered is listed, none whose consent is withdrawn or was never given
 * (a client_id registered again included). `withdraw`: then withdraws one listed there, as withdrawConsent does.
 */
class ConsentsPage implements Cmd {
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
    const answer = await browse(r, userId, '/oauth2/consents/withdraw', { csrf_token: hidden(page.text, 'csrf_token'), client_id: clientId });
    expect(answer.status, `${context}: withdrawing ${clientId}`).toBe(303);
    fact('consent withdrawn on the consents page');
    c.consents.set(userId, false);
    revokeWhere(m, clientId, (t) => t.grant.client.clientId === clientId && t.grant.userId === userId, (code) => code.client.clientId === clientId && code.userId === userId);
  }
  toString() { return `ConsentsPage(user ${this.user}${this.withdraw === null ? '' : `, withdraw ${this.withdraw}`})`; }
}

/** Signs the browser out (POST /oauth2/logout with the session's CSRF token): its next authorization request asks for the password. */
class SignOut implements Cmd {
  constructor(readonly user: number) {}
  check() { return true; }
  async run(m: Model, r: Real) {
    const userId = pick(m.users, this.user)!;
    if (!r.signedIn.has(userId)) return;
    const page = await browse(r, userId, '/oauth2/consents');
    const answer = await browse(r, userId, '/oauth2/logout', { csrf_token: hidden(page.text, 'csrf_token') });
    expect(answer.status, String(this)).toBe(200);
    r.signedIn.delete(userId);
  }
  toString() { return `SignOut(user ${this.user})`; }
}

/** `owner`: the client_id the code, grant or token was issued to (its answering registration); else another client. */
function presenter(m: Model, owner: MClient, who: number | 'owner'): MClient | undefined {
  if (who === 'owner') return current(m, owner.clientId) ?? owner;
  return pick(m.clients.filter((c) => c.clientId !== owner.clientId), who);
}

/** What an exchange sends as code_verifier: the code's own (none for a code without a challenge), another, or none. */
type VerifierKind = 'its' | 'wrong' | 'none';

function verifierField(code: MCode, kind: VerifierKind): { code_verifier?: string } {
  if (kind === 'none' || (kind === 'its' && code.verifier === null)) return {};
  return { code_verifier: kind === 'its' ? code.verifier! : randomBytes(32).toString('base64url') };
}

class ExchangeCode implements Cmd {
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
    const grant: MGrant = { client: code.client, userId: code.userId, scope: code.scope, tokens: [], refresh: null };
    const access: MToken = { value: answer.json.access_token as string, kind: 'access', grant, state: 'live', issued: answer.at };
    const refresh: MToken = { value: answer.json.refresh_token as string, kind: 'refresh', grant, state: 'live', issued: answer.at };
    grant.tokens.push(access);
    grant.refresh = refresh;
    code.grant = grant;
    m.tokens.push(access, refresh);
  }
  toString() { return `ExchangeCode(${this.code}${this.fresh ? ' fresh' : ''}, ${this.who}, ${this.secret}, ${this.redirectOk ? 'same redirect_uri' : 'other redirect_uri'}, verifier ${this.verifier})`; }
}

class Refresh implements Cmd {
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

class Revoke implements Cmd {
  constructor(readonly token: number, readonly who: number | 'owner', readonly secret: SecretKind, readonly hint: 'none' | 'access_token' | 'refresh_token', readonly method: Method) {}
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const t = pick(m.tokens, this.token)!;
    const owner = t.grant.client;
    const p = presenter(m, owner, this.who);
    if (!p) return;
    const { secret, valid } = credentials(p, this.secret);
    const answer = await clientPost(r, 'revoke', p.clientId, secret, this.method, {
      token: t.value, ...(this.hint === 'none' ? {} : { token_type_hint: this.hint }),
    });
    const context = `${this} of a ${t.kind} token of ${owner.clientId} by ${p.clientId}`;
    if (!valid) return expectError(answer, 'invalid_client', context);
    if (p !== owner) {
      // RFC 7009 §2.1: another client's live token is refused; an invalid one is answered 200 (§2.2).
      observe(t, r, answer.at, answer.status === 400, context);
      if (answer.status === 400) return expectError(answer, 'invalid_request', context);
      expect(answer.status, context).toBe(200);
      return;
    }
    expect(answer.status, `${context}: ${answer.text}`).toBe(200);
    // RFC 7009 §2.1: a refresh token revokes its grant, access tokens included; an access token itself only.
    if (t.kind === 'refresh') revokeGrant(t.grant);
    else t.state = 'dead';
  }
  toString() { return `Revoke(${this.token}, ${this.who}, ${this.secret}, hint ${this.hint}, ${this.method})`; }
}

class Introspect implements Cmd {
  constructor(readonly token: number, readonly who: number | 'owner' | 'resource-server', readonly secret: SecretKind) {}
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const t = pick(m.tokens, this.token)!;
    const owner = t.grant.client;
    const rs = (m as Model & { rs: MClient }).rs;
    const p = this.who === 'resource-server' ? rs : presenter(m, owner, this.who);
    if (!p) return;
    const { secret, valid } = credentials(p, this.secret);
    const answer = await clientPost(r, 'introspect', p.clientId, secret, 'basic', { token: t.value });
    const context = `${this} of a ${t.kind} token of ${owner.clientId} by ${p.clientId}`;
    if (!valid) return expectError(answer, 'invalid_client', context);
    expect(answer.status, context).toBe(200);
    // RFC 7662 §2.2 (and README): a client sees its own tokens, a listed resource server any; the rest is inactive.
    if (p !== owner && p !== rs) return expect(answer.json, context).toEqual({ active: false });
    observe(t, r, answer.at, answer.json.active === true, context);
    if (answer.json.active !== true) return expect(answer.json, context).toEqual({ active: false });
    expect(answer.json.client_id, context).toBe(owner.clientId);
    expect(answer.json.sub, context).toBe(t.grant.userId ?? undefined);
    // RFC 7662 §2.2: scope only for a token that has one (all-access tokens have none).
    expect(answer.json.scope, context).toBe(scopeOf(t).length > 0 ? scopeOf(t).join(' ') : undefined);
    if (t.kind === 'access') expect(answer.json.token_type, context).toBe('Bearer');
    else expect(answer.json.token_use, context).toBe('refresh_token');
  }
  toString() { return `Introspect(${this.token}, ${this.who}, ${this.secret})`; }
}

class Bearer implements Cmd {
  constructor(readonly token: number, readonly twice: boolean, readonly route: 'me' | 'sign' = 'me') {}
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const t = pick(m.tokens, this.token)!;
    const context = `${this} with a ${t.kind} token of ${t.grant.client.clientId} (${t.state}, scope [${scopeOf(t).join(' ')}])`;
    // requireBearer({ scope }) passes an all-access token or one that has the scope; a live token without it is 403 (RFC 6750 §3.1).
    const entitled = this.route === 'me' || scopeOf(t).length === 0 || scopeOf(t).includes(SIGN);
    for (let i = 0; i < (this.twice ? 2 : 1); i += 1) {
      const answer = await send(r, `/api/${this.route}`, { headers: { Authorization: `Bearer ${t.value}` } });
      if (t.kind === 'refresh') {
        // A refresh token is never an access token (RFC 6750 §3.1).
        expect(answer.status, context).toBe(401);
      } else {
        const expired = tokenExpiry(t, r, answer.at) === 'expired' && t.state !== 'dead';
        fact(`bearer with a ${expired ? 'expired, unrevoked' : t.state} access token${i === 1 ? ' (again)' : ''}`);
        observe(t, r, answer.at, answer.status === 200 || answer.status === 403, context);
      }
      if (answer.status === 403) {
        expect(entitled, `${context}: refused for its scope`).toBe(false);
        expect(answer.headers.get('www-authenticate') ?? '', context).toMatch(/^Bearer realm="[^"]*", error="insufficient_scope"/);
      } else if (answer.status === 200) {
        expect(entitled, `${context}: served without the scope`).toBe(true);
        expect(answer.json.clientId, context).toBe(t.grant.client.clientId);
        expect(answer.json.userId, context).toBe(t.grant.userId);
      } else {
        expect(answer.status, `${context}: ${answer.text}`).toBe(401);
        expect(answer.headers.get('www-authenticate') ?? '', context).toMatch(/^Bearer realm="[^"]*", error="invalid_token"/);
      }
    }
  }
  toString() { return `Bearer(${this.token}${this.twice ? ', twice' : ''}${this.route === 'sign' ? ', scope route' : ''})`; }
}

/**
 * Checks every token the model holds at once, through requireBearer (access tokens) and the resource server's
 * introspection (all): a revocation that reached too far (a live token of another grant, user or integration
 * refused) or not far enough shows here even when no later command picks that token.
 */
class CheckAll implements Cmd {
  check(m: Model) { return m.tokens.length > 0; }
  async run(m: Model, r: Real) {
    const rs = (m as Model & { rs: MClient }).rs;
    for (const t of m.tokens) {
      const context = `${this}: a ${t.kind} token of ${t.grant.client.clientId} for ${t.grant.userId ?? 'no user'}`;
      if (t.kind === 'access') {
        const bearer = await send(r, '/api/me', { headers: { Authorization: `Bearer ${t.value}` } });
        expect([200, 401], `${context}: ${bearer.text}`).toContain(bearer.status);
        observe(t, r, bearer.at, bearer.status === 200, `${context}: requireBearer`);
      }
      const introspected = await clientPost(r, 'introspect', rs.clientId, rs.secret, 'basic', { token: t.value });
      observe(t, r, introspected.at, introspected.json.active === true, `${context}: introspection`);
    }
    fact('every token checked');
  }
  toString() { return 'CheckAll'; }
}

/**
 * Replaces an integration's scopes. Taking a scope away, or scoping an all-access integration, revokes every token
 * and code it holds (README "The lifecycle"); widening revokes nothing. Whether a remembered consent still covers
 * the new scopes is not a rule the model holds.
 */
class UpdateScopes implements Cmd {
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

class Disable implements Cmd {
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

class Enable implements Cmd {
  constructor(readonly client: number) {}
  check(m: Model) { return live(m, (c) => c.disabled).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, (x) => x.disabled), this.client)!;
    await r.administer((a) => a.enableClient(c.clientId), false);
    c.disabled = false;
  }
  toString() { return `Enable(${this.client})`; }
}

class RotateSecret implements Cmd {
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

class Delete implements Cmd {
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

class Withdraw implements Cmd {
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

class AdminRevoke implements Cmd {
  constructor(readonly client: number, readonly user: number | null) {}
  check(m: Model) { return live(m, () => true).length > 0; }
  async run(m: Model, r: Real) {
    const c = pick(live(m, () => true), this.client)!;
    const userId = this.user === null ? undefined : pick(m.users, this.user)!;
    await r.administer((a) => a.revokeTokens(userId === undefined ? { clientId: c.clientId } : { clientId: c.clientId, userId }), reaches(m, c.clientId, userId));
    revokeWhere(
      m, c.clientId,
      (t) => t.grant.client.clientId === c.clientId && (userId === undefined || t.grant.userId === userId),
      (code) => code.client.clientId === c.clientId && (userId === undefined || code.userId === userId),
    );
  }
  toString() { return `AdminRevoke(${this.client}${this.user === null ? '' : `, user ${this.user}`})`; }
}


type RaceKind =
  | 'double-exchange' | 'exchange-vs-withdraw' | 'exchange-vs-disable' | 'refresh-vs-revoke' | 'refresh-vs-disable'
  | 'refresh-vs-rotate' | 'token-vs-disable' | 'token-vs-rotate' | 'bearer-vs-revoke';
const RACES: readonly RaceKind[] = [
  'double-exchange', 'exchange-vs-withdraw', 'exchange-vs-disable', 'refresh-vs-revoke', 'refresh-vs-disable',
  'refresh-vs-rotate', 'token-vs-disable', 'token-vs-rotate', 'bearer-vs-revoke',
];

/** What a token request racing a revocation may answer: issued (and then revoked), or refused as the revocation left it. */
function expectOneOf(answer: Answer, allowed: readonly string[], context: string): void {
  const outcome = answer.status === 200 ? 'ok' : String(answer.json.error);
  expect(allowed, `${context}: answered ${answer.status} ${answer.text}`).toContain(outcome);
  if (outcome !== 'ok') expectError(answer, outcome, context);
}

/** Asks the server whether a token the model holds dead is refused: by requireBearer and by introspection (the resource server sees any token). */
async function expectRefused(m: Model, r: Real, value: string, kind: 'access' | 'refresh', context: string): Promise<void> {
  if (kind === 'access') {
    const bearer = await send(r, '/api/me', { headers: { Authorization: `Bearer ${value}` } });
    expect(bearer.status, `${context}: requireBearer after the race`).toBe(401);
  }
  const rs = (m as Model & { rs: MClient }).rs;
  const introspected = await clientPost(r, 'introspect', rs.clientId, rs.secret, 'basic', { token: value });
  expect(introspected.json, `${context}: introspection after the race`).toEqual({ active: false });
}

/**
 * Two operations at once, the second `delay` ms after the first: whatever the interleaving, once both are answered
 * nothing the revocation (or the replay) reached is live, a token issued meanwhile included ("a grant revoked while
 * a token is being issued wins", README Security notes; RFC 6749 §4.1.2, §10.5; RFC 7009 §2.1).
 */
class Race implements Cmd {
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
        const grant: MGrant = { client: c, userId: code.userId, scope: code.scope, tokens: [], refresh: null };
        const access: MToken = { value: answer.json.access_token as string, kind: 'access', grant, state: 'dead', issued: answer.at };
        const refresh: MToken = { value: answer.json.refresh_token as string, kind: 'refresh', grant, state: 'dead', issued: answer.at };
        grant.tokens.push(access);
        grant.refresh = refresh;
        code.grant = grant;
        m.tokens.push(access, refresh);
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
        const grant: MGrant = { client: c, userId: null, scope: c.scopes, tokens: [], refresh: null };
        const access: MToken = { value: answer.json.access_token as string, kind: 'access', grant, state: 'dead', issued: answer.at };
        grant.tokens.push(access);
        m.tokens.push(access);
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

const index = fc.nat({ max: 30 });
const secretKind = fc.constantFrom<SecretKind>(...Array<SecretKind>(8).fill('current'), 'previous', 'wrong');
const anyFlow = fc.constantFrom(false, false, false, false, true);
const scopeSet = fc.constantFrom(...SCOPE_SETS);
/** What a client_credentials request asks for: nothing (its registered scopes), a known scope, both, or one the server does not know. */
const requestedScope = fc.constantFrom<string | null>(null, null, null, READ, SIGN, `${READ} ${SIGN}`, 'envelopes:delete');
const method = fc.constantFrom<Method>('basic', 'post');
const who = fc.oneof({ weight: 4, arbitrary: fc.constant<'owner'>('owner') }, { weight: 1, arbitrary: index });

/** Each arbitrary repeated `weight` times: fc.commands picks among its arbitraries uniformly. */
function weighted(weight: number, arbitrary: fc.Arbitrary<Cmd>): fc.Arbitrary<Cmd>[] {
  return Array.from({ length: weight }, () => arbitrary);
}

/** The command arbitraries; `extra` adds some (the sleeps of the short-lived variant). */
function commandArbitraries(): fc.Arbitrary<Cmd>[] {
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

/** Waits, so that short-lived tokens and codes expire: the only command that lets time pass on purpose. */
class Sleep implements Cmd {
  constructor(readonly ms: number) {}
  check() { return true; }
  async run() { await new Promise((resolve) => setTimeout(resolve, this.ms)); }
  toString() { return `Sleep(${this.ms} ms)`; }
}

/**
 * Uses a live token (so requireBearer caches it) or holds a fresh code, waits until it has surely expired, and uses it
 * again: refused, whatever the bearer cache holds (README: cached "each until its expiresAt"; RFC 6749 §4.1.2, §6).
 */
class Expire implements Cmd {
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
    const rs = (m as Model & { rs: MClient }).rs;
    const introspected = await clientPost(r, 'introspect', rs.clientId, rs.secret, 'basic', { token: t.value });
    expect(introspected.json, `${context}: introspection after expiry`).toEqual({ active: false });
  }
  toString() { return `Expire(${this.kind}, ${this.subject})`; }
}

/** Long-lived tokens: nothing expires within a sequence, so every answer is decided by the revocations alone. */
const LONG_LIVED: Lifetimes = { access: 3600, refresh: 7200, code: 60 };
/** Short-lived tokens and codes (the shortest the options allow), with sleeps among the commands. */
const SHORT_LIVED: Lifetimes = { access: 1, refresh: 2, code: 1 };

interface Variant {
  readonly name: string;
  readonly ttl: Lifetimes;
  readonly runs: number;
  /** 2: the administrative operations go through a second instance (its own store connection) on the same data. */
  readonly instances: 1 | 2;
  /** 'jwt': RFC 9068 access tokens under `jwt: { checkRevocation: true }`, which must answer as opaque ones do. */
  readonly format?: 'opaque' | 'jwt';
  readonly commands: fc.Arbitrary<Iterable<Cmd>>;
}

const VARIANTS: readonly Variant[] = [
  {
    name: 'JWT access tokens', ttl: LONG_LIVED, runs: JWT_RUNS, instances: 1, format: 'jwt',
    commands: fc.commands<Model, Real, false>(commandArbitraries(), { maxCommands: MAX_COMMANDS, size: 'max' }),
  },
  {
    name: 'short-lived JWT access tokens', ttl: SHORT_LIVED, runs: EXPIRY_RUNS, instances: 1, format: 'jwt',
    commands: fc.commands<Model, Real, false>(
      [
        ...commandArbitraries(),
        ...weighted(2, fc.constantFrom(300, 700, 1100, 2100).map((ms) => new Sleep(ms))),
        ...weighted(3, fc.tuple(fc.constantFrom<'access' | 'refresh' | 'code'>('access', 'access', 'refresh', 'code'), index).map(([k, i]) => new Expire(k, i))),
      ],
      { maxCommands: 30, size: 'max' },
    ),
  },
  {
    name: 'JWT access tokens, a second instance administering', ttl: LONG_LIVED, runs: JWT_RUNS, instances: 2, format: 'jwt',
    commands: fc.commands<Model, Real, false>(commandArbitraries(), { maxCommands: MAX_COMMANDS, size: 'max' }),
  },
  {
    name: 'long-lived tokens', ttl: LONG_LIVED, runs: RUNS, instances: 1,
    commands: fc.commands<Model, Real, false>(commandArbitraries(), { maxCommands: MAX_COMMANDS, size: 'max' }),
  },
  {
    name: 'short-lived tokens', ttl: SHORT_LIVED, runs: EXPIRY_RUNS, instances: 1,
    commands: fc.commands<Model, Real, false>(
      [
        ...commandArbitraries(),
        ...weighted(2, fc.constantFrom(300, 700, 1100, 2100).map((ms) => new Sleep(ms))),
        ...weighted(3, fc.tuple(fc.constantFrom<'access' | 'refresh' | 'code'>('access', 'access', 'refresh', 'code'), index).map(([k, i]) => new Expire(k, i))),
      ],
      { maxCommands: 30, size: 'max' },
    ),
  },
  {
    name: 'a second instance administering', ttl: LONG_LIVED, runs: TWO_INSTANCE_RUNS, instances: 2,
    commands: fc.commands<Model, Real, false>(commandArbitraries(), { maxCommands: MAX_COMMANDS, size: 'max' }),
  },
];

// ---------------------------------------------------------------------------------------------------------------
// The server under test.

/** Any user `m-…` signs in with PASSWORD; each sequence has users of its own, so consents never carry over. */
const userAuth: UserAuth = {
  async verifyCredentials(username, password) {
    return username.startsWith('m-') && password === PASSWORD ? { id: username, displayName: username } : null;
  },
  async findUser(id) {
    return id.startsWith('m-') ? { id, displayName: id } : null;
  },
};

/** What the router logged as errors: an unexpected error is a defect even when its answer was not a 5xx. */
const errors: string[] = [];

/** The router under test, listening, and how a sequence administers it. */
interface Harness {
  readonly base: string;
  readonly oauth: OAuthRouter;
  readonly rs: { clientId: string; secret: string };
  readonly administer: Real['administer'];
  close(): Promise<void>;
}

/** How long a second instance's revocation may take to reach this one's feed before the model stops waiting. */
const FEED_WAIT_MS = 1000;

/**
 * `served`: the store the router under test uses; `administered`: the one administrative operations use (the same, or
 * another instance's). `feedLag`: whether another instance's revocation reaches this one's feed only once notified
 * (PostgreSQL, Redis); on SQLite it must count on the next request, unwaited.
 */
async function startHarness(served: Store, administered: Store, label: string, port: number, ttl: Lifetimes, feedLag: boolean, format: 'opaque' | 'jwt'): Promise<Harness> {
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rsId = `${RESOURCE_SERVER}-${label}-${process.pid}-${Date.now().toString(36)}`;
  const oauth = createOAuthRouter(served, userAuth, {
    issuer: base,
    session: { secret: 'model-session-secret-0123456789' },
    logger: { warn() {}, error: (message: string) => { errors.push(message); } },
    accessTokenTtl: ttl.access,
    ...(format === 'jwt' ? { accessTokenFormat: 'jwt' as const, jwt: { checkRevocation: true } } : {}),
    refreshTokenTtl: ttl.refresh,
    authorizationCodeTtl: ttl.code,
    introspectionClients: [rsId],
    scopes: { [READ]: 'See your envelopes', [SIGN]: 'Sign envelopes' },
    // Every sequence presents wrong secrets on purpose: the flood limit (tested elsewhere) would answer 429.
    clientAuthRateLimit: false,
  });
  const app = express();
  app.use(oauth.router);
  app.get('/api/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  app.get('/api/sign', oauth.requireBearer({ scope: SIGN }), (req, res) => { res.json(req.auth); });
  server.on('request', app);
  const { clientSecret } = await oauth.admin.createClient({ name: 'Resource server', flow: 'client_credentials', clientId: rsId });
  let administer: Real['administer'] = (op) => op(oauth.admin, (userId, clientId) => oauth.withdrawConsent(userId, clientId));
  if (administered !== served) {
    const admin = createOAuthAdmin(administered);
    administer = async (op, revokes) => {
      const before = served.revocations?.mark() ?? null;
      const result = await op(admin, (userId, clientId) => withdrawConsent(administered, userId, clientId));
      if (revokes && feedLag) {
        const waitFrom = Date.now();
        const deadline = Date.now() + FEED_WAIT_MS;
        while (Date.now() < deadline) {
          const now = served.revocations?.mark() ?? null;
          if (now !== null && now !== before) break;
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        if (Date.now() >= deadline) fact(`revocation feed did not move within ${FEED_WAIT_MS} ms`);
        else fact(`revocation feed moved within ${[2, 10, 50, 200, FEED_WAIT_MS].find((ms) => Date.now() - waitFrom <= ms)} ms`);
      }
      return result;
    };
  }
  return {
    base, oauth, rs: { clientId: rsId, secret: clientSecret }, administer,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// The engines, gated as every PostgreSQL and Redis suite is; `OAUTH_TEST_MODEL_REDIS_PREFIX` keeps this file's Redis keys under a prefix of the caller's.
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_PREFIX = process.env.OAUTH_TEST_MODEL_REDIS_PREFIX ?? 'model_lifecycle_';

/** Two instances' stores on the same data, and how to throw them away. */
interface StorePair {
  readonly served: Store;
  readonly administered: Store;
  dispose(): Promise<void>;
}

let pairs = 0;
/** A fresh store, opened twice (two connections, as two instances would), on the SQLite, PostgreSQL or Redis store. */
async function openPair(label: string): Promise<StorePair> {
  pairs += 1;
  const unique = `model_pair_${process.pid}_${Date.now().toString(36)}_${pairs}`;
  if (label === 'SQLite') {
    const dir = mkdtempSync(join(tmpdir(), 'model-pair-'));
    const filename = join(dir, 'oauth.sqlite');
    const served = createSqliteStore({ filename, sweepIntervalSeconds: 0 });
    const administered = createSqliteStore({ filename, sweepIntervalSeconds: 0 });
    return { served, administered, async dispose() { await served.close(); await administered.close(); rmSync(dir, { recursive: true, force: true }); } };
  }
  if (label === 'PostgreSQL') {
    const open = () => createPostgresStore({ connectionString: POSTGRES_URL, schema: unique, sweepIntervalSeconds: 0 });
    const served = await open();
    const administered = await open();
    return {
      served, administered,
      async dispose() {
        await served.close();
        await administered.close();
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS "${unique}" CASCADE`);
        await admin.end();
      },
    };
  }
  const prefix = `${REDIS_PREFIX}${unique}:`;
  const open = () => createRedisStore({ url: REDIS_URL, prefix, sweepIntervalSeconds: 0 });
  const served = await open();
  const administered = await open();
  return {
    served, administered,
    async dispose() {
      await served.close();
      await administered.close();
      const admin = createClient({ url: REDIS_URL });
      await admin.connect();
      for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length > 0) await admin.del(keys);
      await admin.quit();
    },
  };
}

/** The built-in stores; with `OAUTH_TEST_MODEL_REDIS_PREFIX` the Redis one's keys go under the caller's prefix. */
const STORES: readonly StoreCase[] = builtInStores('model_lifecycle').map(([label, available, open]): StoreCase => [
  label, available,
  label === 'Redis' && process.env.OAUTH_TEST_MODEL_REDIS_PREFIX !== undefined
    ? async () => {
      const { served, dispose } = await openPair('Redis');
      return { store: served, dispose };
    }
    : open,
]);
const STORE_LABELS = STORES.map(([label]) => label);

describe.each(STORES)('grant lifecycle on the %s store, against a model (RFC 6749, 6750, 7009, 7662)', (label, available, open) => {
  // The memory store lives in one process: it has no second instance.
  const cases = VARIANTS.flatMap((variant, i) => (variant.instances === 1 || label !== 'memory' ? [[variant.name, i] as const] : []));

  it.skipIf(!available).each(cases)(
    'with %s: no revoked or expired token is accepted, a replayed code revokes its grant, every answer is the RFC\'s',
    async (_name, variantIndex) => {
      const variant = VARIANTS[variantIndex]!;
      const port = PORT === 0 ? 0 : PORT + STORE_LABELS.indexOf(label) * VARIANTS.length + variantIndex;
      let stores: StorePair;
      if (variant.instances === 2) {
        stores = await openPair(label);
      } else {
        const opened: OpenedStore = await open();
        stores = { served: opened.store, administered: opened.store, dispose: () => opened.dispose() };
      }
      const harness = await startHarness(stores.served, stores.administered, `${label.toLowerCase()}-${variantIndex}`, port, variant.ttl, label !== 'SQLite', variant.format ?? 'opaque');
      let sequence = 0;
      let executed = 0;
      try {
        await fc.assert(
          fc.asyncProperty(variant.commands, async (cmds) => {
            sequence += 1;
            const tag = `m-${process.pid}-${Date.now().toString(36)}-${sequence}`;
            const rs: MClient = {
              clientId: harness.rs.clientId, flow: 'client_credentials', generation: 0, secret: harness.rs.secret, previous: null, retired: [],
              disabled: false, deleted: false, consents: new Map(), consentScopes: new Map(), scopes: [], revokedAt: 0,
            };
            const model = Object.assign({ clients: [], tokens: [], codes: [], users: [`${tag}-a`, `${tag}-b`], generations: 0 } as Model, { rs });
            const real: Real = {
              base: harness.base, jars: new Map(), signedIn: new Set(), ttl: variant.ttl, administer: harness.administer,
              copiesMayLag: variant.instances === 2,
            };
            // Two integrations of each flow to start from, so that every command has subjects from the first one.
            for (const [flow, scopes] of [
              ['authorization_code', []], ['authorization_code', [READ]], ['client_credentials', []], ['client_credentials', [READ, SIGN]],
            ] as const) {
              await new Register(flow, null, scopes).run(model, real);
            }
            await fc.asyncModelRun(() => ({ model, real }), cmds);
            executed += String(cmds).split('),').length;
            expect(errors, 'the router logged no error').toEqual([]);
          }),
          { numRuns: variant.runs, ...(SEED === undefined ? {} : { seed: SEED }), ...(PATH === undefined ? {} : { path: PATH }), endOnFailure: false },
        );
      } finally {
        await harness.close();
        await stores.dispose();
      }
      if (process.env.OAUTH_TEST_MODEL_TALLY) console.info(label, variant.name, sequence, 'sequences', executed, 'commands', Object.fromEntries([...tally].sort()));
      tally.clear();
    },
    600_000,
  );
});
