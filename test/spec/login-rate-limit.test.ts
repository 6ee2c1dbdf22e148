// Failed sign-ins are limited per client IP (RFC 6819 §4.4.3.6: online guessing of passwords).
import { describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, USER } from '../helpers/app.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import type { OAuthRouterOptions } from '../../src/options.js';

async function loginForm(options: Partial<OAuthRouterOptions> = {}) {
  const t = await createTestApp(options);
  const agent = request.agent(t.app);
  const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
  const fields = { csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id') };
  const attempt = (password: string) => agent.post('/oauth2/login').type('form').send({ ...fields, username: USER.username, password });
  return { attempt };
}

describe('login rate limit', () => {
  it('answers 429 with Retry-After once the failed attempts of the window are used up', async () => {
    const { attempt } = await loginForm({ loginRateLimit: { max: 3, windowSeconds: 60 } });
    for (let i = 0; i < 3; i += 1) expect((await attempt('wrong')).status).toBe(401);
    const limited = await attempt('wrong');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many failed sign-in attempts');
  });

  it('refuses even the right password while the limit holds, so guessing cannot continue', async () => {
    const { attempt } = await loginForm({ loginRateLimit: { max: 2, windowSeconds: 60 } });
    await attempt('wrong');
    await attempt('wrong');
    expect((await attempt(USER.password)).status).toBe(429);
  });

  it('does not count successful sign-ins', async () => {
    const { attempt } = await loginForm({ loginRateLimit: { max: 2, windowSeconds: 60 } });
    expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt(USER.password)).status).toBe(303);
    expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt('wrong')).status).toBe(429);
  });

  it('allows 10 failed attempts per 15 minutes by default', async () => {
    const { attempt } = await loginForm();
    for (let i = 0; i < 10; i += 1) expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt('wrong')).status).toBe(429);
  });

  it('can be turned off with loginRateLimit: false', async () => {
    const { attempt } = await loginForm({ loginRateLimit: false });
    for (let i = 0; i < 12; i += 1) expect((await attempt('wrong')).status).toBe(401);
  });

  it('rejects a bad option at start-up, naming the key', async () => {
    await expect(createTestApp({ loginRateLimit: { max: 0 } })).rejects.toThrow('"loginRateLimit.max"');
  });
});
