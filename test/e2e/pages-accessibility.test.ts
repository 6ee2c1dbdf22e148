// The router's pages in headless Chromium: axe-core's WCAG 2.x A/AA rules in each state a browser user can see (errors
// included), the browser's font size setting, and credentials typed in any script reaching verifyCredentials intact.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import express from 'express';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import type { Store } from '../../src/stores/contract.js';
import type { AuthenticatedUser } from '../../src/user-auth.js';

if (!CHROMIUM) console.log('set OAUTH_TEST_CHROMIUM=/usr/bin/chromium to run the page accessibility tests');

// What the functions passed to page.evaluate use in the page (the test project has no DOM lib).
declare const axe: {
  run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> }>;
};
declare const document: {
  readonly activeElement: { readonly id: string; readonly textContent: string | null } | null;
  readonly documentElement: { readonly scrollWidth: number };
  querySelector(selector: string): unknown;
};
declare function getComputedStyle(element: unknown): { readonly fontSize: string };

const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
/** WCAG 2.0, 2.1 and 2.2 at levels A and AA: what the pages claim. */
const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const PASSWORD = 'a-page-test-password';
/** Usernames and passwords in several scripts and both Unicode normal forms: each signs in only exactly as typed. */
const ACCOUNTS: Readonly<Record<string, string>> = {
  alice: PASSWORD,
  // é precomposed (NFC) and decomposed (NFD): two accounts, as a directory that does not normalise sees them.
  'andr\u00E9': 'p\u00E4ssw\u00F6rd',
  'andre\u0301': 'pa\u0308ssw\u00F6rd',
  '山田太郎🦄': '秘密のパスワード🔑',
  مستخدم: 'كلمة-السر-١٢٣',
};

