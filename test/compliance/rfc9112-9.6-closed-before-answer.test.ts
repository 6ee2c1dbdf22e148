// A client that hangs up after sending its request (RFC 9112 §9.6): what the request did is still reported with
// its source address (RFC 9700 §4.14), though Node no longer knows the peer of a closed socket, and a token request
// whose client left during the secret check spends no code and saves no token. The page forms (sign-in, consent)
// report theirs with it too. A failure it made counts against that address in the client-authentication and sign-in
// limits, whether anyone listens to the events or not.
import { connect } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent, TokenRevokedEvent } from '../../src/events/event-types.js';
import type { Store } from '../../src/stores/contract.js';
import type { UserAuth } from '../../src/user-auth.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { DIAGNOSTICS_CHANNELS, type TokenRequestMessage } from '../../src/metrics/channels.js';
import { basic, createTestApp, createTestRouter, createTestUserAuth, REDIRECT_URI, USER, type TestClient } from '../helpers/app.js';
import { authorizeQuery, hiddenField, obtainCode } from '../helpers/browser-flow.js';
import { listen } from '../helpers/raw-http.js';
import { builtInStores, withOpenedStore } from '../helpers/built-in-stores.js';
import { gateSaveTokens } from '../helpers/gate-save-tokens.js';
import { hashToken } from '../../src/crypto/hash-token.js';

const FORM_BODY = 'grant_type=client_credentials';
/** Marks the request under test: only its arrival and its socket's close are noted, not those of the steps before it. */
const UNDER_TEST = 'X-Hangs-Up';

interface Harness {
  readonly app: express.Express;
  readonly port: number;
  readonly client: TestClient;
  readonly codeClient: TestClient;
  readonly events: OAuthEvents;
  /** How many times the store was asked to save tokens. */
  readonly saves: () => number;
  readonly seen: OAuthEvent[];
  /** Resolves once the server has seen the socket of the request under test close. */
  closed(): Promise<void>;
  /** Resolves once the request under test has reached the host, in front of the router. */
  dispatched(): Promise<void>;
  close(): Promise<void>;
}

let running: Harness | undefined;
afterEach(async () => { await running?.close(); running = undefined; });

/**
 * The router behind a host layer that notes when the request under test arrives and when its socket closes;
 * `hold(store, closed, userAuth)` makes the store (or the user check) wait for that close at the step under test, so
 * the router goes on after the client left. No sign-in limit: it would read the address before the held check.
 * `options` replace the router's (limits off, an `event` listener on `events`): `listened: false` leaves it unheard.
 */
async function harness(
  hold: (store: Store, closed: () => Promise<void>, userAuth: UserAuth) => void,
  { listened = true, ...options }: Partial<OAuthRouterOptions> & { readonly listened?: boolean } = {},
): Promise<Harness> {
  const store = createMemoryStore();
  const { client, clientSecret } = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
  const code = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  let saves = 0;
  const save = store.tokens.saveTokens.bind(store.tokens);
  store.tokens.saveTokens = (...args) => { saves += 1; return save(...args); };
  const events = new OAuthEvents();
  const seen: OAuthEvent[] = [];
  if (listened) events.on('event', (event) => seen.push(event));
  let socketClosed!: Promise<void>;
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => { arrived = resolve; });
  const userAuth = createTestUserAuth(new Set());
  hold(store, () => socketClosed, userAuth);
  const app = express();
  app.use((req, _res, next) => {
    if (req.headers[UNDER_TEST.toLowerCase()] === undefined) {
      next();
      return;
    }
    socketClosed = new Promise((resolve) => req.socket.once('close', () => resolve()));
    arrived();
    next();
  });
  app.use(createTestRouter(store, { events, clientAuthRateLimit: false, loginRateLimit: false, ...options }, userAuth).router);
  const server = await listen(app);
  return {
    app, port: server.port, client: { clientId: client.clientId, clientSecret }, events, saves: () => saves,
    codeClient: { clientId: code.client.clientId, clientSecret: code.clientSecret }, seen, closed: () => socketClosed,
    dispatched: () => reached, close: server.close,
  };
}

