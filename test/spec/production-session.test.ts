// Under NODE_ENV=production the router refuses a login session that leaks memory or dies with the process.
import session from 'express-session';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { MemorySessionStore } from '../../src/http/memory-session-store.js';
import { OptionsError } from '../../src/options.js';
import type { SessionOptions } from '../../src/options.js';
import type { UserAuth } from '../../src/user-auth.js';
import { createTestUserAuth } from '../helpers/app.js';

const SECRET = 'a-production-session-secret-0123456789';
const ownLogin = createTestUserAuth(new Set());
const hostLogin: UserAuth = { currentUser: async () => null, loginUrl: (_req, returnTo) => `/login?return_to=${encodeURIComponent(returnTo)}` };
const create = (userAuth: UserAuth, sessionOptions: SessionOptions) =>
  createOAuthRouter(createMemoryStore(), userAuth, { issuer: 'https://auth.example.com', session: sessionOptions, logger: { warn() {}, error() {} } });

afterEach(() => { vi.unstubAllEnvs(); });

describe('NODE_ENV=production with the router\'s own login page (verifyCredentials)', () => {
  it('refuses to start without session.secret, naming the option and the fix', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(() => create(ownLogin, {})).toThrow(OptionsError);
    expect(() => create(ownLogin, {})).toThrow(/"session\.secret" is required when NODE_ENV=production/);
  });

  it('refuses express-session\'s MemoryStore, which never sweeps, naming the option and the fix', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(() => create(ownLogin, { secret: SECRET, store: new session.MemoryStore() })).toThrow(/"session\.store" is express-session's MemoryStore/);
  });

  it('starts with a secret and the default store, or the bounded MemorySessionStore', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(() => create(ownLogin, { secret: SECRET })).not.toThrow();
    expect(() => create(ownLogin, { secret: SECRET, store: new MemorySessionStore() })).not.toThrow();
  });
});

describe('where the production check does not apply', () => {
  it('leaves a host that signs users in with its own login (its own session) alone', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(() => create(hostLogin, {})).not.toThrow();
  });

  it('allows both outside production (npm start, tests), with the start-up warning instead', () => {
    vi.stubEnv('NODE_ENV', '');
    expect(() => create(ownLogin, { store: new session.MemoryStore() })).not.toThrow();
    vi.stubEnv('NODE_ENV', 'development');
    expect(() => create(ownLogin, {})).not.toThrow();
  });
});

describe('session.hostSession: the host\'s own express-session holds the router\'s sign-ins', () => {
  it('starts in production without a secret of the router\'s, whose own session is never mounted; the refusal names the option', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(() => create(ownLogin, {})).toThrow(/or, if your app runs its own express-session in front of the router, set session\.hostSession: true/);
    expect(() => create(ownLogin, { hostSession: true })).not.toThrow();
  });

  it('refuses a secret or store beside it, which would configure nothing; a cookie name still names its page cookies', () => {
    expect(() => create(ownLogin, { hostSession: true, cookieName: 'acme.sid' })).not.toThrow();
    for (const extra of [{ secret: SECRET }, { store: new MemorySessionStore() }]) {
      expect(() => create(ownLogin, { hostSession: true, ...extra })).toThrow(/configures the router's own session, which session\.hostSession: true does not mount/);
    }
    expect(() => create(ownLogin, { hostSession: 'yes' as never })).toThrow(/"session\.hostSession" must be a boolean/);
  });

  it('signs in through the host\'s express-session; a request that reaches the router without one is a 500 page, logged once', async () => {
    const { default: express } = await import('express');
    const { default: request } = await import('supertest');
    const { authorizeQuery, hiddenField } = await import('../helpers/browser-flow.js');
    const { registerClient } = await import('../../src/clients/register-client.js');
    const { REDIRECT_URI, USER } = await import('../helpers/app.js');
    vi.stubEnv('NODE_ENV', 'production');
    const store = createMemoryStore();
    const errors: string[] = [];
    const oauth = createOAuthRouter(store, ownLogin, {
      issuer: 'http://auth.test', session: { hostSession: true }, logger: { warn() {}, error: (line: string) => { errors.push(line); } },
    });
    const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const query = authorizeQuery({ clientId: client.clientId, clientSecret });
    const host = express();
    host.use(session({ secret: SECRET, resave: false, saveUninitialized: false }));
    host.use(oauth.router);
    const agent = request.agent(host);
    const login = await agent.get(`/oauth2/authorize?${query}`);
    const signedIn = await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'), username: USER.username, password: USER.password,
    });
    expect(signedIn.status).toBe(303);
    expect(([] as string[]).concat(signedIn.headers['set-cookie'] ?? []).some((c) => c.startsWith('connect.sid='))).toBe(true);
    expect((await agent.get(signedIn.headers.location!)).text).toContain('name="decision"');
    // Mounted before the host's session: nothing to keep a sign-in in.
    const early = express();
    early.use(oauth.router);
    for (let i = 0; i < 2; i += 1) expect((await request(early).get(`/oauth2/authorize?${query}`)).status).toBe(500);
    expect(errors).toEqual([
      // The host's express-session above keeps its sessions in express-session's MemoryStore: said once, in production.
      expect.stringContaining("your express-session keeps sign-ins in express-session's MemoryStore"),
      expect.stringContaining('session.hostSession is set, but a request reached the router without req.session'),
    ]);
  });
});

