// Failed sign-ins are limited per account and per source (RFC 6819 §4.4.3.6, §5.1.4.2.3; OWASP Authentication
// Cheat Sheet), and no stranger's failures keep the real user out from where they signed in before.
import { describe, expect, it } from 'vitest';
import request from 'supertest';
import { MemoryStore as ExpressRateLimitMemoryStore } from 'express-rate-limit';
import { createTestApp, USER, type TestApp } from '../helpers/app.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { Store } from '../../src/stores/contract.js';

const ATTACKER = '203.0.113.7';
const USER_HOME = '198.51.100.20';
const NEW_PLACE = '192.0.2.50';

/** A test host whose `req.ip` comes from X-Forwarded-For (`trust proxy`), so each test picks its sources. */
async function hostBehindProxy(options: Partial<OAuthRouterOptions> = {}, logged: string[] = [], store?: Store): Promise<TestApp> {
  const t = await createTestApp({ logger: { warn: (m) => logged.push(m), error: (m) => logged.push(m) }, ...options }, store);
  t.app.set('trust proxy', 'loopback');
  return t;
}

/** Opens the login form as one browser from `source` (none: the peer address); resolves a function posting it. */
async function loginForm(t: TestApp, source?: string) {
  const agent = request.agent(t.app);
  const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
  const fields = { csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id') };
  return (password: string, username: string = USER.username) => {
    const post = agent.post('/oauth2/login').type('form');
    if (source !== undefined) post.set('X-Forwarded-For', source);
    return post.send({ ...fields, username, password });
  };
}

async function statuses(attempt: (password: string, username?: string) => request.Test, times: number, password = 'wrong', username?: string): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < times; i += 1) seen.push((await attempt(password, username)).status);
  return seen;
}

describe('login rate limit: one source guessing one account', () => {
  it('answers 429 with Retry-After within the window once the failed attempts of the window are used up', async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: { max: 3, windowSeconds: 60 } }));
    expect(await statuses(attempt, 3)).toEqual([400, 400, 400]);
    const limited = await attempt('wrong');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.text).toContain('Too many failed sign-in attempts');
  });

  it('the 429 is the sign-in form again, saying when to try, so the user signs in from it once the window ends', async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: { max: 1, windowSeconds: 1 } }));
    const refused = await attempt('wrong');
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('aria-invalid="true"');
    const limited = await attempt('wrong');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.text).toContain('Too many failed sign-in attempts. Try again in a minute.');
    // The wait is not the fields' fault: the message describes them, without marking them invalid as a refused password does.
    expect(limited.text).toContain('aria-describedby="login-error"');
    expect(limited.text).not.toContain('aria-invalid');
    expect(hiddenField(limited.text, 'request_id'), 'the same request goes on').not.toBe('');
    expect(limited.text).toContain(`value="${USER.username}"`);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await attempt(USER.password)).status).toBe(303);
  });

  it('the 429 form shows the username as the 400 form does: an emoji at the 200-unit cut is left out whole, not sent as U+FFFD', async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: { max: 1, windowSeconds: 60 } }));
    // 199 letters, then an emoji (two UTF-16 code units) across the 200th unit: a plain slice kept its first half alone.
    const typed = `${'a'.repeat(199)}\u{1F600}tail`;
    expect((await attempt('wrong', typed)).status).toBe(400);
    const limited = await attempt('wrong', typed);
    expect(limited.status).toBe(429);
    expect(limited.text).toContain(`value="${'a'.repeat(199)}"`);
    expect(limited.text).not.toContain('\uFFFD');
  });

  it('refuses even the right password from that source while the limit holds, so guessing cannot go on', async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: { max: 2, windowSeconds: 60 } }));
    await statuses(attempt, 2);
    expect((await attempt(USER.password)).status).toBe(429);
  });

  it("a successful sign-in clears that source's failures for the account", async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: { max: 2, windowSeconds: 60 } }));
    expect((await attempt('wrong')).status).toBe(400);
    expect((await attempt(USER.password)).status).toBe(303);
    expect(await statuses(attempt, 3)).toEqual([400, 400, 429]);
  });

  it('allows 10 failed attempts per 15 minutes by default', async () => {
    const attempt = await loginForm(await createTestApp());
    expect(await statuses(attempt, 11)).toEqual([...Array(10).fill(400), 429]);
  });

  it('counts an account however its name is cased, padded or width-encoded', async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: { max: 2 } }));
    expect((await attempt('wrong', 'ALICE ')).status).toBe(400);
    expect((await attempt('wrong', 'ａｌｉｃｅ')).status).toBe(400);
    expect((await attempt(USER.password, 'alice')).status).toBe(429);
  });

  it('concurrent attempts cannot slip past the limit: of 12 at once, exactly max are checked', async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: { max: 3 } }));
    const all = await Promise.all(Array.from({ length: 12 }, () => attempt('wrong')));
    expect(all.map((res) => res.status).sort()).toEqual([...Array(3).fill(400), ...Array(9).fill(429)]);
  });

  it('one source hammering an account gets 429 while the real user signs in from a source never seen before', async () => {
    const t = await hostBehindProxy({ loginRateLimit: { max: 3, maxPerAccount: 5 } });
    const attacker = await loginForm(t, ATTACKER);
    expect(await statuses(attacker, 30)).toEqual([400, 400, 400, ...Array(27).fill(429)]);
    // The 27 refused attempts were never checked, so they are not counted against the account: another
    // source still has the account's remaining budget (5 - 3), and the right password signs in.
    const user = await loginForm(t, NEW_PLACE);
    expect((await user('typo')).status).toBe(400);
    expect((await user(USER.password)).status).toBe(303);
  });
});