/**
 * Sends a whole form POST, then resets (or half-closes) the connection once the host has it, without reading an
 * answer. A half-close is, to Node's server, an abort: it ends the connection without answering.
 */
async function postAndHangUp(h: Harness, path: string, headers: readonly string[], body: string, how: 'reset' | 'half-close' = 'reset'): Promise<void> {
  const socket = connect(h.port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write([
    `POST ${path} HTTP/1.1`, 'Host: auth.test', `${UNDER_TEST}: 1`, ...headers,
    'Content-Type: application/x-www-form-urlencoded', `Content-Length: ${Buffer.byteLength(body)}`, '', body,
  ].join('\r\n'));
  await h.dispatched();
  if (how === 'reset') socket.resetAndDestroy();
  else socket.end();
  await h.closed();
}

/** A token request, sent whole, then the connection reset (or half-closed) without reading an answer. */
function sendAndHangUp(h: Harness, authorization: string, body = FORM_BODY, how: 'reset' | 'half-close' = 'reset'): Promise<void> {
  return postAndHangUp(h, '/oauth2/token', [`Authorization: ${authorization}`], body, how);
}

async function eventOf(h: Harness, type: OAuthEvent['type']): Promise<OAuthEvent> {
  await expect.poll(() => h.seen.map((event) => event.type)).toContain(type);
  return h.seen.find((event) => event.type === type)!;
}

describe('a token request whose client hung up before the answer', () => {
  it('reports the revocation of the tokens it saved (token.revoked, undelivered) with the address it came from, not null, and no token.issued', async () => {
    running = await harness((store, closed) => {
      const save = store.tokens.saveTokens.bind(store.tokens);
      store.tokens.saveTokens = async (...args) => { await closed(); return save(...args); };
    });
    await sendAndHangUp(running, basic(running.client));
    const revoked = await eventOf(running, 'token.revoked');
    expect(revoked).toMatchObject({ cause: 'undelivered', ip: '127.0.0.1' });
    expect(running.seen.filter((event) => event.type === 'token.issued'), 'tokens no one received are not announced as issued').toEqual([]);
  });

  it('reports client.authentication_failed with the address it came from, not null', async () => {
    running = await harness((store, closed) => {
      const find = store.clients.findClient.bind(store.clients);
      store.clients.findClient = async (clientId) => { await closed(); return find(clientId); };
    });
    await sendAndHangUp(running, basic({ ...running.client, clientSecret: 'not-the-secret' }));
    expect((await eventOf(running, 'client.authentication_failed')).ip).toBe('127.0.0.1');
  });
});

/** Resolves with the outcome of this router's next token request, once it has finished. */
function nextTokenRequest(h: Harness): Promise<TokenRequestMessage> {
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      if ((message as TokenRequestMessage).source !== h.events) return;
      unsubscribe(DIAGNOSTICS_CHANNELS.tokenRequest, listener);
      resolve(message as TokenRequestMessage);
    };
    subscribe(DIAGNOSTICS_CHANNELS.tokenRequest, listener);
  });
}

