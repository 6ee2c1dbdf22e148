// Drives the login and consent forms with a cookie-keeping supertest agent, as a browser would.
import request from 'supertest';
import type express from 'express';
import { expect } from 'vitest';
import { ISSUER, REDIRECT_URI, USER, type TestClient } from './app.js';

/** Reads a hidden input's value from a page. */
export function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no hidden field ${name} in page`);
  return match[1]!;
}

/** The query of an authorization request, with defaults a test can override (undefined removes one). */
export function authorizeQuery(client: TestClient, extra: Record<string, string | undefined> = {}): string {
  const params: Record<string, string | undefined> = {
    response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, state: 'xyz-123', ...extra,
  };
  return new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();
}

/** Signs in through the login page of an authorization request; returns the page (or redirect) that follows. */
export async function signIn(agent: request.Agent, prefix: string, query: string): Promise<request.Response> {
  const login = await agent.get(`${prefix}/oauth2/authorize?${query}`);
  expect(login.status).toBe(200);
  const posted = await agent.post(`${prefix}/oauth2/login`).type('form').send({
    csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
    username: USER.username, password: USER.password,
  });
  expect(posted.status).toBe(303);
  return agent.get(posted.headers.location!);
}

/** Signs in through the login page of an authorization request and returns the consent page's HTML. */
export async function signInAndGetConsent(agent: request.Agent, prefix: string, query: string): Promise<string> {
  const consent = await signIn(agent, prefix, query);
  expect(consent.status).toBe(200);
  expect(consent.text).toContain('name="decision"');
  return consent.text;
}

/** Runs the whole browser part and returns the callback URL the browser was sent to. */
export async function authorize(
  app: express.Express, client: TestClient, options: { prefix?: string; query?: Record<string, string | undefined>; decision?: 'allow' | 'deny' } = {},
): Promise<URL> {
  const agent = request.agent(app);
  const prefix = options.prefix ?? '';
  const page = await signIn(agent, prefix, authorizeQuery(client, options.query));
  // A remembered consent (same user, integration and scopes) skips the consent page.
  if (page.status === 302 && (options.decision ?? 'allow') === 'allow') return new URL(page.headers.location!);
  expect(page.status).toBe(200);
  const consent = page.text;
  const decided = await agent.post(`${prefix}/oauth2/consent`).type('form').send({
    csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'),
    decision: options.decision ?? 'allow',
  });
  expect(decided.status, 'a form POST is answered 303 (RFC 9700 §4.12.2)').toBe(303);
  return new URL(decided.headers.location!);
}

/** Runs the browser part and returns a fresh authorization code. */
export async function obtainCode(app: express.Express, client: TestClient, options: Parameters<typeof authorize>[2] = {}): Promise<string> {
  const callback = await authorize(app, client, options);
  const code = callback.searchParams.get('code');
  expect(code).toBeTruthy();
  return code!;
}

export { ISSUER };