describe('login rate limit: many sources, one account (a distributed attack)', () => {
  // Defined behaviour: past maxPerAccount failures in the window, a source new to the account is refused
  // (429), right password or not, until the window ends; a source where the user signed in within
  // knownSourceDays is not held back by the account's count, only by its own (account, source) count.
  it('past maxPerAccount, new sources are refused even with the right password; the known source signs in', async () => {
    const t = await hostBehindProxy({ loginRateLimit: { max: 3, maxPerAccount: 6 } });
    expect((await (await loginForm(t, USER_HOME))(USER.password)).status).toBe(303);
    for (const n of [1, 2, 3]) expect(await statuses(await loginForm(t, `203.0.113.${n}`), 2)).toEqual([400, 400]);
    expect((await (await loginForm(t, '203.0.113.4'))('wrong')).status).toBe(429);
    expect((await (await loginForm(t, NEW_PLACE))(USER.password)).status).toBe(429);
    const home = await loginForm(t, USER_HOME);
    expect((await home('wrong')).status).toBe(400);
    expect((await home(USER.password)).status).toBe(303);
  });

  it('a known source stays known while its users sign in at once: concurrent right passwords from it all get in', async () => {
    // Each counter write takes a round trip, as on PostgreSQL: a marker removed and written again would be
    // missing for that long, and a sign-in from the known source reading it then was refused (a soak test's find).
    const store = createMemoryStore();
    const rateLimits = store.rateLimits!;
    const hit = rateLimits.hit.bind(rateLimits);
    rateLimits.hit = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return hit(...args);
    };
    const t = await hostBehindProxy({ loginRateLimit: { max: 20, maxPerAccount: 4 } }, [], store);
    expect((await (await loginForm(t, USER_HOME))(USER.password)).status).toBe(303);
    for (const n of [1, 2]) expect(await statuses(await loginForm(t, `203.0.113.${n}`), 2)).toEqual([400, 400]);
    expect((await (await loginForm(t, NEW_PLACE))(USER.password)).status, 'the account is over its limit for new sources').toBe(429);
    // Six users behind the office's address, each signing in eight times in a row: their attempts overlap.
    const user = async (): Promise<number[]> => {
      const seen: number[] = [];
      for (let i = 0; i < 8; i += 1) seen.push((await (await loginForm(t, USER_HOME))(USER.password)).status);
      return seen;
    };
    const signIns = (await Promise.all(Array.from({ length: 6 }, user))).flat();
    expect(signIns).toEqual(Array(48).fill(303));
  });

  it('an IPv6 host rotating through its own /56 counts as one source', async () => {
    const t = await hostBehindProxy({ loginRateLimit: { max: 2 } });
    const seen: number[] = [];
    for (const suffix of ['1', '2', '3']) seen.push((await (await loginForm(t, `2001:db8:0:1::${suffix}`))('wrong')).status);
    expect(seen).toEqual([400, 400, 429]);
  });
});

