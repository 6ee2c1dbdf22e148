// RFC 9700 §4.14: under concurrent requests, the audit events, the Prometheus counter and the store tell one story: every
// token answered is issued once in the events and the metrics, and is in the store unless a reported revocation removed it.
import express from 'express';
import request from 'supertest';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent, OAuthEventOf, OAuthEventType } from '../../src/events/event-types.js';
import { createOAuthMetrics } from '../../src/metrics/index.js';
import type { Store } from '../../src/stores/contract.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { createCredential } from '../../src/crypto/ordered-token.js';
import { createGrantId } from '../../src/crypto/random-grant-id.js';
import { basic, createTestUserAuth, ISSUER, REDIRECT_URI, USER, type TestClient } from '../helpers/app.js';
import { builtInStores } from '../helpers/built-in-stores.js';
import { parseScrape } from '../helpers/prometheus-text.js';

/** One answer of the token or revocation endpoint, with the grant it was about when the test knows it. */
interface Answer {
  readonly what: 'code' | 'client_credentials' | 'refresh' | 'revoke';
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly grantId: string | null;
}

const count = <T>(items: readonly T[]): Map<T, number> => items.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<T, number>());

/**
 * Sends, all at once: 12 code exchanges, a third of the codes presented three times and a third twice, with 8
 * client_credentials requests; then, all at once, two refreshes of every refresh token answered, two revocations of
 * every other refresh token and of every third access token. Returns every answer and every event heard.
 */
async function burst(store: Store): Promise<{ answers: Answer[]; seen: OAuthEvent[]; metric: (grantType: string) => Promise<number> }> {
  const events = new OAuthEvents();
  const seen: OAuthEvent[] = [];
  events.on('event', (e) => seen.push(e));
  const metrics = createOAuthMetrics({ registry: new Registry() });
  const oauth = createOAuthRouter(metrics.instrumentStore(store), createTestUserAuth(new Set()), {
    issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} }, events,
    // Off: its queue answers 429 to a burst of one client, which would only make fewer requests reach the store.
    clientAuthRateLimit: false,
  });
  metrics.observe(oauth);
  const app = express();
  app.use(oauth.router);
  app.get('/metrics', metrics.handler);
  const register = async (flow: 'authorization_code' | 'client_credentials'): Promise<TestClient> => {
    const { client, clientSecret } = await registerClient(store, {
      name: flow, flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [], allowedScopes: [],
    });
    return { clientId: client.clientId, clientSecret };
  };
  const codeClient = await register('authorization_code');
  const machine = await register('client_credentials');
  const answers: Answer[] = [];
  const send = async (what: Answer['what'], client: TestClient, form: Record<string, string>, grantId: string | null): Promise<Answer> => {
    const res = await request(app).post(what === 'revoke' ? '/oauth2/revoke' : '/oauth2/token').set('Authorization', basic(client)).type('form').send(form);
    const answer = { what, status: res.status, body: res.body as Record<string, unknown>, grantId };
    answers.push(answer);
    return answer;
  };

  // Codes saved as the authorization endpoint saves them.
  const codes = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
    const code = createCredential(false);
    const grantId = createGrantId();
    await store.codes.saveCode({
      codeHash: hashToken(code), grantId, clientId: codeClient.clientId, userId: USER.id, redirectUri: REDIRECT_URI, scope: [],
      codeChallenge: null, issuer: ISSUER, issuedAt: new Date(), expiresAt: new Date(Date.now() + 60_000),
    });
    return { code, grantId, times: 3 - (i % 3) };
  }));
  await Promise.all([
    ...codes.flatMap(({ code, grantId, times }) => Array.from({ length: times }, () =>
      send('code', codeClient, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, grantId))),
    ...Array.from({ length: 8 }, () => send('client_credentials', machine, { grant_type: 'client_credentials' }, null)),
  ]);
  const issued = answers.filter((a) => a.what === 'code' && a.status === 200);
  await Promise.all(issued.flatMap((a, i) => {
    const refreshToken = a.body.refresh_token as string;
    return [
      send('refresh', codeClient, { grant_type: 'refresh_token', refresh_token: refreshToken }, a.grantId),
      send('refresh', codeClient, { grant_type: 'refresh_token', refresh_token: refreshToken }, a.grantId),
      ...(i % 2 === 0 ? [0, 1].map(() => send('revoke', codeClient, { token: refreshToken, token_type_hint: 'refresh_token' }, a.grantId)) : []),
      ...(i % 3 === 1 ? [0, 1].map(() => send('revoke', codeClient, { token: a.body.access_token as string }, a.grantId)) : []),
    ];
  }));
  const metric = async (grantType: string) =>
    parseScrape((await request(app).get('/metrics')).text).value('oauth_tokens_issued_total', { grant_type: grantType, issuer: ISSUER });
  return { answers, seen, metric };
}

