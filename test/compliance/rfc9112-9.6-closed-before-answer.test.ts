// A client that hangs up after sending its request (RFC 9112 §9.6): what the request did is still reported with
// its source address (RFC 9700 §4.14), though Node no longer knows the peer of a closed socket, and a token request
// whose client left during the secret check spends no code and saves no token.
import { connect } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';
import type { Store } from '../../src/stores/contract.js';
import { DIAGNOSTICS_CHANNELS, type TokenRequestMessage } from '../../src/metrics/channels.js';
import { basic, createTestRouter, REDIRECT_URI, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { listen } from '../helpers/raw-http.js';

const FORM_BODY = 'grant_type=client_credentials';

interface Harness {
  readonly app: express.Express;
  readonly port: number;
  readonly client: TestClient;
  readonly codeClient: TestClient;
  readonly events: OAuthEvents;
  /** How many times the store was asked to save tokens. */
  readonly saves: () => number;
  readonly seen: OAuthEvent[];
  /** Resolves once the server has seen the request's socket close. */
  closed(): Promise<void>;
  /** Resolves once the request has reached the host, in front of the router. */
  dispatched(): Promise<void>;
  close(): Promise<void>;
}

let running: Harness | undefined;
afterEach(async () => { await running?.close(); running = undefined; });

/**
 * The router behind a host layer that notes when the request arrives and when its socket closes; `hold(store,
 * closed)` makes the store wait for that close at the step under test, so the router goes on after the client left.
 */
async function harness(hold: (store: Store, closed: () => Promise<void>) => void): Promise<Harness> {
  const store = createMemoryStore();
  const { client, clientSecret } = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
  const code = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  let saves = 0;
  const save = store.tokens.saveTokens.bind(store.tokens);
  store.tokens.saveTokens = (...args) => { saves += 1; return save(...args); };
  const events = new OAuthEvents();
  const seen: OAuthEvent[] = [];
  events.on('event', (event) => seen.push(event));
  let socketClosed!: Promise<void>;
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => { arrived = resolve; });
  hold(store, () => socketClosed);
  const app = express();
  app.use((req, _res, next) => {
    socketClosed = new Promise((resolve) => req.socket.once('close', () => resolve()));
    arrived();
    next();
  });
  app.use(createTestRouter(store, { events, clientAuthRateLimit: false }).router);
  const server = await listen(app);
  return {
    app, port: server.port, client: { clientId: client.clientId, clientSecret }, events, saves: () => saves,
    codeClient: { clientId: code.client.clientId, clientSecret: code.clientSecret }, seen, closed: () => socketClosed,
    dispatched: () => reached, close: server.close,
  };
}

/**
 * Sends a whole token request, then resets (or half-closes) the connection once the host has it, without reading an
 * answer. A half-close is, to Node's server, an abort: it ends the connection without answering.
 */
async function sendAndHangUp(h: Harness, authorization: string, body = FORM_BODY, how: 'reset' | 'half-close' = 'reset'): Promise<void> {
  const socket = connect(h.port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write([
    'POST /oauth2/token HTTP/1.1', 'Host: auth.test', `Authorization: ${authorization}`,
    'Content-Type: application/x-www-form-urlencoded', `Content-Length: ${body.length}`, '', body,
  ].join('\r\n'));
  await h.dispatched();
  if (how === 'reset') socket.resetAndDestroy();
  else socket.end();
  await h.closed();
}

async function eventOf(h: Harness, type: OAuthEvent['type']): Promise<OAuthEvent> {
  await expect.poll(() => h.seen.map((event) => event.type)).toContain(type);
  return h.seen.find((event) => event.type === type)!;
}

describe('a token request whose client hung up before the answer', () => {
  it('reports token.issued with the address it came from, not null', async () => {
    running = await harness((store, closed) => {
      const save = store.tokens.saveTokens.bind(store.tokens);
      store.tokens.saveTokens = async (...args) => { await closed(); return save(...args); };
    });
    await sendAndHangUp(running, basic(running.client));
    expect((await eventOf(running, 'token.issued')).ip).toBe('127.0.0.1');
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
    expect((await finished).outcome).toBe('error');
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
    expect((await finished).outcome).toBe('error');
    expect(running.saves()).toBe(0);
  });
});
