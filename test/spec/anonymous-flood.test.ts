// An unauthenticated flood grows no server-side state: no session before a sign-in, bounded sessions after.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, USER, type TestApp } from '../helpers/app.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import { SESSION_COOKIE, cookieValue } from '../helpers/spec-requests.js';
import { MemorySessionStore } from '../../src/http/memory-session-store.js';
import { MAX_PENDING } from '../../src/http/pending-requests.js';

// What the review sent: a valid authorization request padded with an unknown parameter to ~14 KB.
const PADDING = 'x'.repeat(14_000);

let server: Server | undefined;
afterEach(async () => {
  vi.useRealTimers();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

async function listen(t: TestApp): Promise<string> {
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server!.once('listening', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

/** The session id inside an `oauth.sid` cookie value (`s:<id>.<signature>`). */
function sessionId(cookie: string): string {
  return decodeURIComponent(cookie).slice(2).split('.')[0]!;
}

async function signIn(t: TestApp, query: string): Promise<{ agent: request.Agent; cookie: string }> {
  const agent = request.agent(t.app);
  const login = await agent.get(`/oauth2/authorize?${query}`);
  const posted = await agent.post('/oauth2/login').type('form').send({
    csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
    username: USER.username, password: USER.password,
  });
  expect(posted.status).toBe(303);
  return { agent, cookie: cookieValue(posted)! };
}

describe('anonymous authorization requests create no session (RFC 6749 §10.12 without server state)', () => {
  it('2,000 signed-out requests of ~14 KB each leave the session store empty and set no session cookie', async () => {
    const sessions = new MemorySessionStore();
    const t = await createTestApp({ session: { secret: 'test-session-secret-0123456789', store: sessions } });
    const base = await listen(t);
    const url = `${base}/oauth2/authorize?${authorizeQuery(t.codeClient, { padding: PADDING })}`;
    let sessionCookies = 0;
    for (let i = 0; i < 2000; i += 1) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      if (res.headers.getSetCookie().some((line) => line.startsWith(`${SESSION_COOKIE}=`))) sessionCookies += 1;
      await res.arrayBuffer();
    }
    expect(sessionCookies).toBe(0);
    expect(sessions.size).toBe(0);
  }, 60_000);

  it('sets no session cookie with the default store either, and failed sign-ins create none', async () => {
    const t = await createTestApp({ loginRateLimit: false });
    const agent = request.agent(t.app);
    const login = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(cookieValue(login)).toBeUndefined();
    const failed = await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: 'wrong',
    });
    expect(failed.status).toBe(400);
    expect(cookieValue(failed)).toBeUndefined();
    const forged = await request(t.app).post('/oauth2/login').type('form').send({ csrf_token: 'x', request_id: 'y' });
    expect(forged.status).toBe(403);
    expect(cookieValue(forged)).toBeUndefined();
  });
});

describe('what a signed-in session keeps is bounded', () => {
  it(`keeps the newest ${MAX_PENDING} pending requests, each its validated parameters only`, async () => {
    const sessions = new MemorySessionStore();
    const t = await createTestApp({ session: { secret: 'test-session-secret-0123456789', store: sessions }, rememberConsent: false });
    const query = (i: number) => authorizeQuery(t.codeClient, { state: `s${i}`, padding: PADDING });
    const { agent, cookie } = await signIn(t, query(0));
    const forms: string[] = [];
    for (let i = 0; i < 3 * MAX_PENDING; i += 1) {
      const page = await agent.get(`/oauth2/authorize?${query(i)}`);
      expect(page.status).toBe(200);
      forms.push(hiddenField(page.text, 'request_id'));
    }
    const stored = await new Promise<unknown>((resolve, reject) => sessions.get(sessionId(cookie), (err, s) => (err ? reject(err) : resolve(s))));
    const kept = (stored as { expressOAuthRouter: { pending: Record<string, { query: string }> } }).expressOAuthRouter.pending;
    expect(Object.keys(kept)).toHaveLength(MAX_PENDING);
    for (const pending of Object.values(kept)) expect(pending.query).not.toContain('padding');
    expect(JSON.stringify(stored).length).toBeLessThan(8_000);
    // The oldest form has expired; the newest is answered.
    const consentPage = await agent.get(`/oauth2/authorize?${query(99)}`);
    const csrf = hiddenField(consentPage.text, 'csrf_token');
    const oldest = await agent.post('/oauth2/consent').type('form').send({ csrf_token: csrf, request_id: forms[0], decision: 'allow' });
    expect(oldest.status).toBe(400);
    const newest = await agent.post('/oauth2/consent').type('form').send({ csrf_token: csrf, request_id: hiddenField(consentPage.text, 'request_id'), decision: 'allow' });
    expect(newest.status).toBe(303);
  });

  it('keeps at most maxSessions sessions in the memory store under a flood of sign-ins, the newest signed in', async () => {
    const sessions = new MemorySessionStore({ maxSessions: 25 });
    const t = await createTestApp({ session: { secret: 'test-session-secret-0123456789', store: sessions }, loginRateLimit: false });
    const signedIn: request.Agent[] = [];
    for (let i = 0; i < 100; i += 1) {
      signedIn.push((await signIn(t, authorizeQuery(t.codeClient))).agent);
      expect(sessions.size).toBeLessThanOrEqual(25);
    }
    const newest = await signedIn.at(-1)!.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'consent' })}`);
    expect(newest.text).toContain('name="decision"');
    const evicted = await signedIn[0]!.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'consent' })}`);
    expect(evicted.text).toContain('name="password"');
  });

  it('sweeps expired sessions as new ones are written', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sessions = new MemorySessionStore();
    const t = await createTestApp({ session: { secret: 'test-session-secret-0123456789', store: sessions, idleTtl: 60 }, loginRateLimit: false });
    for (let i = 0; i < 20; i += 1) await signIn(t, authorizeQuery(t.codeClient));
    expect(sessions.size).toBe(20);
    vi.setSystemTime(Date.now() + 61_000);
    await signIn(t, authorizeQuery(t.codeClient));
    expect(sessions.size).toBe(1);
  });
});
