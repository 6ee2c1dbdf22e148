// UserAuth hooks throw only on outages (README, "The UserAuth contract"): an outage they throw (a socket error, a
// StoreUnavailableError) is answered as one, 503 temporarily_unavailable, logged once per outage without its message,
// and a refresh refused so is not a revocation; anything else they throw is a bug, a 500.
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createOAuthRouter } from '../../src/router.js';
import { registerClient } from '../../src/clients/register-client.js';
import type { UserAuth } from '../../src/user-auth.js';
import { basic, REDIRECT_URI, USER } from '../helpers/app.js';
import { authorizeQuery, hiddenField, obtainCode } from '../helpers/browser-flow.js';
import { expectSpecHeaders } from '../helpers/spec-requests.js';

/** A host whose user directory can be taken down: while down, every hook throws as a driver would. */
async function createHost(withCurrentUser = false) {
  const directory = {
    down: false, hung: false, fault: (): Error => Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }),
  };
  // Hung: the answer never comes (a black-holed connection), as opposed to an error thrown at once.
  const outage = (): never => { throw directory.fault(); };
  const never = new Promise<never>(() => undefined);
  const alice = { id: USER.id, displayName: USER.displayName };
  const userAuth: UserAuth = withCurrentUser
    ? { currentUser: async () => (directory.hung ? never : directory.down ? outage() : alice), loginUrl: () => '/login' }
    : {
      verifyCredentials: async (username, password) => (directory.hung ? never : directory.down ? outage() : username === USER.username && password === USER.password ? alice : null),
      findUser: async (id) => (directory.hung ? never : directory.down ? outage() : id === USER.id ? alice : null),
    };
  const logged: string[] = [];
  const store = createMemoryStore();
  const oauth = createOAuthRouter(store, userAuth, {
    issuer: 'http://auth.test', session: { secret: 'test-session-secret-0123456789' }, rememberConsent: false, userAuthTimeout: 1,
    logger: { warn: (line: string) => { logged.push(line); }, error: (line: string) => { logged.push(line); } },
  });
  const app = express();
  app.use(oauth.router);
  const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  return { app, store, directory, logged, client: { clientId: client.clientId, clientSecret } };
}

type Host = Awaited<ReturnType<typeof createHost>>;

/** Tokens from a code exchange, and a function that refreshes them, for the findUser cases. */
async function exchangeCode(host: Host) {
  const code = await obtainCode(host.app, host.client);
  const issued = await request(host.app).post('/oauth2/token').set('Authorization', basic(host.client)).type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
  expect(issued.status).toBe(200);
  const refresh = () => request(host.app).post('/oauth2/token').set('Authorization', basic(host.client)).type('form')
    .send({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token });
  return { refresh };
}

/** The sign-in form of a new authorization request, posted once `fail` has set the directory failing. */
async function signInWhile(host: Host, fail: () => void) {
  const agent = request.agent(host.app);
  const login = await agent.get(`/oauth2/authorize?${authorizeQuery(host.client)}`);
  fail();
  return agent.post('/oauth2/login').type('form').send({
    csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
    username: USER.username, password: USER.password,
  });
}

/** The error and state an authorization request's redirect carries back to the integration. */
async function authorizeRedirect(host: Host, state: string) {
  const res = await request(host.app).get(`/oauth2/authorize?${authorizeQuery(host.client, { state })}`);
  expect(res.status).toBe(302);
  const callback = new URL(res.headers.location!);
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
  return { error: callback.searchParams.get('error'), state: callback.searchParams.get('state') };
}