describe('a token request whose client left during the secret check (RFC 6749 §4.1.2: a code is used once)', () => {
  /** The integration is read only once the client has gone: the secret check outlasts the client's patience. */
  let armed = false;
  const holdSecretCheck = (store: Store, closed: () => Promise<void>): void => {
    const find = store.clients.findClient.bind(store.clients);
    store.clients.findClient = async (clientId) => {
      if (armed) await closed();
      return find(clientId);
    };
  };
  afterEach(() => { armed = false; });

  it.each(['reset', 'half-close'] as const)('%s: the code is not spent, and redeems when sent again', async (how) => {
    running = await harness(holdSecretCheck);
    const h = running;
    const code = await obtainCode(h.app, h.codeClient);
    const exchange = `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;
    const finished = nextTokenRequest(h);
    armed = true;
    await sendAndHangUp(h, basic(h.codeClient), exchange, how);
    expect((await finished).outcome).toBe('undelivered');
    armed = false;
    expect(h.saves()).toBe(0);
    expect(h.seen.map((event) => event.type)).not.toContain('token.issued');
    // The client that got no answer sends the same code again, on a connection that stays.
    const again = await request(h.app).post('/oauth2/token').set('Authorization', basic(h.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.refresh_token).toBeTruthy();
  });

  it('client_credentials: no token is saved for nobody', async () => {
    running = await harness(holdSecretCheck);
    const finished = nextTokenRequest(running);
    armed = true;
    await sendAndHangUp(running, basic(running.client));
    expect((await finished).outcome).toBe('undelivered');
    expect(running.saves()).toBe(0);
  });
});

describe('a failed client authentication whose client hung up counts against its address (RFC 6819 §4.3.5)', () => {
  // The limit counts failures per (client_id, source) and per source. Read only after the secret check, the source of a
  // client that had gone was `unknown` unless someone listened to the events (who had the address kept on arrival):
  // every hung-up failure, from anywhere, shared one count, and none reached the count of the address it came from.
  it.each([['nobody listens to the events', false], ['a listener hears the events', true]] as const)(
    'the same whether %s: its address is blocked after max failures', async (_listeners, listened) => {
      let armed = false;
      running = await harness((store, closed) => {
        const find = store.clients.findClient.bind(store.clients);
        store.clients.findClient = async (clientId) => {
          if (armed) await closed();
          return find(clientId);
        };
      }, { listened, clientAuthRateLimit: { max: 1 } });
      const h = running;
      const wrong = basic({ ...h.client, clientSecret: 'not-the-secret' });
      const finished = nextTokenRequest(h);
      armed = true;
      await sendAndHangUp(h, wrong);
      expect(await finished).toMatchObject({ grantType: 'client_credentials', outcome: 'undelivered' });
      armed = false;
      // The same client_id from the same address, on a connection that stays: past the limit its hung-up failure reached.
      const again = await fetch(`http://127.0.0.1:${h.port}/oauth2/token`, {
        method: 'POST', headers: { Authorization: wrong, 'Content-Type': 'application/x-www-form-urlencoded' }, body: FORM_BODY,
      });
      expect(again.status).toBe(429);
      expect(await again.json()).toMatchObject({ error: 'temporarily_unavailable' });
    },
  );
});

/** A browser over fetch to the harness's port, whose cookies a raw request can carry (`cookie()`: a Cookie header). */
function pageBrowser(h: Harness) {
  const cookies = new Map<string, string>();
  const keep = (res: Response): Response => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      cookies.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
    }
    return res;
  };
  const jar = (): string => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  return {
    cookie: () => `Cookie: ${jar()}`,
    get: async (path: string) => keep(await fetch(`http://127.0.0.1:${h.port}${path}`, { redirect: 'manual', headers: { Cookie: jar() } })),
    post: async (path: string, form: Record<string, string>) => keep(await fetch(`http://127.0.0.1:${h.port}${path}`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams(form), headers: { Cookie: jar() },
    })),
  };
}

/** The sign-in form's fields for the harness's authorization-code client (`query` added), its cookies kept by `browser`. */
async function signInForm(h: Harness, browser: ReturnType<typeof pageBrowser>, query: Record<string, string> = {}, password = USER.password): Promise<string> {
  const page = await browser.get(`/oauth2/authorize?${authorizeQuery(h.codeClient, query)}`);
  expect(page.status).toBe(200);
  const html = await page.text();
  return new URLSearchParams({
    csrf_token: hiddenField(html, 'csrf_token'), request_id: hiddenField(html, 'request_id'), username: USER.username, password,
  }).toString();
}

/** A browser signed in through the form; resolves with it and the consent page it was sent to. */
async function signedIn(h: Harness): Promise<{ browser: ReturnType<typeof pageBrowser>; consent: string }> {
  const browser = pageBrowser(h);
  const posted = await browser.post('/oauth2/login', Object.fromEntries(new URLSearchParams(await signInForm(h, browser))));
  expect(posted.status).toBe(303);
  const next = new URL(posted.headers.get('location')!, 'http://auth.test');
  const consent = await browser.get(`${next.pathname}${next.search}`);
  expect(consent.status).toBe(200);
  return { browser, consent: await consent.text() };
}

