// The model's requests over real HTTP: timed, tallied, never a 5xx; a browser per user; client-authenticated POSTs.
import { expect } from 'vitest';
import { basic } from '../app.js';
import { createFetchBrowser } from '../fetch-cookie-jar.js';
import type { Method, Real, Window } from './model.js';
import { tally } from './tally.js';

/** An answer of the server under test, read in full. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
  /** When it was sent and when its answer was read. */
  readonly at: Window;
}

/** Sends a request (`method` and `path` name it in the tally) and reads its answer, with when it was sent and read. */
async function answer(method: string, path: string, request: () => Promise<Response>): Promise<Answer> {
  const from = Date.now();
  const res = await request();
  const text = await res.text();
  const to = Date.now();
  let json: Record<string, unknown> = {};
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(text) as Record<string, unknown>;
  const line = `${method} ${path.split('?')[0]} ${res.status} ${json.error ?? ''}`.trim();
  tally.set(line, (tally.get(line) ?? 0) + 1);
  expect(res.status, `never a 5xx: ${path} ${text.slice(0, 200)}`).toBeLessThan(500);
  return { status: res.status, headers: res.headers, text, json, at: [from, to] };
}

/** A request of no browser (no cookies): a form is POSTed, else a GET. */
export function send(real: Real, path: string, init: { headers?: Record<string, string>; form?: Record<string, string> } = {}): Promise<Answer> {
  return answer(init.form ? 'POST' : 'GET', path, () => fetch(`${real.base}${path}`, {
    method: init.form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: { ...(init.form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}), ...init.headers },
    ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
  }));
}

/** The browser of one user: GETs and same-origin form POSTs with its cookies. */
export function browse(real: Real, userId: string, path: string, form?: Record<string, string>): Promise<Answer> {
  let browser = real.browsers.get(userId);
  if (!browser) real.browsers.set(userId, (browser = createFetchBrowser(real.base)));
  return answer(form ? 'POST' : 'GET', path, () => browser(path, form));
}

/** The path and query a redirect's Location names, to follow it on the same server. */
export function pathOf(location: string | null, base: string): string {
  expect(location).toBeTruthy();
  const url = new URL(location!, base);
  return `${url.pathname}${url.search}`;
}

/** POSTs a form to a client-authenticated endpoint with client_secret_basic or client_secret_post. */
export function clientPost(real: Real, endpoint: 'token' | 'revoke' | 'introspect', clientId: string, secret: string, method: Method, form: Record<string, string>): Promise<Answer> {
  if (method === 'post') return send(real, `/oauth2/${endpoint}`, { form: { ...form, client_id: clientId, client_secret: secret } });
  return send(real, `/oauth2/${endpoint}`, { headers: { Authorization: basic({ clientId, clientSecret: secret }) }, form });
}
