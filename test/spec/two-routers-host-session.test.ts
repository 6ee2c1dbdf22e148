// README "Embedding in your app": two routers in one app (a live and a test issuer) need two `session.cookieName`s.
// Behind the host's own express-session, which both share, the name also keeps each router's sign-in apart: signing
// in at the test issuer, against its own user directory, must not sign the browser in at the live one, where the
// same user id may be somebody else.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createOAuthRouter } from '../../src/router.js';
import type { UserAuth } from '../../src/user-auth.js';
import { REDIRECT_URI } from '../helpers/app.js';
import { hiddenField } from '../helpers/browser-flow.js';
import { createFetchBrowser, type FetchBrowser } from '../helpers/fetch-cookie-jar.js';

/** A user directory of one user; both directories give their user the id `u1`. */
function directory(username: string, password: string, displayName: string): UserAuth {
  return {
    async verifyCredentials(u, p) { return u === username && p === password ? { id: 'u1', displayName } : null; },
    async findUser(id) { return id === 'u1' ? { id, displayName } : null; },
  };
}

describe.each([false, true])('README "Embedding in your app": two routers behind one host express-session (hostSession %s)', (hostSession) => {
  let server: Server;
  let origin: string;
  let liveClientId: string;
  let testClientId: string;

  beforeAll(async () => {
    // Listening first: the issuers name the port. The app answers once it is built.
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const quiet = { warn() {}, error() {} };
    const sessionOption = (cookieName: string) => (hostSession ? { hostSession: true, cookieName } : { cookieName });
    const liveStore = createMemoryStore();
    const testStore = createMemoryStore();
    const live = createOAuthRouter(liveStore, directory('alice', 'alice-pw', 'Alice (live)'), { issuer: origin, session: sessionOption('oauth.sid'), logger: quiet });
    const test = createOAuthRouter(testStore, directory('tester', 'tester-pw', 'Tester (test)'), {
      issuer: `${origin}/test`, session: sessionOption('oauth-test.sid'), logger: quiet,
    });
    liveClientId = (await registerClient(liveStore, { name: 'Live CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] })).client.clientId;
    testClientId = (await registerClient(testStore, { name: 'Test CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] })).client.clientId;
    const app = express();
    app.use(session({ name: 'host.sid', secret: 'host-secret-0123456789', resave: false, saveUninitialized: false }));
    // What the test router kept before the upgrade: its sign-in under the one key both routers shared, unmarked.
    app.post('/seed-before-upgrade', (req, res) => {
      const now = Date.now();
      (req.session as unknown as Record<string, unknown>).expressOAuthRouter = {
        user: { id: 'u1', displayName: 'Tester (test)' }, userId: 'u1', signedInAt: now, lastSeenAt: now, csrf: 'c'.repeat(43),
      };
      res.sendStatus(204);
    });
    app.use(live.router);
    app.use(test.router);
    server.on('request', app);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A browser: one cookie jar over fetch. */
  const browser = (): FetchBrowser => createFetchBrowser(origin);
  const authorize = (prefix: string, clientId: string) =>
    `${prefix}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, state: 's' })}`;

  async function signIn(go: FetchBrowser, prefix: string, clientId: string, username: string, password: string): Promise<string> {
    const login = await (await go(authorize(prefix, clientId))).text();
    const posted = await go(`${prefix}/oauth2/login`, {
      csrf_token: hiddenField(login, 'csrf_token'), request_id: hiddenField(login, 'request_id'), username, password,
    });
    expect(posted.status).toBe(303);
    return (await go(new URL(posted.headers.get('location')!, origin).pathname + new URL(posted.headers.get('location')!, origin).search)).text();
  }

  it('a sign-in at the test issuer leaves the live issuer signed out: its login page, not a consent page as the tester', async () => {
    const go = browser();
    expect(await signIn(go, '/test', testClientId, 'tester', 'tester-pw')).toContain('Tester (test)');
    const live = await (await go(authorize('', liveClientId))).text();
    expect(live).toContain('name="password"');
    expect(live).not.toContain('Tester (test)');
  });

  it('a sign-in kept before the upgrade under the key both routers shared is no sign-in at the live issuer (it may be the test directory\'s)', async () => {
    const go = browser();
    expect((await go('/seed-before-upgrade', {})).status).toBe(204);
    const live = await (await go(authorize('', liveClientId))).text();
    expect(live).toContain('name="password"');
    expect(live).not.toContain('Tester (test)');
  });

  it('each issuer keeps its own sign-in in the one host session', async () => {
    const go = browser();
    await signIn(go, '', liveClientId, 'alice', 'alice-pw');
    await signIn(go, '/test', testClientId, 'tester', 'tester-pw');
    expect(await (await go(authorize('', liveClientId))).text()).toContain('Alice (live)');
    expect(await (await go(authorize('/test', testClientId))).text()).toContain('Tester (test)');
  });
});

describe('README "Embedding in your app": two routers left with one cookieName behind one host express-session', () => {
  it('a sign-in at one is never a sign-in at the other: the other shows its login page and warns once naming cookieName', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const warnings: string[] = [];
    const logger = { warn: (line: string) => warnings.push(line), error() {} };
    const liveStore = createMemoryStore();
    const testStore = createMemoryStore();
    const live = createOAuthRouter(liveStore, directory('alice', 'alice-pw', 'Alice (live)'), { issuer: origin, session: { hostSession: true }, logger });
    const test = createOAuthRouter(testStore, directory('tester', 'tester-pw', 'Tester (test)'), { issuer: `${origin}/test`, session: { hostSession: true }, logger });
    const liveClientId = (await registerClient(liveStore, { name: 'Live CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] })).client.clientId;
    const testClientId = (await registerClient(testStore, { name: 'Test CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] })).client.clientId;
    const app = express();
    app.use(session({ name: 'host.sid', secret: 'host-secret-0123456789', resave: false, saveUninitialized: false }));
    app.use(live.router);
    app.use(test.router);
    server.on('request', app);
    try {
      const go = createFetchBrowser(origin);
      const authorize = (prefix: string, clientId: string) =>
        `${prefix}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, state: 's' })}`;
      const login = await (await go(authorize('/test', testClientId))).text();
      const posted = await go('/test/oauth2/login', {
        csrf_token: hiddenField(login, 'csrf_token'), request_id: hiddenField(login, 'request_id'), username: 'tester', password: 'tester-pw',
      });
      expect(posted.status).toBe(303);
      const livePage = await (await go(authorize('', liveClientId))).text();
      expect(livePage).toContain('name="password"');
      expect(livePage).not.toContain('Tester (test)');
      expect(warnings.filter((line) => line.includes('session.cookieName'))).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