// The requests under test carry a session cookie: a sign-in without one has express-session create a session up
// front, which reads `req.protocol` and so the peer address, and would hide a router that never kept it.
describe('a page form whose client hung up before the answer (RFC 9700 §4.14: audit events name their source)', () => {
  /** Once armed, the user check (or the code's save) outlasts the client's patience: it goes on once the client has gone. */
  let armed = false;
  const holdUserCheck = (_store: Store, closed: () => Promise<void>, userAuth: UserAuth): void => {
    const verify = userAuth.verifyCredentials!.bind(userAuth);
    userAuth.verifyCredentials = async (username, password) => {
      if (armed) await closed();
      return verify(username, password);
    };
  };
  afterEach(() => { armed = false; });

  it.each([
    ['login.succeeded', USER.password], ['login.failed', 'not-the-password'],
  ] as const)('reports %s of a sign-in again (prompt=login) with the address it came from, not null', async (type, password) => {
    running = await harness(holdUserCheck);
    const { browser } = await signedIn(running);
    const form = await signInForm(running, browser, { prompt: 'login' }, password);
    running.seen.splice(0); // the first sign-in's events, heard over a connection that stayed
    armed = true;
    await postAndHangUp(running, '/oauth2/login', [browser.cookie()], form);
    expect((await eventOf(running, type)).ip).toBe('127.0.0.1');
  });

  it.each([['nobody listens to the events', false], ['a listener hears the events', true]] as const)(
    'a failed sign-in counts against its address whether %s (RFC 6819 §4.4.3.6): its next failure there is 429', async (_listeners, listened) => {
      // The integration's read (the sign-in resumes its authorization request) outlasts the client's patience, so the
      // sign-in limit reads the source after the hang-up. It counts an attempt before the user check: once that check
      // has answered, the failure is counted.
      let checked!: () => void;
      const failed = new Promise<void>((resolve) => { checked = resolve; });
      running = await harness((store, closed, userAuth) => {
        const find = store.clients.findClient.bind(store.clients);
        store.clients.findClient = async (clientId) => { if (armed) await closed(); return find(clientId); };
        const verify = userAuth.verifyCredentials!.bind(userAuth);
        userAuth.verifyCredentials = async (username, password) => {
          const user = await verify(username, password);
          if (armed) checked();
          return user;
        };
      }, { listened, loginRateLimit: { max: 1 } });
      const { browser } = await signedIn(running);
      const form = await signInForm(running, browser, { prompt: 'login' }, 'not-the-password');
      armed = true;
      await postAndHangUp(running, '/oauth2/login', [browser.cookie()], form);
      await failed;
      armed = false;
      const again = await signInForm(running, browser, { prompt: 'login' }, 'not-the-password');
      const refused = await browser.post('/oauth2/login', Object.fromEntries(new URLSearchParams(again)));
      expect(refused.status).toBe(429);
    },
  );

  it('reports consent.granted with the address it came from, not null', async () => {
    running = await harness((store, closed) => {
      const save = store.codes.saveCode.bind(store.codes);
      store.codes.saveCode = async (record) => { if (armed) await closed(); return save(record); };
    });
    const { browser, consent } = await signedIn(running);
    armed = true;
    await postAndHangUp(running, '/oauth2/consent', [browser.cookie()], new URLSearchParams({
      csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision: 'allow',
    }).toString());
    expect((await eventOf(running, 'consent.granted')).ip).toBe('127.0.0.1');
  });
});

const GONE_STORES = builtInStores('client_gone', {}, { redisPrefix: process.env.OAUTH_TEST_REDIS_PREFIX ?? '' });

