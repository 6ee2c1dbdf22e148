// README "Embedding in your app": the router keeps its sign-ins in express-session, the host's when it runs one. A
// host's global session middleware that is not express-session (cookie-session, which sets a plain `req.session`
// with no regenerate/save/reload/destroy) is not taken for it: the pages answer a 500 page and one log line names the
// fix, instead of a login page whose sign-in then fails with "session.regenerate is not a function".
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createOAuthRouter } from '../../src/router.js';
import { createTestUserAuth, ISSUER, REDIRECT_URI } from '../helpers/app.js';
import { authorizeQuery } from '../helpers/browser-flow.js';

/** cookie-session 2's `req.session`: a getter on the request for a plain object (a cookie's JSON), nothing to regenerate. */
const cookieSessionLike: express.RequestHandler = (req, _res, next) => {
  let data: Record<string, unknown> | undefined;
  Object.defineProperty(req, 'session', {
    configurable: true, enumerable: true,
    get: () => (data ??= {}),
    set: (value: Record<string, unknown>) => { data = value; },
  });
  next();
};

const servers: Array<ReturnType<express.Express['listen']>> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A listening host app: `before` are its global middleware, mounted ahead of the router. */
async function host(before: express.RequestHandler[], hostSession: boolean) {
  const store = createMemoryStore();
  const lines: string[] = [];
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer: ISSUER,
    session: hostSession ? { hostSession: true } : { secret: 'test-session-secret-0123456789' },
    logger: { warn: (line) => lines.push(`warn ${line}`), error: (line) => lines.push(`error ${line}`) },
  });
  const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  const app = express();
  for (const middleware of before) app.use(middleware);
  app.use(oauth.router);
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, lines, client: { clientId: client.clientId, clientSecret } };
}

describe('README "Embedding in your app": a host session middleware that is not express-session', () => {
  it.each([false, true])('hostSession %s: a 500 page at the authorization endpoint, and one error line naming the fix', async (hostSession) => {
    const { url, lines, client } = await host([cookieSessionLike], hostSession);
    for (let i = 0; i < 2; i += 1) {
      const res = await fetch(`${url}/oauth2/authorize?${authorizeQuery(client)}`, { redirect: 'manual' });
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).not.toContain('name="password"');
    }
    const errors = lines.filter((line) => line.startsWith('error '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('req.session');
    expect(errors[0]).toContain('express-session');
    // Without hostSession the router can run its own session behind the other middleware; with it, only the
    // host's express-session can hold the sign-ins (mounted after the router, the router would find no session).
    expect(errors[0]).toContain(hostSession ? 'use express-session for it' : 'after oauth.router');
    if (hostSession) expect(errors[0]).not.toContain('after oauth.router');
    expect(lines.join('\n')).not.toContain('regenerate is not a function');
  });

  it('the same middleware mounted after the router leaves the router its own session: the sign-in works', async () => {
    const store = createMemoryStore();
    const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
      issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} },
    });
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const app = express();
    app.use(oauth.router);
    app.use(cookieSessionLike);
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const page = await fetch(`${url}/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret: '' })}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="password"');
  });

  it('a host express-session is still used as before (no error line)', async () => {
    const { url, lines, client } = await host([session({ secret: 'host-secret-0123456789', resave: false, saveUninitialized: false })], false);
    const res = await fetch(`${url}/oauth2/authorize?${authorizeQuery(client)}`);
    expect(res.status).toBe(200);
    expect(lines.filter((line) => line.startsWith('error '))).toEqual([]);
  });
});