function eventsOf<T extends OAuthEventType>(seen: readonly OAuthEvent[], type: T): OAuthEventOf<T>[] {
  return seen.filter((event): event is OAuthEventOf<T> => event.type === type);
}

describe.each(builtInStores('audit_agree'))('audit events, metrics and the store agree under concurrent requests (%s store)', (_name, available, open) => {
  it.skipIf(!available)('every token answered is issued once in the events and the metrics, in the store unless a reported revocation removed it; each revocation and replay reported once', async () => {
    const opened = await open();
    try {
      const { store } = opened;
      const { answers, seen, metric } = await burst(store);
      const issuedEvents = [...eventsOf(seen, 'token.issued'), ...eventsOf(seen, 'token.refreshed')];
      const ok = answers.filter((a) => a.what !== 'revoke' && a.status === 200);
      // What no interleaving changes: every client_credentials request and every code presented once got tokens.
      expect(ok.filter((a) => a.what === 'client_credentials')).toHaveLength(8);
      expect(ok.filter((a) => a.what === 'code').length).toBeGreaterThanOrEqual(4);

      // One issue event and one count per token answered, by grant type; a 5xx (none expected here) would issue none.
      for (const [grantType, what] of [['authorization_code', 'code'], ['client_credentials', 'client_credentials'], ['refresh_token', 'refresh']] as const) {
        const answered = ok.filter((a) => a.what === what).length;
        expect(issuedEvents.filter((e) => e.grantType === grantType), grantType).toHaveLength(answered);
        expect(await metric(grantType), grantType).toBe(answered);
      }
      expect(answers.filter((a) => a.status >= 500)).toEqual([]);
      // And per grant, for the grants the test knows.
      expect(count(issuedEvents.filter((e) => e.grantType !== 'client_credentials').map((e) => e.grantId)))
        .toEqual(count(ok.filter((a) => a.grantId !== null).map((a) => a.grantId)));

      // Each replay answered is reported, and revokes its grant once.
      const replayAnswers = answers.filter((a) => a.what === 'code' && /already been used/.test(String(a.body.error_description)));
      expect(count(eventsOf(seen, 'code.replayed').map((e) => e.grantId))).toEqual(count(replayAnswers.map((a) => a.grantId)));
      const revoked = eventsOf(seen, 'token.revoked');
      for (const [key, n] of count(revoked.map((e) => `${e.cause} ${e.extent} ${e.grantId}`))) expect(n, key).toBe(1);
      for (const grantId of new Set(replayAnswers.map((a) => a.grantId))) {
        expect(revoked.filter((e) => e.grantId === grantId && e.cause === 'code_replay'), grantId!).toHaveLength(1);
      }

      // The store: a token answered is there unless a reported revocation of its grant, or of it, removed it; a
      // revoked grant keeps none.
      const revokedGrants = new Set(revoked.filter((e) => e.extent === 'grant').map((e) => e.grantId));
      const tokenRevocations = new Set(revoked.filter((e) => e.extent === 'token').map((e) => e.grantId));
      let compared = 0;
      for (const a of ok) {
        const live = (await store.tokens.findAccessToken(hashToken(a.body.access_token as string))) !== null;
        compared += 1;
        if (a.grantId === null) expect(live).toBe(true);
        else if (revokedGrants.has(a.grantId)) expect(live, `grant ${a.grantId} reported revoked`).toBe(false);
        else if (!live) expect(tokenRevocations.has(a.grantId), `a token of grant ${a.grantId} gone unreported`).toBe(true);
        if (typeof a.body.refresh_token === 'string') {
          const refreshLive = (await store.tokens.findRefreshToken(hashToken(a.body.refresh_token))) !== null;
          expect(refreshLive, `refresh token of grant ${a.grantId}`).toBe(!revokedGrants.has(a.grantId));
        }
      }
      // Each revocation answered 200 for a live token's access token that then is gone was reported (once, above).
      for (const a of answers.filter((b) => b.what === 'revoke' && b.status === 200 && b.body && b.grantId !== null)) {
        expect(revokedGrants.has(a.grantId) || tokenRevocations.has(a.grantId), `revocation of grant ${a.grantId} unreported`).toBe(true);
      }
      expect(compared).toBe(ok.length);
    } finally {
      await opened.dispose();
    }
  });
});