describe.each(GONE_STORES)('a token request whose client hung up while its tokens were being saved (%s)', (_label, available, open) => {
  /**
   * `t` (the test app) on `store`, and a second router on `wrap(store)` behind a host layer that notes when the
   * request under test (UNDER_TEST) arrives and when its socket closes; runs `use`, then stops the server.
   */
  async function withWatchedRouter(
    store: Store, wrap: (store: Store) => Store, userAuth: UserAuth | undefined,
    use: (t: Awaited<ReturnType<typeof createTestApp>>, watched: {
      port: number; events: OAuthEvents; revoked: TokenRevokedEvent[]; closed(): Promise<void>; dispatched(): Promise<void>;
    }) => Promise<void>,
  ): Promise<void> {
    const t = await createTestApp({ clientAuthRateLimit: false }, store);
    const events = new OAuthEvents();
    const revoked: TokenRevokedEvent[] = [];
    events.on('token.revoked', (event) => { revoked.push(event); });
    let socketClosed!: Promise<void>;
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => { arrived = resolve; });
    const app = express();
    app.use((req, _res, next) => {
      if (req.headers[UNDER_TEST.toLowerCase()] !== undefined) {
        socketClosed = new Promise((resolve) => req.socket.once('close', () => resolve()));
        arrived();
      }
      next();
    });
    app.use(createTestRouter(wrap(store), { events, clientAuthRateLimit: false }, userAuth).router);
    const server = await listen(app);
    try {
      await use(t, { port: server.port, events, revoked, closed: () => socketClosed, dispatched: () => reached });
    } finally {
      await server.close();
    }
  }

  /** Sends a token request whole on its own socket, and resets (or half-closes) it once `held` says the save is waiting. */
  async function hangUpDuring(
    watched: { port: number; closed(): Promise<void>; dispatched(): Promise<void> }, held: Promise<unknown>,
    authorization: string, body: string, how: 'reset' | 'half-close' = 'reset',
  ): Promise<void> {
    const socket = connect(watched.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write([
      'POST /oauth2/token HTTP/1.1', 'Host: auth.test', `${UNDER_TEST}: 1`, `Authorization: ${authorization}`,
      'Content-Type: application/x-www-form-urlencoded', `Content-Length: ${Buffer.byteLength(body)}`, '', body,
    ].join('\r\n'));
    await watched.dispatched();
    await held;
    if (how === 'reset') socket.resetAndDestroy();
    else socket.end();
    await watched.closed();
  }

  /** Resolves with the outcome of the next token request of the router whose events are `events`. */
  function tokenRequestOf(events: OAuthEvents): Promise<TokenRequestMessage> {
    return new Promise((resolve) => {
      const listener = (message: unknown): void => {
        if ((message as TokenRequestMessage).source !== events) return;
        unsubscribe(DIAGNOSTICS_CHANNELS.tokenRequest, listener);
        resolve(message as TokenRequestMessage);
      };
      subscribe(DIAGNOSTICS_CHANNELS.tokenRequest, listener);
    });
  }

  const exchangeOf = (code: string) => `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;

  it.skipIf(!available).each(['reset', 'half-close'] as const)('code exchange, %s: the tokens saved for nobody are revoked as the save returns (token.revoked, undelivered), and the code sent again is invalid_grant with nothing live (RFC 6749 §4.1.2)', (how) => withOpenedStore(open, async ({ store }) => {
    let gate!: ReturnType<typeof gateSaveTokens>;
    await withWatchedRouter(store, (inner) => (gate = gateSaveTokens(inner)).store, undefined, async (t, watched) => {
      const code = await obtainCode(t.app, t.codeClient);
      const finished = tokenRequestOf(watched.events);
      await hangUpDuring(watched, gate.reached, basic(t.codeClient), exchangeOf(code), how);
      gate.open();
      expect((await finished).outcome).toBe('undelivered');
      const held = await gate.reached;
      expect(await store.tokens.findAccessToken(held.access.tokenHash), 'the access token nobody received').toBeNull();
      expect(await store.tokens.findRefreshToken(held.refresh!.tokenHash), 'the refresh token nobody received').toBeNull();
      expect(watched.revoked).toEqual([expect.objectContaining({
        cause: 'undelivered', extent: 'grant', grantId: held.access.grantId, clientId: t.codeClient.clientId, userId: USER.id, ip: '127.0.0.1',
      })]);
      const again = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form').send(exchangeOf(code));
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_grant');
    });
  }));

  it.skipIf(!available)('refresh: the new access token saved for nobody is revoked as the save returns (extent token), and the refresh token, not rotated (SPEC §4.5), still serves the retry', () => withOpenedStore(open, async ({ store }) => {
    let gate!: ReturnType<typeof gateSaveTokens>;
    await withWatchedRouter(store, (inner) => (gate = gateSaveTokens(inner)).store, undefined, async (t, watched) => {
      const exchanged = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send(exchangeOf(await obtainCode(t.app, t.codeClient)));
      const refreshToken = exchanged.body.refresh_token as string;
      expect(refreshToken).toBeTruthy();
      const finished = tokenRequestOf(watched.events);
      await hangUpDuring(watched, gate.reached, basic(t.codeClient), `grant_type=refresh_token&refresh_token=${refreshToken}`);
      gate.open();
      expect((await finished).outcome).toBe('undelivered');
      const held = await gate.reached;
      expect(await store.tokens.findAccessToken(held.access.tokenHash), 'the access token nobody received').toBeNull();
      expect(await store.tokens.findAccessToken(hashToken(exchanged.body.access_token as string)), 'the access token the client holds').not.toBeNull();
      expect(watched.revoked).toEqual([expect.objectContaining({ cause: 'undelivered', extent: 'token', grantId: held.access.grantId })]);
      const again = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
    });
  }));

  it.skipIf(!available)('client_credentials: the token saved for nobody is revoked as the save returns (token.revoked, undelivered)', () => withOpenedStore(open, async ({ store }) => {
    let gate!: ReturnType<typeof gateSaveTokens>;
    await withWatchedRouter(store, (inner) => (gate = gateSaveTokens(inner)).store, undefined, async (t, watched) => {
      const finished = tokenRequestOf(watched.events);
      await hangUpDuring(watched, gate.reached, basic(t.credentialsClient), 'grant_type=client_credentials');
      gate.open();
      expect((await finished).outcome).toBe('undelivered');
      const held = await gate.reached;
      expect(await store.tokens.findAccessToken(held.access.tokenHash), 'the access token nobody received').toBeNull();
      expect(watched.revoked).toEqual([expect.objectContaining({ cause: 'undelivered', extent: 'grant', grantId: held.access.grantId, userId: null })]);
    });
  }));

  it.skipIf(!available)('refresh whose client hung up before the save began (a slow findUser): nothing is saved, and the refresh token serves the retry', () => withOpenedStore(open, async ({ store }) => {
    const directory = createTestUserAuth(new Set());
    const find = directory.findUser!.bind(directory);
    let armed = false;
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => { entered = resolve; });
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const userAuth = Object.assign(Object.create(directory) as UserAuth, {
      findUser: async (id: string) => {
        if (armed) {
          entered();
          await released;
        }
        return find(id);
      },
    });
    let saves = 0;
    const counting = (inner: Store): Store => ({
      ...inner, tokens: { ...inner.tokens, saveTokens: (...args) => { saves += 1; return inner.tokens.saveTokens(...args); } },
    });
    await withWatchedRouter(store, counting, userAuth, async (t, watched) => {
      const exchanged = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send(exchangeOf(await obtainCode(t.app, t.codeClient)));
      const refreshToken = exchanged.body.refresh_token as string;
      const finished = tokenRequestOf(watched.events);
      armed = true;
      await hangUpDuring(watched, reached, basic(t.codeClient), `grant_type=refresh_token&refresh_token=${refreshToken}`);
      release();
      expect((await finished).outcome).toBe('undelivered');
      armed = false;
      expect(saves, 'no token saved for a client that has gone').toBe(0);
      expect(watched.revoked).toEqual([]);
      const again = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
    });
  }));
});
