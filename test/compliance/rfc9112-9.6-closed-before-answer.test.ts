// A client that hangs up after sending its request (RFC 9112 §9.6): what the request did is still reported with
// its source address (RFC 9700 §4.14), though Node no longer knows the peer of a closed socket.
import { connect } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';
import type { Store } from '../../src/stores/contract.js';
import { basic, createTestRouter, type TestClient } from '../helpers/app.js';
import { listen } from '../helpers/raw-http.js';

const FORM_BODY = 'grant_type=client_credentials';

interface Harness {
  readonly port: number;
  readonly client: TestClient;
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
    port: server.port, client: { clientId: client.clientId, clientSecret }, seen, closed: () => socketClosed,
    dispatched: () => reached, close: server.close,
  };
}

/** Sends a whole token request, then resets the connection once the host has it, without reading an answer. */
async function sendAndHangUp(h: Harness, authorization: string): Promise<void> {
  const socket = connect(h.port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write([
    'POST /oauth2/token HTTP/1.1', 'Host: auth.test', `Authorization: ${authorization}`,
    'Content-Type: application/x-www-form-urlencoded', `Content-Length: ${FORM_BODY.length}`, '', FORM_BODY,
  ].join('\r\n'));
  await h.dispatched();
  socket.resetAndDestroy();
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