// A minute a case: each drives several pages through a real browser and axe, about 15 s on a loaded two-core machine.
describe.skipIf(!CHROMIUM)('the pages in headless Chromium: axe-core WCAG 2.2 A/AA and credentials in any script', { timeout: 60_000 }, () => {
  let browser: Browser;
  let store: Store;
  let server: Server;
  let base: string;
  /** The integration's redirect_uri: a page of the test server, another path of the same origin. */
  let redirectUri: string;
  let clients: { latin: string; rtl: string; long: string };
  const contexts: BrowserContext[] = [];
  const checked: Array<{ username: string; password: string }> = [];

  beforeAll(async () => {
    store = createMemoryStore();
    let handler: express.Express | null = null;
    server = await new Promise<Server>((resolve) => {
      const s = express().use((req, res, next) => handler!(req, res, next)).listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    redirectUri = `${base}/callback`;
    const oauth = createOAuthRouter(store, {
      async verifyCredentials(username: string, password: string): Promise<AuthenticatedUser | null> {
        checked.push({ username, password });
        return Object.hasOwn(ACCOUNTS, username) && ACCOUNTS[username] === password ? { id: `user-${username}`, displayName: username } : null;
      },
      async findUser(id: string): Promise<AuthenticatedUser | null> {
        return { id, displayName: id.slice(5) };
      },
    }, {
      issuer: base, session: { secret: 'page-accessibility-test-secret' }, logger: { warn() {}, error() {} },
      scopes: { 'envelopes:read': 'قراءة المغلفات الخاصة بك', 'envelopes:sign': `Sign-envelopes-on-your-behalf-${'x'.repeat(120)}` },
      loginRateLimit: { max: 2, windowSeconds: 60 },
    });
    handler = express().use(oauth.router).get('/callback', (_req, res) => {
      res.type('html').send('<!doctype html><html lang="en"><title>Integration</title><h1>Back at the integration</h1></html>');
    });
    const register = async (name: string) => (await registerClient(store, {
      name, flow: 'authorization_code', redirectUris: [redirectUri], allowedScopes: ['envelopes:read', 'envelopes:sign'],
    })).client.clientId;
    clients = { latin: await register('Acme CRM'), rtl: await register('تطبيق التوقيع!'), long: await register(`Procurement-${'x'.repeat(150)}`) };
    browser = await launchChromium();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await store?.close?.();
  });

  /**
   * A fresh browser (own cookies) with axe-core in every page it opens. `bypassCSP`: the pages' policy
   * (`default-src 'none'`) rightly refuses the script; it changes nothing axe checks.
   */
  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ bypassCSP: true });
    contexts.push(context);
    await context.addInitScript({ path: AXE_SCRIPT });
    return context.newPage();
  }

  function authorizeUrl(clientId: string, scope: string | null = 'envelopes:read envelopes:sign'): string {
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 's1' });
    if (scope !== null) query.set('scope', scope);
    return `${base}/oauth2/authorize?${query}`;
  }

  /** axe-core's WCAG A/AA violations on the page as shown, each as `rule-id: selectors` (none expected). */
  async function violations(page: Page): Promise<string[]> {
    const result = await page.evaluate((tags) => axe.run(document, { runOnly: { type: 'tag', values: tags } }), WCAG_AA);
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }

  async function expectAccessible(page: Page, state: string, title: RegExp): Promise<void> {
    expect(await page.title(), state).toMatch(title);
    expect(await violations(page), state).toEqual([]);
  }

  async function submitLogin(page: Page, username: string, password: string): Promise<void> {
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
  }

  it('sign-in: fresh, refused password, locked out (429) and expired form (403) pass axe; the error is an alert the fields point to', async () => {
    const page = await newPage();
    await page.goto(authorizeUrl(clients.rtl));
    await expectAccessible(page, 'fresh sign-in', /^Sign in – /);
    await submitLogin(page, 'alice', 'wrong');
    await expectAccessible(page, 'refused password', /^Error: Sign in – /);
    expect(await page.getByRole('alert').textContent()).toContain('incorrect');
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    // Another account is locked out (max 2 per source and account), so alice still signs in in the other tests.
    await submitLogin(page, 'mallory', 'wrong');
    await submitLogin(page, 'mallory', 'wrong');
    await submitLogin(page, 'mallory', 'wrong');
    expect(await page.getByRole('alert').textContent()).toContain('Too many failed sign-in attempts');
    await expectAccessible(page, 'locked out', /^Error: Sign in – /);
    // The lockout is about the wait, not the fields: described by it, focused where the retry goes, not called invalid.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toBe('login-error');
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBeNull();

    const expired = await newPage();
    await expired.goto(authorizeUrl(clients.latin));
    await expired.context().clearCookies();
    await submitLogin(expired, 'alice', PASSWORD);
    expect(await expired.getByRole('alert').textContent()).toContain('had expired');
    await expectAccessible(expired, 'expired form', /^Error: Sign in – /);
    expect(await expired.getByLabel('Username').getAttribute('aria-invalid')).toBeNull();
  });

  it('consent (right-to-left name and scope, a long unbroken scope), all-access consent, connected applications and sign-out pass axe', async () => {
    const page = await newPage();
    await page.goto(authorizeUrl(clients.rtl));
    await submitLogin(page, 'مستخدم', ACCOUNTS['مستخدم']!);
    // The name between UAX #9 isolates, as `<bdi>` cannot go in a title: its `!` stays with it, the `?` after it.
    await expectAccessible(page, 'consent', /^Allow \u2068تطبيق التوقيع!\u2069\? – /);
    await page.goto(authorizeUrl(clients.long, null));
    await expectAccessible(page, 'all-access consent', /^Allow \u2068Procurement-x+\u2069\? – /);
    // Keyboard only: Tab to Allow, Space presses it.
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.textContent?.trim())) !== 'Allow'; i++) await page.keyboard.press('Tab');
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.keyboard.press('Space')]);
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();

    await page.goto(`${base}/oauth2/consents`);
    await expectAccessible(page, 'connected applications', /^Connected applications – /);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: /^Withdraw access of Procurement/ }).click()]);
    expect(await page.getByRole('status').textContent()).toContain('no longer has access');
    await expectAccessible(page, 'withdrawal notice', /^Connected applications – /);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign out' }).click()]);
    await expectAccessible(page, 'signed out', /^Signed out – /);
  });

  it('a click on an expired consent page: the sign-in page and the consent page it leads back to say so in an alert and the title, and pass axe', async () => {
    const page = await newPage();
    await page.goto(authorizeUrl(clients.latin));
    await submitLogin(page, 'alice', PASSWORD);
    expect(await page.title()).toMatch(/^Allow /);
    // The session ends while the page is open (as at the idle timeout): the Allow is taken to a sign-in, saying why.
    await page.context().clearCookies();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Allow' }).click()]);
    expect(await page.getByRole('alert').textContent()).toContain('nothing was sent to');
    await expectAccessible(page, 'expired consent, sign-in', /^Error: Sign in – /);
    await submitLogin(page, 'alice', PASSWORD);
    await expectAccessible(page, 'consent after the sign-in', /^Allow \u2068Acme CRM\u2069\? – /);
    // Another tab signs in afresh (a new session) under this open page: its Allow gets the page again, saying why.
    const other = await page.context().newPage();
    await page.context().clearCookies();
    await other.goto(authorizeUrl(clients.latin));
    await submitLogin(other, 'alice', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Allow' }).click()]);
    expect(await page.getByRole('alert').textContent()).toBe('This page had expired, so nothing was sent to Acme CRM. Choose again.');
    await expectAccessible(page, 'expired consent, asked again', /^Error: Allow \u2068Acme CRM\u2069\? – /);
    // The page asked again is a live form (Deny, so alice's consent stays unremembered for the tests after this one).
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.getByRole('button', { name: 'Deny' }).click()]);
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');
  });

  it('a Deny on a consent page whose session ended: the notice in an alert and the title, one Deny button, and axe passes', async () => {
    const page = await newPage();
    await page.goto(authorizeUrl(clients.latin));
    await submitLogin(page, 'alice', PASSWORD);
    await page.context().clearCookies();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Deny' }).click()]);
    expect(await page.getByRole('alert').textContent()).toBe('This page had expired, so nothing was sent to Acme CRM. '
      + 'Press Deny again to refuse; no sign-in is needed.');
    await expectAccessible(page, 'expired consent, Deny', /^Error: Allow \u2068Acme CRM\u2069\? – /);
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.getByRole('button', { name: 'Deny' }).click()]);
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');
  });

  it('error pages (unknown client_id, a form address opened directly) pass axe and say so in the title', async () => {
    const page = await newPage();
    await page.goto(`${base}/oauth2/authorize?response_type=code&client_id=nobody&redirect_uri=${encodeURIComponent(redirectUri)}`);
    await expectAccessible(page, 'unknown client', /^Request cannot be completed – /);
    expect(await page.getByRole('alert').count()).toBe(1);
    await page.goto(`${base}/oauth2/login`);
    await expectAccessible(page, '405 page', /^Request cannot be completed – /);
  });

  it("text and buttons follow the browser's font size setting (24px), staying larger than the small print, with no sideways scrolling at 320px", async () => {
    const page = await newPage();
    // Chromium's Settings › Appearance › Font size ("Very large" is 24px), as CDP sets it.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Page.enable');
    await cdp.send('Page.setFontSizes', { fontSizes: { standard: 24 } });
    await page.goto(authorizeUrl(clients.latin));
    await submitLogin(page, 'alice', PASSWORD);
    const size = (selector: string) => page.evaluate((s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize), selector);
    expect(await size('main > p')).toBe(24);
    expect(await size('button.primary')).toBe(24);
    expect(await size('p.muted')).toBeLessThan(await size('main > p'));
    await page.setViewportSize({ width: 320, height: 640 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
  });

  it('usernames and passwords in any script reach verifyCredentials as typed (UTF-8, neither normal form changed into the other)', async () => {
    const page = await newPage();
    for (const [username, password] of Object.entries(ACCOUNTS)) {
      await page.context().clearCookies();
      await page.goto(authorizeUrl(clients.latin));
      checked.length = 0;
      await submitLogin(page, username, password);
      expect(checked, username).toEqual([{ username, password }]);
      expect(await page.getByRole('heading', { level: 1 }).textContent(), username).toBe('Allow Acme CRM?');
    }
    // A name typed in the other normal form is another string: the host's directory decides (README, UserAuth).
    await page.context().clearCookies();
    await page.goto(authorizeUrl(clients.latin));
    checked.length = 0;
    await submitLogin(page, 'andr\u00E9', 'pa\u0308ssw\u00F6rd');
    expect(checked).toEqual([{ username: 'andr\u00E9', password: 'pa\u0308ssw\u00F6rd' }]);
    expect(await page.getByRole('alert').textContent()).toContain('incorrect');
  });
});