describe('the host\'s session cookie on an https issuer (RFC 6265 §4.1.2.5, RFC 9700 §4.7)', () => {
  /** One authorization request through a host express-session with `cookie`, answering what the router logged. */
  async function warningsWith(issuer: string, cookie: session.CookieOptions, sessionOptions: SessionOptions): Promise<string[]> {
    const { default: express } = await import('express');
    const { default: request } = await import('supertest');
    const { authorizeQuery } = await import('../helpers/browser-flow.js');
    const { registerClient } = await import('../../src/clients/register-client.js');
    const { REDIRECT_URI } = await import('../helpers/app.js');
    const store = createMemoryStore();
    const warnings: string[] = [];
    const oauth = createOAuthRouter(store, ownLogin, { issuer, session: sessionOptions, logger: { warn: (line: string) => { warnings.push(line); }, error() {} } });
    const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const host = express();
    host.set('trust proxy', 'loopback');
    host.use(session({ secret: SECRET, resave: false, saveUninitialized: false, cookie }));
    host.use(oauth.router);
    for (let i = 0; i < 2; i += 1) {
      const page = await request(host).get(`/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret })}`).set('X-Forwarded-Proto', 'https');
      expect(page.status).toBe(200);
    }
    return warnings;
  }

  it.each([{ hostSession: true }, {}])('express-session\'s default cookie (neither Secure nor SameSite) is said once, with the fix (session %o)', async (sessionOptions) => {
    const warnings = await warningsWith('https://auth.example.com', {}, sessionOptions);
    expect(warnings).toEqual([expect.stringContaining("your express-session's cookie, which carries the router's sign-ins, is not Secure, SameSite=Lax")]);
    expect(warnings[0]).toContain("sameSite: 'lax'");
  });

  it('a cookie that is Secure (or auto behind a trusted TLS proxy) and SameSite=Lax or Strict says nothing', async () => {
    for (const cookie of [{ secure: true, sameSite: 'lax' }, { secure: 'auto', sameSite: 'strict' }, { secure: true, sameSite: true }] as const) {
      expect(await warningsWith('https://auth.example.com', cookie, { hostSession: true })).toEqual([]);
    }
  });

  it('SameSite=None is said, though Secure', async () => {
    expect(await warningsWith('https://auth.example.com', { secure: true, sameSite: 'none' }, { hostSession: true }))
      .toEqual([expect.stringMatching(/is not SameSite=Lax: /)]);
  });

  it('an http issuer (npm start, tests) is not concerned', async () => {
    expect(await warningsWith('http://auth.example.com', {}, { hostSession: true })).toEqual([]);
  });
});

describe('NODE_ENV=production with a plain-http issuer (RFC 6749 §3.1, §3.2: TLS is required)', () => {
  const warnings = (issuer: string, legacy?: string): string[] => {
    const logged: string[] = [];
    createOAuthRouter(createMemoryStore(), hostLogin, {
      issuer, ...(legacy ? { legacy: { issuer: legacy } } : {}), logger: { warn: (m) => logged.push(m), error() {} },
    });
    return logged.filter((m) => m.includes('plain http'));
  };

  it('warns once per issuer that is http on a host that is not loopback, naming it and the fix', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(warnings('http://auth.example.com', 'http://auth.example.com/legacy')).toEqual([
      'express-oauth-router: the issuer http://auth.example.com is plain http while NODE_ENV=production: client secrets, '
        + 'codes and tokens cross the network in clear, and the session cookies cannot be __Host- cookies (RFC 6749 §3.1, §3.2 '
        + 'require TLS). Serve it over https, or behind a proxy that terminates TLS with an https issuer and trust proxy set.',
      expect.stringContaining('the issuer http://auth.example.com/legacy is plain http'),
    ]);
    expect(warnings('https://auth.example.com', 'http://10.0.0.5:8080/legacy')).toEqual([expect.stringContaining('http://10.0.0.5:8080/legacy')]);
  });

  it('stays quiet for https, for loopback hosts (a local demo) and outside production', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(warnings('https://auth.example.com', 'https://auth.example.com/legacy')).toEqual([]);
    for (const issuer of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000', 'http://app.localhost']) {
      expect(warnings(issuer), issuer).toEqual([]);
    }
    vi.stubEnv('NODE_ENV', 'development');
    expect(warnings('http://auth.example.com')).toEqual([]);
  });
});