describe('login rate limit: one source, many accounts (password spraying)', () => {
  it('past maxPerSource failures across accounts, the source is refused for accounts new to it, not for a user who signed in there', async () => {
    const t = await hostBehindProxy({ loginRateLimit: { max: 3, maxPerSource: 4 } });
    expect((await (await loginForm(t, USER_HOME))(USER.password)).status).toBe(303);
    const sprayer = await loginForm(t, USER_HOME);
    const sprayed: number[] = [];
    for (const name of ['bob', 'carol', 'dave', 'erin', 'frank']) sprayed.push((await sprayer('Password1', name)).status);
    expect(sprayed).toEqual([400, 400, 400, 400, 429]);
    expect((await sprayer(USER.password)).status).toBe(303);
  });
});

describe('login rate limit: counters', () => {
  it('two routers on one store count together (the store’s rateLimits tier)', async () => {
    const store = createMemoryStore();
    const one = await createTestApp({ loginRateLimit: { max: 3 } }, store);
    const two = await createTestApp({ loginRateLimit: { max: 3 } }, store);
    expect(await statuses(await loginForm(one), 2)).toEqual([400, 400]);
    expect(await statuses(await loginForm(two), 2)).toEqual([400, 429]);
  });

  it('loginRateLimit.store, an express-rate-limit Store, still holds the failure counters', async () => {
    const shared = new ExpressRateLimitMemoryStore();
    const one = await createTestApp({ loginRateLimit: { max: 3, store: shared } });
    const two = await createTestApp({ loginRateLimit: { max: 3, store: shared } });
    expect(await statuses(await loginForm(one), 2)).toEqual([400, 400]);
    expect(await statuses(await loginForm(two), 2)).toEqual([400, 429]);
    shared.shutdown();
  });

  it('warns once when requests carry X-Forwarded-For but the app does not trust its proxy', async () => {
    const logged: string[] = [];
    const t = await createTestApp({ logger: { warn: (m) => logged.push(m), error: (m) => logged.push(m) } });
    const attempt = await loginForm(t, ATTACKER);
    await statuses(attempt, 2);
    expect(logged.filter((m) => m.includes('trust proxy'))).toHaveLength(1);
  });

  it('can be turned off with loginRateLimit: false', async () => {
    const attempt = await loginForm(await createTestApp({ loginRateLimit: false }));
    expect(new Set(await statuses(attempt, 12))).toEqual(new Set([400]));
  });

  it('rejects a bad option at start-up, naming the key', async () => {
    await expect(createTestApp({ loginRateLimit: { max: 0 } })).rejects.toThrow('"loginRateLimit.max"');
    await expect(createTestApp({ loginRateLimit: { maxPerAccount: 1.5 } })).rejects.toThrow('"loginRateLimit.maxPerAccount"');
    await expect(createTestApp({ loginRateLimit: { windowSecs: 60 } as never })).rejects.toThrow('"loginRateLimit.windowSecs"');
    await expect(createTestApp({ loginRateLimit: { store: {} as never } })).rejects.toThrow('"loginRateLimit.store"');
  });
});
