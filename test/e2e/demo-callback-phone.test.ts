// The example app's demo callback page on a phone (390 px wide, mobile viewport rules) in headless Chromium:
// the code, a long state and the curl command wrap instead of widening the page.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoCallback } from '../../example-app/demo-callback.js';

if (!CHROMIUM) console.log('set OAUTH_TEST_CHROMIUM=/usr/bin/chromium to run the browser tests');

// The function passed to page.evaluate runs in the page; the test project has no DOM lib.
declare const document: { readonly documentElement: { readonly scrollWidth: number } };

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const PHONE = { width: 390, height: 844 };
// What the authorization endpoint sends: a 256-bit base64url code, and a state as long as clients make them.
const CODE = 'Vq3bN8x0kR2yT5uW7zA9cD1eF4gH6jK8mP0sQ2vX4yB';
const STATE = 'eyJyZXR1cm5UbyI6Ii9kYXNoYm9hcmQvc2V0dGluZ3MvaW50ZWdyYXRpb25zIiwibm9uY2UiOiJhYmNkZWYwMTIzNDU2Nzg5In0';

describe.skipIf(!CHROMIUM)('demo callback page on a 390 px phone screen (headless Chromium)', () => {
  let browser: Browser;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const app = express();
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A long but ordinary deployment: a client id and an auth URL as a real host would have them.
    app.get('/demo/callback', createDemoCallback({
      authUrl: 'https://signature-api.auth.acme-corporation.example.com',
      clientId: 'acme-sign-demo-web',
      redirectUri: `${base}/demo/callback`,
    }));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** A phone: 390 CSS px wide, with the mobile rule that a page without a viewport meta is laid out 980 px wide. */
  async function phonePage(): Promise<Page> {
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 3 });
    return context.newPage();
  }

  async function scrollWidth(page: Page): Promise<number> {
    return page.evaluate(() => document.documentElement.scrollWidth);
  }

  it('shows the code, the state and the curl command without horizontal scrolling', async () => {
    const page = await phonePage();
    await page.goto(`${base}/demo/callback?${new URLSearchParams({ code: CODE, state: STATE })}`);
    await expect.poll(() => page.getByRole('heading', { name: 'Authorization code received' }).count()).toBe(1);
    // The content sits in the main landmark, where a screen reader's "skip to main" lands (WCAG 1.3.1).
    expect(await page.getByRole('main').getByRole('heading', { name: 'Authorization code received' }).count()).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}demo-callback-phone.png`, fullPage: true });
    expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
    // Wrapped, not cut: the whole code and the whole curl are on the page.
    expect(await page.locator('body').innerText()).toContain(CODE);
    expect(await page.locator('pre').innerText()).toContain(`--data-urlencode code='${CODE}'`);
    await page.context().close();
  });

  it('shows a refusal with a long description without horizontal scrolling', async () => {
    const page = await phonePage();
    const description = `The_resource_owner_denied_the_request_${'x'.repeat(200)}`;
    await page.goto(`${base}/demo/callback?${new URLSearchParams({ error: 'access_denied', error_description: description })}`);
    await expect.poll(() => page.getByRole('heading', { name: 'Authorization refused' }).count()).toBe(1);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await page.context().close();
  });
});
