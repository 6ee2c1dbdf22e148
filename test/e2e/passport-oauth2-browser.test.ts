// The authorization code flow of SPEC §4.1 and §4.3 as an Express host's users meet it: headless Chromium signs in
// to a real client app (express-session + passport + passport-oauth2 in its default configuration, on its own
// port), which gets the tokens, calls a scoped API route, and refreshes the way passport-oauth2-refresh does.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { Strategy as OAuth2Strategy } from 'passport-oauth2';
import { USER, type TestClient } from '../helpers/app.js';
import { callApi, startInteropHost, type InteropHost } from '../helpers/interop-host.js';

if (!CHROMIUM) console.log('set OAUTH_TEST_CHROMIUM=/usr/bin/chromium to run the passport-oauth2 browser test');

/** What the client app keeps in its session for a signed-in user. */
interface ClientUser {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** Options a host may add to passport-oauth2's required ones; `{}` is its default configuration. */
type ExtraOptions = { readonly state?: boolean; readonly pkce?: boolean };

/**
 * passport-oauth2 exposes its token client to subclasses only; refreshing through it is what the
 * passport-oauth2-refresh package does: a refresh_token grant with client_id and client_secret in the body.
 */
class RefreshingStrategy extends OAuth2Strategy {
  refresh(refreshToken: string): Promise<{ accessToken: string; refreshToken: string | undefined }> {
    return new Promise((resolve, reject) => {
      this._oauth2.getOAuthAccessToken(refreshToken, { grant_type: 'refresh_token' }, (err, accessToken, newRefreshToken) => {
        if (err) reject(new Error(`refresh failed: ${JSON.stringify(err)}`));
        else resolve({ accessToken: accessToken!, refreshToken: newRefreshToken });
      });
    });
  }
}

/** Starts the integration's web app on 127.0.0.1 with a random port; its callback route is /auth/callback. */
async function startClientApp(host: InteropHost, register: (callbackUrl: string) => Promise<TestClient>, extra: ExtraOptions) {
  const app = express();
  const server: Server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = await register(`${url}/auth/callback`);

  const authenticator = new passport.Passport();
  const strategy = new RefreshingStrategy({
    authorizationURL: host.authorizeUrl, tokenURL: host.tokenUrl,
    clientID: client.clientId, clientSecret: client.clientSecret, callbackURL: `${url}/auth/callback`, ...extra,
  }, (accessToken: string, refreshToken: string, _profile: unknown, done: (err: null, user: ClientUser) => void) => {
    done(null, { accessToken, refreshToken });
  });
  authenticator.use(strategy);
  authenticator.serializeUser((user, done) => { done(null, user); });
  authenticator.deserializeUser((user: ClientUser, done) => { done(null, user); });

  app.use(session({ secret: 'passport-client-session-secret-0123456789', resave: false, saveUninitialized: false }));
  app.use(authenticator.initialize());
  app.use(authenticator.session());
  app.get('/login', authenticator.authenticate('oauth2'));
  app.get('/auth/callback', authenticator.authenticate('oauth2', { failureRedirect: '/failed' }), (_req, res) => { res.redirect('/dashboard'); });
  app.get('/failed', (_req, res) => { res.status(403).send('<!doctype html><title>Failed</title><h1>Sign-in failed</h1>'); });
  const page = (res: express.Response, title: string, data: unknown) => {
    res.type('html').send(`<!doctype html><title>${title}</title><h1>${title}</h1><pre id="data">${JSON.stringify(data).replace(/</g, '\\u003c')}</pre>`);
  };
  app.get('/dashboard', async (req, res) => {
    const user = req.user as ClientUser | undefined;
    if (!user) { res.redirect('/login'); return; }
    const api = await callApi(host, user.accessToken);
    page(res, 'Dashboard', { api, hasRefreshToken: typeof user.refreshToken === 'string' });
  });
  // The host refreshes, keeps the refresh token it has when none comes back (SPEC §4.5), and saves both.
  app.get('/refresh', async (req, res, next) => {
    const user = req.user as ClientUser;
    try {
      const refreshed = await strategy.refresh(user.refreshToken);
      const kept: ClientUser = { accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken ?? user.refreshToken };
      await new Promise<void>((resolve, reject) => req.login(kept, (err) => (err ? reject(err) : resolve())));
      page(res, 'Refreshed', {
        api: await callApi(host, kept.accessToken), newAccessToken: kept.accessToken !== user.accessToken,
        refreshTokenInResponse: refreshed.refreshToken !== undefined,
      });
    } catch (error) {
      next(error);
    }
  });
  return {
    url,
    client,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.skipIf(!CHROMIUM)('passport-oauth2 in an Express client app, in headless Chromium', () => {
  let host: InteropHost;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    host = await startInteropHost();
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    for (const close of closers) await close();
    await host?.close();
  });

  async function newPage(): Promise<{ page: Page; pageErrors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) pageErrors.push(message.text());
    });
    return { page, pageErrors };
  }

  async function pageData(page: Page, title: string): Promise<Record<string, unknown>> {
    await expect.poll(() => page.getByRole('heading', { name: title }).count(), { message: `at ${page.url()}` }).toBe(1);
    return JSON.parse((await page.locator('#data').textContent())!) as Record<string, unknown>;
  }

  describe.each([
    { name: 'default configuration (no state, no PKCE, client_secret in the body)', extra: {} },
    { name: 'state: true and pkce: true', extra: { state: true, pkce: true } },
  ])('$name', ({ extra }) => {
    it('/login → our login and consent pages → /auth/callback → tokens → a scoped API route answers for the user', async () => {
      const tokenRequests = host.tokenRequests.length;
      const clientApp = await startClientApp(host, (callbackUrl) => host.registerCodeClient([callbackUrl]), extra);
      closers.push(clientApp.close);
      const { page, pageErrors } = await newPage();
      await page.goto(`${clientApp.url}/login`);

      await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
      const authorize = new URL(page.url());
      expect(`${authorize.origin}${authorize.pathname}`).toBe(host.authorizeUrl);
      expect(authorize.searchParams.has('state')).toBe(extra.state === true);
      expect(authorize.searchParams.get('code_challenge_method')).toBe(extra.pkce ? 'S256' : null);
      await page.getByLabel('Username').fill(USER.username);
      await page.getByLabel('Password').fill(USER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();

      const dashboard = await pageData(page, 'Dashboard');
      expect(page.url()).toBe(`${clientApp.url}/dashboard`);
      expect(dashboard).toEqual({
        api: { status: 200, body: expect.objectContaining({ clientId: clientApp.client.clientId, userId: USER.id }) },
        hasRefreshToken: true,
      });
      // passport-oauth2 always sends client_id and client_secret in the form (client_secret_post), never Basic.
      expect(host.tokenRequests.slice(tokenRequests)).toEqual([{ basic: false }]);

      // Refresh twice: no refresh token comes back, the app keeps its own, and it keeps working (SPEC §4.5).
      const refreshedPage = {
        api: { status: 200, body: expect.objectContaining({ clientId: clientApp.client.clientId, userId: USER.id }) },
        newAccessToken: true, refreshTokenInResponse: false,
      };
      await page.goto(`${clientApp.url}/refresh`);
      expect(await pageData(page, 'Refreshed')).toEqual(refreshedPage);
      await page.goto(`${clientApp.url}/refresh`);
      expect(await pageData(page, 'Refreshed')).toEqual(refreshedPage);
      expect(host.tokenRequests.slice(tokenRequests)).toEqual([{ basic: false }, { basic: false }, { basic: false }]);
      expect(pageErrors).toEqual([]);
    });
  });

  it('Deny: passport-oauth2 sees error=access_denied and the client app sends the user to its failure page', async () => {
    const tokenRequests = host.tokenRequests.length;
    const clientApp = await startClientApp(host, (callbackUrl) => host.registerCodeClient([callbackUrl]), {});
    closers.push(clientApp.close);
    const { page } = await newPage();
    await page.goto(`${clientApp.url}/login`);
    await page.getByLabel('Username').fill(USER.username);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sign-in failed' }).count()).toBe(1);
    expect(page.url()).toBe(`${clientApp.url}/failed`);
    // passport-oauth2 stopped at the error: it never asked for a token.
    expect(host.tokenRequests.length).toBe(tokenRequests);
  });
});