describe.skipIf(!CHROMIUM)('the pages in a right-to-left catalogue (pageLanguages) pass axe-core WCAG 2.2 A/AA', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: Server;
  let base: string;
  let clientId: string;

  beforeAll(async () => {
    const store = createMemoryStore();
    const oauth = createOAuthRouter(store, {
      async verifyCredentials(): Promise<AuthenticatedUser | null> { return null; },
      async findUser(): Promise<AuthenticatedUser | null> { return null; },
    }, {
      issuer: 'http://127.0.0.1', session: { secret: 'page-accessibility-test-secret' }, logger: { warn() {}, error() {} },
      // Part of the pages only: the rest in English, as a partial catalogue shows them.
      pageLanguages: { catalogues: { ar: {
        signInTitle: 'تسجيل الدخول', signInErrorTitle: 'خطأ: تسجيل الدخول', usernameLabel: 'اسم المستخدم', passwordLabel: 'كلمة المرور',
        signInButton: 'دخول', signInFailed: 'اسم المستخدم أو كلمة المرور غير صحيحة.', errorTitle: 'لا يمكن إكمال الطلب',
      } } },
    });
    server = await new Promise<Server>((resolve) => {
      const s = express().use((req, res, next) => oauth.router(req, res, next)).listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    clientId = (await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [`${base}/callback`] })).client.clientId;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('sign-in, a refused password and an error page with an English description, as the browser asks in Arabic', async () => {
    // Chromium sends Accept-Language from the context's locale.
    const context = await browser.newContext({ bypassCSP: true, locale: 'ar-EG' });
    await context.addInitScript({ path: AXE_SCRIPT });
    const page = await context.newPage();
    const axeViolations = async (): Promise<string[]> => {
      const result = await page.evaluate((tags) => axe.run(document, { runOnly: { type: 'tag', values: tags } }), WCAG_AA);
      return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    };
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: `${base}/callback`, state: 's' });
    await page.goto(`${base}/oauth2/authorize?${query}`);
    expect(await page.getAttribute('html', 'dir')).toBe('rtl');
    expect(await page.title()).toMatch(/^تسجيل الدخول – /);
    expect(await axeViolations(), 'fresh sign-in').toEqual([]);
    await page.getByLabel('اسم المستخدم').fill('alice');
    await page.getByLabel('كلمة المرور').fill('wrong');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'دخول' }).click()]);
    expect(await page.getByRole('alert').textContent()).toBe('اسم المستخدم أو كلمة المرور غير صحيحة.');
    expect(await axeViolations(), 'refused password').toEqual([]);
    await page.goto(`${base}/oauth2/authorize?response_type=code&client_id=nobody`);
    expect(await page.title()).toMatch(/^لا يمكن إكمال الطلب – /);
    expect(await page.locator('span[lang="en"]').count()).toBe(1);
    expect(await axeViolations(), 'error page').toEqual([]);
    await context.close();
  });
});