describe('UserAuth hooks that throw are an outage: 503 temporarily_unavailable (RFC 6749 §5.2, §4.1.2.1)', () => {
  it('findUser at the code exchange: 503 with the SPEC §4.2 headers, no token, one log line naming the hook', async () => {
    const host = await createHost();
    const code = await obtainCode(host.app, host.client);
    host.directory.down = true;
    const res = await request(host.app).post('/oauth2/token').set('Authorization', basic(host.client)).type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expectSpecHeaders(res);
    expect(host.logged).toEqual([expect.stringContaining('UserAuth.findUser unavailable: Error (ECONNREFUSED)')]);
    // Its message may quote what the user typed or a connection string: only the name and the code are logged.
    expect(host.logged[0]).not.toContain('10.0.0.7');
  });

  it('findUser at a refresh: 503, and once the directory is back the same refresh token works (nothing was revoked)', async () => {
    const host = await createHost();
    const { refresh } = await exchangeCode(host);
    host.directory.down = true;
    const refused = await refresh();
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('temporarily_unavailable');
    host.directory.down = false;
    expect((await refresh()).status).toBe(200);
    // The store never failed: its answer to the refresh does not announce the directory's outage over as the store's.
    expect(host.logged).toEqual([expect.stringContaining('UserAuth.findUser unavailable: Error (ECONNREFUSED)')]);
  });

  it('verifyCredentials at the sign-in: a 503 page saying to try again later, not a 500', async () => {
    const host = await createHost();
    const res = await signInWhile(host, () => { host.directory.down = true; });
    expect(res.status).toBe(503);
    expect(res.text).toContain('temporarily_unavailable');
    expect(res.text).not.toContain('ECONNREFUSED');
    expect(host.logged).toEqual([expect.stringContaining('UserAuth.verifyCredentials unavailable: Error (ECONNREFUSED)')]);
  });

  it('currentUser at the authorization endpoint: the integration hears temporarily_unavailable with its state, not server_error', async () => {
    const host = await createHost(true);
    host.directory.down = true;
    expect(await authorizeRedirect(host, 'try-later')).toEqual({ error: 'temporarily_unavailable', state: 'try-later' });
    expect(host.logged).toEqual([expect.stringContaining('UserAuth.currentUser unavailable: Error (ECONNREFUSED)')]);
  });

  it('currentUser at a consent decision, the integration disabled while the page was open: the 503 page, no redirect to its redirect_uri (RFC 6749 §4.1.2.1)', async () => {
    for (const decision of ['allow', 'deny']) {
      const host = await createHost(true);
      const agent = request.agent(host.app);
      const page = await agent.get(`/oauth2/authorize?${authorizeQuery(host.client, { state: 'gone' })}`);
      expect(page.status).toBe(200);
      await host.store.clients.updateClient!(host.client.clientId, { disabled: true });
      host.directory.down = true;
      const res = await agent.post('/oauth2/consent').type('form').send({
        csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'),
        resume: hiddenField(page.text, 'resume'), decision,
      });
      // Who is signed in could not be told, so neither was the integration checked again: nothing goes to it.
      expect(res.headers.location, decision).toBeUndefined();
      expect(res.status, decision).toBe(503);
      expect(res.text, decision).toContain('temporarily_unavailable');
    }
  });

  it('a StoreUnavailableError the hook throws is an outage too; any other error is the host\'s bug: 500 server_error, logged', async () => {
    const { StoreUnavailableError } = await import('../../src/stores/store-unavailable-error.js');
    const host = await createHost();
    const { refresh } = await exchangeCode(host);
    host.directory.down = true;
    host.directory.fault = () => new StoreUnavailableError('user directory failing over');
    expect((await refresh()).status).toBe(503);
    host.directory.fault = () => new TypeError("Cannot read properties of undefined (reading 'id')");
    const bug = await refresh();
    expect(bug.status).toBe(500);
    expect(bug.body.error).toBe('server_error');
    // Named, not quoted: a hook's message may hold what the user typed (a password typed as a username).
    expect(host.logged.at(-1)).toBe('express-oauth-router: unexpected HostHookError: UserAuth.findUser threw TypeError');
  });

  it('a StoreUnavailableError the hook throws is logged by its name only, never its message: it may quote the password typed', async () => {
    const { StoreUnavailableError } = await import('../../src/stores/store-unavailable-error.js');
    const host = await createHost();
    const res = await signInWhile(host, () => {
      host.directory.down = true;
      // What the README tells a host to do with an outage its driver reports otherwise, wrapping the driver's message.
      host.directory.fault = () => new StoreUnavailableError(`LDAP bind failed for cn=alice,password=${USER.password}`);
    });
    expect(res.status).toBe(503);
    expect(host.logged).toEqual(['express-oauth-router: store unavailable: UserAuth.verifyCredentials unavailable: StoreUnavailableError (OAUTH_STORE_UNAVAILABLE)']);
  });
});

describe('UserAuth hooks that never answer are an outage once userAuthTimeout passes: 503, not a held request', () => {
  it('findUser at a refresh: 503 temporarily_unavailable with the SPEC §4.2 headers, logged as no answer, the token kept', async () => {
    const host = await createHost();
    const { refresh } = await exchangeCode(host);
    host.directory.hung = true;
    const refused = await refresh();
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expectSpecHeaders(refused);
    expect(host.logged).toEqual([expect.stringContaining('UserAuth.findUser unavailable: no answer within 1 s')]);
    host.directory.hung = false;
    expect((await refresh()).status).toBe(200);
  });

  it('verifyCredentials at the sign-in: the 503 page', async () => {
    const host = await createHost();
    const res = await signInWhile(host, () => { host.directory.hung = true; });
    expect(res.status).toBe(503);
    expect(res.text).toContain('temporarily_unavailable');
    expect(host.logged).toEqual([expect.stringContaining('UserAuth.verifyCredentials unavailable: no answer within 1 s')]);
  });

  it('currentUser at the authorization endpoint: the integration hears temporarily_unavailable with its state', async () => {
    const host = await createHost(true);
    host.directory.hung = true;
    expect(await authorizeRedirect(host, 'hung')).toEqual({ error: 'temporarily_unavailable', state: 'hung' });
  });

  it('the option is whole seconds from 1 to 300', () => {
    const store = createMemoryStore();
    const userAuth: UserAuth = { verifyCredentials: async () => null };
    for (const userAuthTimeout of [0, 301, 1.5, '10']) {
      expect(() => createOAuthRouter(store, userAuth, { issuer: 'http://auth.test', session: { secret: 'test-session-secret-0123456789' }, userAuthTimeout: userAuthTimeout as number }))
        .toThrow(/userAuthTimeout.*must be a positive integer number of seconds up to 300/);
    }
  });
});
