// Helpers for the spec and compliance tests: cookies, the login form step by step, token requests.
import request from 'supertest';
import type express from 'express';
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { REDIRECT_URI, USER, basic, type TestClient } from './app.js';
import { authorizeQuery, hiddenField, signInAndGetConsent } from './browser-flow.js';

/** Name of the router's session cookie (default of `session.cookieName`). */
export const SESSION_COOKIE = 'oauth.sid';

/** The raw `Set-Cookie` line for `name` in a response, or undefined. */
export function setCookieLine(res: request.Response, name = SESSION_COOKIE): string | undefined {
  const raw = res.headers['set-cookie'] as unknown;
  const lines = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  return lines.find((line) => line.startsWith(`${name}=`));
}

/** The value a response set for cookie `name`, or undefined. */
export function cookieValue(res: request.Response, name = SESSION_COOKIE): string | undefined {
  const line = setCookieLine(res, name);
  return line?.slice(name.length + 1).split(';')[0];
}

/** The login form of an authorization request, opened with `agent`. */
export interface LoginForm {
  readonly res: request.Response;
  readonly csrfToken: string;
  readonly requestId: string;
}

/** GETs the authorization endpoint while signed out and reads the login form's hidden fields. */
export async function openLoginForm(agent: request.Agent, prefix: string, query: string): Promise<LoginForm> {
  const res = await agent.get(`${prefix}/oauth2/authorize?${query}`);
  expect(res.status).toBe(200);
  return { res, csrfToken: hiddenField(res.text, 'csrf_token'), requestId: hiddenField(res.text, 'request_id') };
}

/** POSTs the login form with the given fields (defaults: the test user's right credentials). */
export function postLogin(agent: request.Agent, prefix: string, form: Record<string, string | undefined>): request.Test {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries({ username: USER.username, password: USER.password, ...form })) {
    if (value !== undefined) fields[name] = value;
  }
  return agent.post(`${prefix}/oauth2/login`).type('form').send(fields);
}

/** The consent form of a signed-in agent. */
export interface ConsentForm {
  readonly html: string;
  readonly csrfToken: string;
  readonly requestId: string;
}

/** Reads the hidden fields of a consent page. */
export function consentForm(html: string): ConsentForm {
  return { html, csrfToken: hiddenField(html, 'csrf_token'), requestId: hiddenField(html, 'request_id') };
}

/** POSTs the consent form. */
export function postConsent(agent: request.Agent, prefix: string, form: Record<string, string | undefined>): request.Test {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(form)) if (value !== undefined) fields[name] = value;
  return agent.post(`${prefix}/oauth2/consent`).type('form').send(fields);
}

/** POST {prefix}/oauth2/token with Basic authentication for `client` and a form body. */
export function tokenRequest(
  app: express.Express, prefix: string, client: TestClient, form: Record<string, string>, host?: string,
): request.Test {
  const req = request(app).post(`${prefix}/oauth2/token`).set('Authorization', basic(client)).type('form');
  if (host !== undefined) req.set('Host', host);
  return req.send(form);
}

/** Exchanges a code (SPEC §4.3), with the default redirect_uri unless `extra` overrides it. */
export function redeemCode(
  app: express.Express, prefix: string, client: TestClient, code: string, extra: Record<string, string> = {},
): request.Test {
  return tokenRequest(app, prefix, client, {
    grant_type: 'authorization_code', client_id: client.clientId, redirect_uri: REDIRECT_URI, code, ...extra,
  });
}

/** A fresh PKCE pair (RFC 7636 §4.1–4.2): a 43-character verifier and its S256 challenge. */
export function createPkcePair(verifier = randomBytes(32).toString('base64url')): { verifier: string; challenge: string } {
  return { verifier, challenge: createHash('sha256').update(verifier, 'ascii').digest('base64url') };
}

/** Asserts an HTML error page that does not redirect (RFC 6749 §4.1.2.1) and returns its text. */
export function expectErrorPage(res: request.Response, status = 400): string {
  expect(res.status).toBe(status);
  expect(res.headers.location).toBeUndefined();
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  return res.text;
}

/**
 * Asserts a redirect to `redirectUri` and returns the callback URL: 302 from the authorization endpoint's GET,
 * 303 from a form's POST (RFC 9700 §4.12.2).
 */
export function expectRedirectTo(res: request.Response, redirectUri = REDIRECT_URI): URL {
  const method = (res as unknown as { req: { method: string } }).req.method;
  expect(res.status).toBe(method === 'POST' ? 303 : 302);
  const location = res.headers.location;
  expect(location).toBeDefined();
  expect(location!.startsWith(`${redirectUri}${redirectUri.includes('?') ? '&' : '?'}`)).toBe(true);
  return new URL(location!);
}

/** A signed-in agent looking at the consent page of a fresh authorization request. */
export async function signedInAtConsent(
  app: express.Express, client: TestClient, query: Record<string, string | undefined> = {},
): Promise<{ agent: request.Agent; consent: ConsentForm }> {
  const agent = request.agent(app);
  const html = await signInAndGetConsent(agent, '', authorizeQuery(client, query));
  return { agent, consent: consentForm(html) };
}

/** The raw authorization request for `query` (no cookies). */
export function getAuthorize(app: express.Express, query: string): request.Test {
  return request(app).get(`/oauth2/authorize?${query}`);
}

// SPEC §4.2: "The success response also carries these headers: …" — the same set goes out on errors.
export const SPEC_HEADERS: Readonly<Record<string, string>> = {
  pragma: 'no-cache',
  expires: '0',
  'cache-control': 'no-cache, no-store, max-age=0, must-revalidate',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'x-xss-protection': '1; mode=block',
  'strict-transport-security': 'max-age=31536000 ; includeSubDomains',
  'content-type': 'application/json;charset=UTF-8',
};

/** Every SPEC §4.2 header byte for byte, a Content-Length that fits, and nothing Express adds of its own. */
export function expectSpecHeaders(res: request.Response): void {
  for (const [name, value] of Object.entries(SPEC_HEADERS)) expect(res.headers[name], name).toBe(value);
  expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
  expect(res.headers['x-powered-by']).toBeUndefined();
  expect(res.headers.etag).toBeUndefined();
}
