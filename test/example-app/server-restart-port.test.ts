// The built example server restarted on another PORT: the authorize link it prints works there too, end to end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bannerExport, startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';
import { browseAuthorization } from '../helpers/fetch-browser.js';

const DEMO = { username: 'demo', password: 'demo-password-for-tests' };

/** The authorization link a banner prints for its own port. */
function authorizeLink(banner: string, port: number): URL {
  const link = new RegExp(`http://localhost:${port}/oauth2/authorize\\?\\S+`).exec(banner)?.[0];
  expect(link, banner).toBeDefined();
  return new URL(link!);
}

describe('example app restarted on another port', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'example-app-port-'));
    env = { OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}`, DEMO_PASSWORD: DEMO.password };
  });

  afterEach(async () => {
    await stopAppProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers the new port\'s callback, so its printed link leads to a code and a token', async () => {
    const first = await startAppProcess(env);
    const firstPort = first.port;
    const clientId = bannerExport(first.banner, 'CODE_CLIENT_ID')!;
    const clientSecret = bannerExport(first.banner, 'CODE_CLIENT_SECRET')!;
    expect(clientSecret).toBeTruthy();
    await stopAppProcesses();

    const second = await startAppProcess(env, { avoiding: [firstPort] });
    const secondPort = second.port;
    expect(secondPort).not.toBe(firstPort);
    const link = authorizeLink(second.banner, secondPort);
    expect(link.searchParams.get('redirect_uri')).toBe(`http://localhost:${secondPort}/demo/callback`);

    // The demo user signs in and allows; the browser lands on this port's /demo/callback with a code.
    const callback = await browseAuthorization(link, DEMO);
    expect(callback.origin + callback.pathname).toBe(`http://localhost:${secondPort}/demo/callback`);
    const code = callback.searchParams.get('code');
    expect(code).toBeTruthy();
    const page = await fetch(callback);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(code!);

    // The curl on that page, as fetch: the code is exchanged for tokens.
    const token = await fetch(`http://localhost:${secondPort}/oauth2/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, redirect_uri: link.searchParams.get('redirect_uri')!, code: code! }),
    });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ token_type: 'Bearer' });
  });

  it('keeps the first port\'s callback registered, for instances still listening there', async () => {
    const firstPort = (await startAppProcess(env)).port;
    await stopAppProcesses();
    const second = await startAppProcess(env, { avoiding: [firstPort] });
    const secondPort = second.port;
    const link = authorizeLink(second.banner, secondPort);
    link.searchParams.set('redirect_uri', `http://localhost:${firstPort}/demo/callback`);
    const page = await fetch(link, { redirect: 'manual' });
    const html = await page.text();
    expect(page.status, html).toBe(200);
    expect(html).not.toContain('not registered');
    // A start on a port already registered changes nothing; an address never registered is still refused.
    link.searchParams.set('redirect_uri', 'http://localhost:1/demo/callback');
    const refused = await fetch(link, { redirect: 'manual' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();
  });
});
