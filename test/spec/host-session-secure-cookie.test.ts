// README "Embedding in your app" (your own express-session holds the sign-ins): a sign-in whose session cookie
// express-session leaves out (cookie.secure on a request it judges insecure: behind a TLS proxy without `trust proxy`,
// or on plain http) brings the browser back signed out, to the sign-in page. The router cannot refuse it before
// answering (the cookie is decided as the answer's headers are written), so it logs one error naming the fix.
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createOAuthRouter } from '../../src/router.js';
import { createTestUserAuth, REDIRECT_URI, USER } from '../helpers/app.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import { createFetchBrowser } from '../helpers/fetch-cookie-jar.js';

const servers: Array<ReturnType<express.Express['listen']>> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Host {
  readonly issuer: string;
  readonly trustProxy: boolean;
  readonly hostSession: boolean;
}

/**
 * Signs in through a host whose express-session cookie is `secure: true`, as a browser behind a TLS proxy would (the
 * proxy's X-Forwarded-Proto names the issuer's scheme). Returns what the page after the sign-in is and the log.
 */
async function signInThrough({ issuer, trustProxy, hostSession }: Host): Promise<{ page: 'consent' | 'login'; errors: string[] }> {
  const store = createMemoryStore();
  const errors: string[] = [];
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer, session: hostSession ? { hostSession: true } : {}, logger: { warn() {}, error: (line) => errors.push(line) },
  });
  const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  const app = express();
  if (trustProxy) app.set('trust proxy', 'loopback');
  app.use(session({ secret: 'host-secret-0123456789', resave: false, saveUninitialized: false, cookie: { secure: true, sameSite: 'lax' } }));
  app.use(oauth.router);
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const proxied = { Host: new URL(issuer).host, 'X-Forwarded-Proto': new URL(issuer).protocol.slice(0, -1) };
  const go = createFetchBrowser(origin, proxied);
  const login = await (await go(`/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret: '' })}`)).text();
  const posted = await go('/oauth2/login', {
    csrf_token: hiddenField(login, 'csrf_token'), request_id: hiddenField(login, 'request_id'), username: USER.username, password: USER.password,
  });
  expect(posted.status).toBe(303);
  const next = new URL(posted.headers.get('location')!, issuer);
  const html = await (await go(`${next.pathname}${next.search}`)).text();
  return { page: html.includes('name="password"') ? 'login' : 'consent', errors };
}

describe('README "Embedding in your app": a host express-session whose Secure cookie is not sent at the sign-in', () => {
  it.each([
    { issuer: 'https://auth.example.com', trustProxy: false, hostSession: false },
    { issuer: 'https://auth.example.com', trustProxy: false, hostSession: true },
    { issuer: 'http://localhost', trustProxy: false, hostSession: true },
  ])('$issuer, no trust proxy, hostSession $hostSession: back at the sign-in page, and one error line naming the fix', async (host) => {
    const { page, errors } = await signInThrough(host);
    expect(page).toBe('login');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('session cookie');
    expect(errors[0]).toContain('trust proxy');
  });

  it('with trust proxy the cookie is sent: the consent page, and nothing logged', async () => {
    const { page, errors } = await signInThrough({ issuer: 'https://auth.example.com', trustProxy: true, hostSession: true });
    expect(page).toBe('consent');
    expect(errors).toEqual([]);
  });
});
