// The authorization code flow of SPEC §4.1 and §4.3 in a real browser: headless Debian Chromium driven by
// playwright-core against the example app listening on a real port, with a real client callback server.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { registerClient, type Store } from 'express-oauth-router';
import { createMemoryStore } from 'express-oauth-router/stores/memory';
import { createApp } from '../../example-app/app.js';
import { createDemoUserAuth } from '../../example-app/users.js';

if (!CHROMIUM) console.log('set OAUTH_TEST_CHROMIUM=/usr/bin/chromium to run the browser tests');

// The functions passed to page.evaluate run in the page; these are the few DOM names they use (the test
// project has no DOM lib).
declare const document: {
  readonly documentElement: { readonly scrollWidth: number };
  readonly activeElement: { readonly id: string; readonly innerText?: string } | null;
};
declare function getComputedStyle(element: unknown): { readonly outlineStyle: string };

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const DEMO_USER = { username: 'demo', password: 'a-browser-test-password' };
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** Starts an HTTP server on `host` (127.0.0.1, or ::1) with a random port; the handler may be set after listening. */
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1'): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}` };
}

async function close(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe.skipIf(!CHROMIUM)('authorization code flow in headless Chromium (example app)', () => {
  let browser: Browser;
  let store: Store;
  let appServer: Server;
  let callbackServer: Server;
  let authUrl: string;
  let redirectUri: string;
  let callbackOrigin: string;
  /** The callback server on 127.0.0.1: the app's site, another origin. */
  let callbackServerUrl: string;
  const contexts: BrowserContext[] = [];
  /** What the callback server's /attack page answers: a cookie it sets and its HTML. */
  let attack: { setCookie: string; html: string } | null = null;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // The integration's own server: just a page at redirect_uri; the test reads the browser's URL.
    const callback = await listen((req, res) => {
      // /attack: a page of another origin on the app's site (ports do not make sites), as a test sets it up.
      if (req.url === '/attack' && attack) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Set-Cookie': attack.setCookie });
        res.end(attack.html);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      // /link?to=URL: the integration's page with a link to its authorization request, so that following it is a
      // navigation from another site, as it is for real users (SameSite cookies are judged by it).
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
      if (req.url?.startsWith('/link?') && to) {
        const href = to.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
        res.end(`<!doctype html><html lang="en"><head><title>Integration</title></head><body><a id="connect" href="${href}">Connect</a></body></html>`);
        return;
      }
      res.end('<!doctype html><html lang="en"><head><title>Integration callback</title></head><body><h1>Back at the integration</h1></body></html>');
    });
    // Another site than the app's 127.0.0.1 (ports do not make sites): localhost, the same server.
    callbackOrigin = callback.url.replace('127.0.0.1', 'localhost');
    callbackServer = callback.server;
    callbackServerUrl = callback.url;
    redirectUri = `${callback.url}/oauth/callback`;

    // The example app needs its own address before it is built: listen first, then plug the app in.
    let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
    const app = await listen((req, res) => handler!(req, res));
    appServer = app.server;
    authUrl = app.url;
    store = createMemoryStore();
    const userAuth = await createDemoUserAuth(DEMO_USER);
    handler = createApp({ store, userAuth, authUrl, sessionSecret: 'browser-test-session-secret-0123456789' }).app;

    browser = await launchChromium();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await close(appServer);
    await close(callbackServer);
    await store?.close?.();
  });

  /** A fresh browser context (own cookies, so a fresh session) with the given window size. */
  async function newPage(viewport = DESKTOP, mobile = false): Promise<{ page: Page; pageErrors: string[] }> {
    const context = await browser.newContext({ viewport, ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
    contexts.push(context);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // A strict CSP that blocked the pages' own style would show up here.
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) pageErrors.push(message.text());
    });
    return { page, pageErrors };
  }

  /** A fresh integration (so no consent is remembered from another test) with the callback server as redirect_uri. */
  async function newIntegration(name: string): Promise<{ clientId: string; clientSecret: string }> {
    const { client, clientSecret } = await registerClient(store, {
      name, flow: 'authorization_code', redirectUris: [redirectUri], allowedScopes: ['envelopes:read', 'envelopes:write'],
    });
    return { clientId: client.clientId, clientSecret };
  }

  /** An authorization request with state and an S256 PKCE challenge. */
  function authorizationRequest(clientId: string, extra: Record<string, string> = {}): { url: string; state: string; verifier: string } {
    const state = randomBytes(16).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state,
      code_challenge: challenge, code_challenge_method: 'S256', ...extra,
    });
    return { url: `${authUrl}/oauth2/authorize?${query}`, state, verifier };
  }

  /** Fills the login form through its labels (proving they are wired to the inputs) and submits it. */
  async function signInWithLabels(page: Page): Promise<void> {
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    await page.getByLabel('Username').fill(DEMO_USER.username);
    await page.getByLabel('Password').fill(DEMO_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function waitForCallback(page: Page): Promise<URL> {
    // A blocked navigation (e.g. by CSP form-action) leaves the browser where it was: say where, quickly.
    await page.waitForURL((url) => url.href.startsWith(`${redirectUri}?`), { timeout: 5000 }).catch((error: unknown) => {
      throw new Error(`the browser did not reach redirect_uri; it is at ${page.url()} (${String(error).split('\n')[0]})`);
    });
    return new URL(page.url());
  }

  /** The integration's back end: exchanges the code with a real HTTP request (SPEC §4.3). */
  async function exchangeCode(client: { clientId: string; clientSecret: string }, code: string, verifier: string): Promise<Record<string, unknown>> {
    const res = await fetch(`${authUrl}/oauth2/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: client.clientId, redirect_uri: redirectUri, code, code_verifier: verifier }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  async function me(accessToken: string): Promise<Response> {
    return fetch(`${authUrl}/api/v1/me`, { headers: { Authorization: `Bearer ${accessToken}` } });
  }

  /** The page fits the window: no sideways scrolling (readable on a phone). */
  async function expectNoHorizontalScroll(page: Page, width: number): Promise<void> {
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth).toBeLessThanOrEqual(width);
  }

  it('login → consent → Allow → redirect_uri with code and state → token → API call (desktop 1280×800)', async () => {
    const client = await newIntegration('Acme CRM (browser test)');
    const { page, pageErrors } = await newPage(DESKTOP);
    const request = authorizationRequest(client.clientId);
    await page.goto(request.url);

    await expect.poll(() => page.getByText('Acme CRM (browser test)').count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}login-desktop.png`, fullPage: true });
    await signInWithLabels(page);

    const heading = page.getByRole('heading', { level: 1 });
    await expect.poll(() => heading.textContent()).toContain('Acme CRM (browser test)');
    expect(await page.title()).toContain('Acme Sign');
    await page.screenshot({ path: `${ARTIFACTS}consent-desktop.png`, fullPage: true });
    await page.getByRole('button', { name: 'Allow' }).click();

    const callback = await waitForCallback(page);
    expect(callback.searchParams.get('state')).toBe(request.state);
    expect(callback.searchParams.get('iss')).toBe(authUrl);
    expect(callback.searchParams.get('error')).toBeNull();
    const code = callback.searchParams.get('code');
    expect(code).toBeTruthy();
    expect(await page.getByRole('heading', { name: 'Back at the integration' }).count()).toBe(1);

    const tokens = await exchangeCode(client, code!, request.verifier);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number) });
    expect(typeof tokens.access_token).toBe('string');
    expect(typeof tokens.refresh_token).toBe('string');

    const res = await me(tokens.access_token as string);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ client_id: client.clientId, client_name: 'Acme CRM (browser test)', user_id: `user:${DEMO_USER.username}`, issuer: authUrl });
    expect(pageErrors).toEqual([]);

    // The same user coming back in a new browser session is not asked again for the same integration.
    const again = await newPage(DESKTOP);
    const second = authorizationRequest(client.clientId);
    await again.page.goto(second.url);
    await signInWithLabels(again.page);
    const remembered = await waitForCallback(again.page);
    expect(remembered.searchParams.get('state')).toBe(second.state);
    expect(remembered.searchParams.get('code')).toBeTruthy();
    // The login form's redirect chain now ends at the integration: its CSP form-action must allow that origin.
    expect(again.pageErrors).toEqual([]);
  });

  it('two authorization requests opened from the integration\'s site in two tabs: the first tab still signs in (its form was not voided by the second)', async () => {
    const client = await newIntegration('Two tabs (browser test)');
    const { page: first } = await newPage(DESKTOP);
    const second = await first.context().newPage();
    for (const tab of [first, second]) {
      await tab.goto(`${callbackOrigin}/link?to=${encodeURIComponent(authorizationRequest(client.clientId).url)}`);
      await tab.click('#connect');
      await expect.poll(() => tab.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    }
    await signInWithLabels(first);
    await expect.poll(() => first.getByRole('button', { name: 'Allow' }).count()).toBe(1);
    await first.getByRole('button', { name: 'Allow' }).click();
    const callback = await waitForCallback(first);
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  it('an IPv6 loopback redirect_uri (http://[::1]:port, RFC 8252 §7.3) is reached after consent, and after a remembered consent through the login form', async () => {
    // A CSP host-source cannot name [::1]: a form-action listing it was dropped by Chromium, which then blocked the redirect.
    const v6 = await listen((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html lang="en"><head><title>IPv6 callback</title></head><body><h1>Back at the IPv6 integration</h1></body></html>');
    }, '::1');
    try {
      const v6Redirect = `${v6.url}/oauth/callback`;
      const { client } = await registerClient(store, { name: 'IPv6 loopback (browser test)', flow: 'authorization_code', redirectUris: [v6Redirect] });
      const requestUrl = () => `${authUrl}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: v6Redirect, state: 'v6' })}`;
      const reached = async (page: Page): Promise<URL> => {
        await page.waitForURL((url) => url.href.startsWith(`${v6Redirect}?`), { timeout: 5000 }).catch((error: unknown) => {
          throw new Error(`the browser did not reach ${v6Redirect}; it is at ${page.url()} (${String(error).split('\n')[0]})`);
        });
        return new URL(page.url());
      };
      const { page, pageErrors } = await newPage(DESKTOP);
      await page.goto(requestUrl());
      await signInWithLabels(page);
      await expect.poll(() => page.getByRole('button', { name: 'Allow' }).count()).toBe(1);
      await page.getByRole('button', { name: 'Allow' }).click();
      expect((await reached(page)).searchParams.get('code')).toBeTruthy();
      expect(pageErrors).toEqual([]);

      const again = await newPage(DESKTOP);
      await again.page.goto(requestUrl());
      await signInWithLabels(again.page);
      expect((await reached(again.page)).searchParams.get('code')).toBeTruthy();
      expect(again.pageErrors).toEqual([]);
    } finally {
      await close(v6.server);
    }
  });

  it('Deny sends the browser to redirect_uri with error=access_denied, the state and no code; no token can be had', async () => {
    const client = await newIntegration('Deny Me Inc.');
    const { page, pageErrors } = await newPage(DESKTOP);
    const request = authorizationRequest(client.clientId);
    await page.goto(request.url);
    await signInWithLabels(page);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Deny Me Inc.');
    await page.getByRole('button', { name: 'Deny' }).click();

    const callback = await waitForCallback(page);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(request.state);
    expect(callback.searchParams.get('iss')).toBe(authUrl);
    expect(callback.searchParams.get('code')).toBeNull();
    expect(pageErrors).toEqual([]);
  });

  it('Deny on a consent page whose session ended meanwhile: the notice, no sign-in asked for; its Deny reaches redirect_uri with error=access_denied', async () => {
    const client = await newIntegration('Idle Reader Ltd.');
    const { page, pageErrors } = await newPage(DESKTOP);
    const request = authorizationRequest(client.clientId);
    await page.goto(request.url);
    await signInWithLabels(page);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Idle Reader Ltd.');
    // The session ends while the page is open (its idle timeout): the browser no longer holds it.
    await page.context().clearCookies();
    await page.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('nothing was sent to Idle Reader Ltd.');
    expect(page.url()).toBe(`${authUrl}/oauth2/consent`);
    expect(await page.getByLabel('Password').count()).toBe(0);
    await page.getByRole('button', { name: 'Deny' }).click();
    const callback = await waitForCallback(page);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(request.state);
    expect(callback.searchParams.get('code')).toBeNull();
    expect(pageErrors).toEqual([]);
  });

  it('a login form posted from another origin of the same site, with a double-submit cookie it planted, signs nobody in (login CSRF, RFC 6749 §10.12)', async () => {
    const client = await newIntegration('Planted Cookie Co.');
    const { page } = await newPage(DESKTOP);
    // The victim has opened a real authorization request: it holds the genuine cookie.
    await page.goto(authorizationRequest(client.clientId).url);
    const genuine = (await page.context().cookies(authUrl)).find((cookie) => cookie.name.endsWith('.csrf'));
    expect(genuine).toBeDefined();
    // Another port of 127.0.0.1 (ports do not make sites) plants a value it knows, on a longer path, so the browser
    // sends it first, and posts the sign-in form with it and the attacker's own credentials.
    const planted = 'B'.repeat(43);
    attack = {
      setCookie: `${genuine!.name}=${planted}; Path=/oauth2/login`,
      html: `<!doctype html><html lang="en"><head><title>Win a prize</title></head><body>
        <form id="f" method="post" action="${authUrl}/oauth2/login">
          <input name="csrf_token" value="${planted}"><input name="request_id" value="consents">
          <input name="username" value="${DEMO_USER.username}"><input name="password" value="${DEMO_USER.password}">
        </form><script>document.getElementById('f').submit()</script></body></html>`,
    };
    try {
      const refused = page.waitForResponse((response) => response.url() === `${authUrl}/oauth2/login`);
      await page.goto(`${callbackServerUrl}/attack`);
      const response = await refused;
      expect((await response.request().allHeaders())['sec-fetch-site']).toBe('same-site');
      expect(response.status()).toBe(403);
    } finally {
      attack = null;
    }
    // Nobody is signed in: the connected-applications page asks for a sign-in.
    await page.goto(`${authUrl}/oauth2/consents`);
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
  });

  it('Cancel on the sign-in page, with nothing typed, sends the browser to redirect_uri with error=access_denied and the state', async () => {
    const client = await newIntegration('Not Now Ltd.');
    const { page, pageErrors } = await newPage(DESKTOP);
    const request = authorizationRequest(client.clientId);
    await page.goto(request.url);
    await page.getByRole('button', { name: 'Cancel' }).click();
    const callback = await waitForCallback(page);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(request.state);
    expect(callback.searchParams.get('code')).toBeNull();
    expect(pageErrors).toEqual([]);
  });

  it('"Use another account" on the consent page signs out and asks who is there, then the same request completes', async () => {
    const client = await newIntegration('Shared Laptop Inc.');
    const { page, pageErrors } = await newPage(DESKTOP);
    const request = authorizationRequest(client.clientId);
    await page.goto(request.url);
    await signInWithLabels(page);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Shared Laptop Inc.');
    const switchButton = page.getByRole('button', { name: 'Use another account' });
    // WCAG 2.5.8: a target at least 24 CSS px high.
    expect((await switchButton.boundingBox())!.height).toBeGreaterThanOrEqual(24);
    await switchButton.click();
    await signInWithLabels(page);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Shared Laptop Inc.');
    await page.getByRole('button', { name: 'Allow' }).click();
    const callback = await waitForCallback(page);
    expect(callback.searchParams.get('state')).toBe(request.state);
    const tokens = await exchangeCode(client, callback.searchParams.get('code')!, request.verifier);
    expect((await me(tokens.access_token as string)).status).toBe(200);
    expect(pageErrors).toEqual([]);
  });

  it('a wrong password shows the error on the login page, linked to the username field, and keeps the username', async () => {
    const client = await newIntegration('Typo Tester');
    const { page } = await newPage(DESKTOP);
    await page.goto(authorizationRequest(client.clientId).url);
    await page.getByLabel('Username').fill(DEMO_USER.username);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('incorrect');
    expect(await page.getByLabel('Username').inputValue()).toBe(DEMO_USER.username);
    expect(await page.getByLabel('Username').getAttribute('aria-describedby')).toBe('login-error');
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    // The cursor waits in the password field, where the retry is typed.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    // And then the right password still gets through to the consent page.
    await page.getByLabel('Password').fill(DEMO_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Typo Tester');
  });

  it('can be completed with the keyboard only (Tab and Enter through login and consent)', async () => {
    const client = await newIntegration('Keyboard Co');
    const { page, pageErrors } = await newPage(DESKTOP);
    const request = authorizationRequest(client.clientId);
    await page.goto(request.url);
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);

    const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
    const focusedText = () => page.evaluate(() => document.activeElement?.innerText ?? '');
    /** Presses Tab until `done` holds, at most 15 times: a reachable control is a few Tabs away. */
    async function tabUntil(done: () => Promise<boolean>): Promise<void> {
      for (let i = 0; i < 15 && !(await done()); i++) await page.keyboard.press('Tab');
      expect(await done()).toBe(true);
    }

    await tabUntil(async () => (await focusedId()) === 'username');
    await page.keyboard.type(DEMO_USER.username);
    await page.keyboard.press('Tab');
    expect(await focusedId()).toBe('password');
    await page.keyboard.type(DEMO_USER.password);
    await page.keyboard.press('Enter');

    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Keyboard Co');
    await tabUntil(async () => (await focusedText()).trim() === 'Allow');
    // The focused control is visibly marked (a focus outline), so a keyboard user can see where they are.
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe('none');
    await page.keyboard.press('Enter');

    const callback = await waitForCallback(page);
    expect(callback.searchParams.get('state')).toBe(request.state);
    const code = callback.searchParams.get('code');
    expect(code).toBeTruthy();
    const tokens = await exchangeCode(client, code!, request.verifier);
    expect((await me(tokens.access_token as string)).status).toBe(200);
    expect(pageErrors).toEqual([]);
  });

  it('reflows at 320 px (WCAG 1.4.10): an integration name with no space to break at wraps instead of scrolling sideways', async () => {
    const name = `Procurement-integration-${'x'.repeat(60)}`;
    const client = await newIntegration(name);
    const { page, pageErrors } = await newPage({ width: 320, height: 640 }, true);
    await page.goto(authorizationRequest(client.clientId).url);
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    await expectNoHorizontalScroll(page, 320);
    await signInWithLabels(page);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain(name);
    await expectNoHorizontalScroll(page, 320);
    expect(pageErrors).toEqual([]);
  });

  it('fits a phone-sized window (390×844): no sideways scrolling, Allow reachable; screenshots of login and consent', async () => {
    const client = await newIntegration('Acme CRM (browser test, phone)');
    const { page, pageErrors } = await newPage(PHONE, true);
    const request = authorizationRequest(client.clientId);
    await page.goto(request.url);
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    await expectNoHorizontalScroll(page, PHONE.width);
    await page.screenshot({ path: `${ARTIFACTS}login-phone.png`, fullPage: true });

    await page.getByLabel('Username').tap();
    await page.getByLabel('Username').fill(DEMO_USER.username);
    await page.getByLabel('Password').fill(DEMO_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).tap();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Acme CRM (browser test, phone)');
    await expectNoHorizontalScroll(page, PHONE.width);
    await page.screenshot({ path: `${ARTIFACTS}consent-phone.png`, fullPage: true });

    const allow = page.getByRole('button', { name: 'Allow' });
    const box = await allow.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    // Large enough to hit with a finger (WCAG 2.5.8 asks for at least 24×24 CSS pixels).
    expect(box!.height).toBeGreaterThanOrEqual(24);
    await allow.tap();
    const callback = await waitForCallback(page);
    expect(callback.searchParams.get('code')).toBeTruthy();
    expect(callback.searchParams.get('state')).toBe(request.state);
    expect(pageErrors).toEqual([]);
  });
});
