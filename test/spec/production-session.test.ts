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
