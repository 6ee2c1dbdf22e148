// No token or code expires past 9999-12-31T23:59:59Z, the last second every Date, store and JWT verifier here holds.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';
import { basic, createTestApp, type TestApp } from '../helpers/app.js';
import { apiStatus, codeTokens, introspect, refresh } from '../helpers/token-requests.js';

const TEN_YEARS = 10 * 365 * 86_400;
/** 9999-12-31T23:59:59Z in seconds: past it, PostgreSQL's save refused the ISO text (`+010005-…`, a 500) and the JWT verifier the `exp`. */
const LAST_SECOND = 253_402_300_799;
/** Four years before it: a ten-year lifetime from here would end in 10005. */
const LATE_CLOCK = new Date('9995-12-31T23:59:59Z');
const LEFT = LAST_SECOND - LATE_CLOCK.getTime() / 1000;

describe.each(builtInStores('latest_expiry'))('%s: a lifetime that would end past the year 9999 ends at its last second', (_label, available, open) => {
  let opened: OpenedStore;
  beforeEach(async () => {
    if (!available) return;
    opened = await open();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(LATE_CLOCK);
  });
  afterEach(async () => {
    vi.useRealTimers();
    if (available) await opened.dispose();
  });

  async function issue(t: TestApp): Promise<request.Response> {
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res;
  }

  it.runIf(available).each(['opaque', 'jwt'] as const)('%s: expires_in says when, the token works until then and not after', async (format) => {
    const t = await createTestApp({ accessTokenTtl: TEN_YEARS, accessTokenFormat: format }, opened.store);
    const res = await issue(t);
    expect(res.body.expires_in).toBe(LEFT);
    const token = res.body.access_token as string;
    const active = await introspect(t.app, t.credentialsClient, { token });
    expect(active.body).toMatchObject({ active: true, exp: LAST_SECOND });
    vi.setSystemTime(LAST_SECOND * 1000 - 1000);
    expect(await apiStatus(t.app, token)).toBe(200);
    vi.setSystemTime(LAST_SECOND * 1000);
    expect(await apiStatus(t.app, token)).toBe(401);
  });

  it.runIf(available)('a code and a refresh token issued in the last minutes: exchanged, refreshed until then, refused after', async () => {
    vi.setSystemTime(new Date('9999-12-31T23:55:00Z'));
    const t = await createTestApp({ refreshTokenTtl: TEN_YEARS }, opened.store);
    const tokens = await codeTokens(t.app, t.codeClient);
    const refreshed = await refresh(t.app, t.codeClient, tokens.refreshToken);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.expires_in).toBe(LAST_SECOND - Math.floor(Date.now() / 1000));
    vi.setSystemTime(LAST_SECOND * 1000);
    expect((await refresh(t.app, t.codeClient, tokens.refreshToken)).status).toBe(400);
  });
});
