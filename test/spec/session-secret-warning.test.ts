// The "no session.secret set" warning: given once, at the first request that uses the router's own session,
// and never to a host app that runs its own express-session (the warning would be false for it).
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { ISSUER, REDIRECT_URI, basic, createTestUserAuth } from '../helpers/app.js';
import { authorizeQuery } from '../helpers/browser-flow.js';

const NO_SECRET_WARNING = /no session\.secret set; using a random one/;

/** A host app; `hostSession` puts the host's own express-session in front of the router. */
async function createHost(hostSession: boolean, options: Partial<OAuthRouterOptions> = {}) {
  const lines: string[] = [];
  const logger = { warn: (m: string) => { lines.push(`warn: ${m}`); }, error: (m: string) => { lines.push(`error: ${m}`); } };
  const store = createMemoryStore();
  const code = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  const backend = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), { issuer: ISSUER, logger, ...options });
  const app = express();
  if (hostSession) app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
  app.use(oauth.router);
  return {
    app, lines,
    codeClient: { clientId: code.client.clientId, clientSecret: code.clientSecret },
    backendClient: { clientId: backend.client.clientId, clientSecret: backend.clientSecret },
  };
}

describe('session.secret warning', () => {
  it('is not given when the router is created, nor for requests that need no session', async () => {
    const host = await createHost(false);
    expect(host.lines).toEqual([]);
    const token = await request(host.app).post('/oauth2/token').set('Authorization', basic(host.backendClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(token.status).toBe(200);
    expect((await request(host.app).get('/.well-known/oauth-authorization-server')).status).toBe(200);
    expect(host.lines).toEqual([]);
  });

  it('is given once, at the first page that uses the router\'s own session', async () => {
    const host = await createHost(false);
    const page = await request(host.app).get(`/oauth2/authorize?${authorizeQuery(host.codeClient)}`);
    expect(page.status).toBe(200);
    expect(host.lines).toHaveLength(1);
    expect(host.lines[0]).toMatch(NO_SECRET_WARNING);
    for (let i = 0; i < 3; i += 1) await request(host.app).get(`/oauth2/authorize?${authorizeQuery(host.codeClient)}`);
    expect(host.lines).toHaveLength(1);
  });

  it('is never given to a host that runs its own express-session', async () => {
    const host = await createHost(true);
    for (let i = 0; i < 3; i += 1) {
      const page = await request(host.app).get(`/oauth2/authorize?${authorizeQuery(host.codeClient)}`);
      expect(page.status).toBe(200);
      // Signed out, the router stores nothing in the host's session either: no cookie of any session.
      expect(([] as string[]).concat(page.headers['set-cookie'] ?? []).some((c) => /^(connect|oauth)\.sid=/.test(c))).toBe(false);
    }
    expect(host.lines).toEqual([]);
  });

  it('is never given when session.secret is set', async () => {
    const host = await createHost(false, { session: { secret: 'router-session-secret-0123456789' } });
    await request(host.app).get(`/oauth2/authorize?${authorizeQuery(host.codeClient)}`);
    expect(host.lines).toEqual([]);
  });
});
