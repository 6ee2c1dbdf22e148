// Requests pipelined on one connection (RFC 9112 §9.3.2): the token, revocation and introspection endpoints take
// effect in the order they were sent, and a request whose answer can no longer be sent does nothing.
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import type { Store } from '../../src/stores/contract.js';
import { basic, createTestApp, createTestRouter, REDIRECT_URI, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { listen, openConnection, rawRequest } from '../helpers/raw-http.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';

const FORM = 'application/x-www-form-urlencoded';

interface Harness {
  readonly app: express.Express;
  readonly port: number;
  readonly store: Store;
  readonly client: TestClient;
  /** How many times the store was asked to save tokens. */
  saves: number;
  /** How many requests the guarded API route's handler served. */
  served: number;
  close(): Promise<void>;
}

let running: Harness | undefined;
afterEach(async () => { await running?.close(); running = undefined; });

/** `hostParsers`: the host's body parsers run before the router and the API (they read a pipelined body at once). */
async function harness({ hostParsers = false }: { hostParsers?: boolean } = {}): Promise<Harness> {
  const store = createMemoryStore();
  const { client, clientSecret } = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
  const app = express();
  if (hostParsers) app.use(express.urlencoded({ extended: false }), express.json());
  const oauth = createTestRouter(store, { clientAuthRateLimit: false });
  app.use(oauth.router);
  // A route of the host's API, guarded as the signature API guards its own.
  app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { h.served += 1; res.json({ client: req.auth?.clientId }); });
  app.post('/api/v1/envelopes', oauth.requireBearer(), (req, res) => { h.served += 1; res.json({ subject: (req.body as { subject?: unknown }).subject }); });
  const server = await listen(app);
  const h: Harness = { app, port: server.port, store, client: { clientId: client.clientId, clientSecret }, saves: 0, served: 0, close: server.close };
  const save = store.tokens.saveTokens.bind(store.tokens);
  store.tokens.saveTokens = (...args) => { h.saves += 1; return save(...args); };
  return h;
}

/** Revocations reach the store 200 ms late, as over a network: a request pipelined behind one would overtake it. */
function slowRevocations(h: Harness): void {
  const revoke = h.store.tokens.revokeAccessToken.bind(h.store.tokens);
  h.store.tokens.revokeAccessToken = async (hash) => { await new Promise((resolve) => setTimeout(resolve, 200)); return revoke(hash); };
}

/** `answers`, or a rejection naming what never came after `ms`: a request left unanswered fails its case, not the run. */
function within<T>(answers: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms); });
  return Promise.race([answers, late]).finally(() => clearTimeout(timer));
}

/** One request as raw bytes, for several in one write. */
function post(h: Harness, path: string, body: string, headers: readonly string[] = []): string {
  return [
    `POST ${path} HTTP/1.1`, 'Host: auth.test', `Authorization: ${basic(h.client)}`, `Content-Type: ${FORM}`,
    `Content-Length: ${Buffer.byteLength(body)}`, ...headers, '', body,
  ].join('\r\n');
}

describe('RFC 9112 §9.3.2: token requests pipelined on one connection', () => {
  it('a token request sent behind one answered with Connection: close issues no token nobody can receive', async () => {
    running = await harness();
    // The first is refused (a compressed body) and its answer closes the connection: the second is never answered.
    const refused = post(running, '/oauth2/token', 'grant_type=client_credentials', ['Content-Encoding: gzip']);
    const [head, body] = refused.split('\r\n\r\n') as [string, string];
    const res = await rawRequest(running.port, head, body + post(running, '/oauth2/token', 'grant_type=client_credentials'), { keepOpen: true });
    expect(res.status).toBe(400);
    expect(res.headers).toContainEqual(['connection', 'close']);
    expect(res.closedByServer).toBe(true);
    expect(res.body.match(/HTTP\/1\.1/g)).toBeNull();
    // Time for a token request on the memory store (a hash check, one save) many times over.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(running.saves).toBe(0);
  });

  it('an authorization code sent behind a request answered with Connection: close is not spent: it still redeems', async () => {
    const t = await createTestApp({ clientAuthRateLimit: false });
    const server = await listen(t.app);
    try {
      const code = await obtainCode(t.app, t.codeClient);
      const exchange = `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;
      const head = [
        'POST /oauth2/token HTTP/1.1', 'Host: auth.test', `Authorization: ${basic(t.codeClient)}`, `Content-Type: ${FORM}`,
      ];
      const refusedHead = [...head, 'Content-Encoding: gzip', 'Content-Length: 29'].join('\r\n');
      const second = [...head, `Content-Length: ${exchange.length}`, '', exchange].join('\r\n');
      const res = await rawRequest(server.port, refusedHead, `grant_type=client_credentials${second}`, { keepOpen: true });
      expect(res.status).toBe(400);
      expect(res.closedByServer).toBe(true);
      // Sent again on a connection of its own, the code the client never got an answer for gets its tokens.
      const again = await rawRequest(server.port, [...head, `Content-Length: ${exchange.length}`].join('\r\n'), exchange, { keepOpen: true });
      expect(again.status, again.body).toBe(200);
      expect(JSON.parse(again.body).refresh_token).toBeTruthy();
    } finally {
      await server.close();
    }
  });

  it('an introspection sent behind a revocation of the same token sees it revoked', async () => {
    running = await harness();
    const token = await clientCredentialsToken(running.app, running.client);
    // The revocation takes a while to reach the store, as over a network: the introspection behind it waits its turn.
    slowRevocations(running);
    const connection = await openConnection(running.port);
    try {
      connection.send(post(running, '/oauth2/revoke', `token=${token}`) + post(running, '/oauth2/introspect', `token=${token}`));
      const { statusLines, text } = await connection.responses(2);
      expect(statusLines).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
      expect(text).toContain('{"active":false}');
    } finally {
      connection.close();
    }
  });

  it('a protected API request sent behind a revocation of its token is refused: requireBearer waits its turn', async () => {
    running = await harness();
    const token = await clientCredentialsToken(running.app, running.client);
    slowRevocations(running);
    const connection = await openConnection(running.port);
    try {
      const api = ['GET /api/v1/me HTTP/1.1', 'Host: auth.test', `Authorization: Bearer ${token}`, '', ''].join('\r\n');
      connection.send(post(running, '/oauth2/revoke', `token=${token}`) + api);
      const { statusLines } = await connection.responses(2);
      expect(statusLines).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 401 Unauthorized']);
    } finally {
      connection.close();
    }
  });

  it('a protected API request sent behind an answer that closed the connection does not reach the host handler', async () => {
    running = await harness();
    const token = await clientCredentialsToken(running.app, running.client);
    const refused = post(running, '/oauth2/token', 'grant_type=client_credentials', ['Content-Encoding: gzip']);
    const [head, body] = refused.split('\r\n\r\n') as [string, string];
    const api = ['GET /api/v1/me HTTP/1.1', 'Host: auth.test', `Authorization: Bearer ${token}`, '', ''].join('\r\n');
    const res = await rawRequest(running.port, head, body + api, { keepOpen: true });
    expect(res.status).toBe(400);
    expect(res.closedByServer).toBe(true);
    expect(res.body).not.toContain('HTTP/1.1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(running.served).toBe(0);
  });

  it('an introspection whose body the host\'s parser read while it waited behind a revocation is answered, after it', async () => {
    // Node ends a request whose body has been read ('close'), though its answer is still to come on the connection.
    running = await harness({ hostParsers: true });
    const token = await clientCredentialsToken(running.app, running.client);
    slowRevocations(running);
    const connection = await openConnection(running.port);
    try {
      connection.send(post(running, '/oauth2/revoke', `token=${token}`) + post(running, '/oauth2/introspect', `token=${token}`));
      const { statusLines, text } = await within(connection.responses(2), 2000);
      expect(statusLines).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
      expect(text).toContain('{"active":false}');
    } finally {
      connection.close();
    }
  });

  it('a protected API POST whose JSON body the host read while it waited behind a revocation is answered, refused', async () => {
    running = await harness({ hostParsers: true });
    const token = await clientCredentialsToken(running.app, running.client);
    slowRevocations(running);
    const connection = await openConnection(running.port);
    try {
      const json = '{"subject":"Lease"}';
      const api = ['POST /api/v1/envelopes HTTP/1.1', 'Host: auth.test', `Authorization: Bearer ${token}`, 'Content-Type: application/json',
        `Content-Length: ${json.length}`, '', json].join('\r\n');
      connection.send(post(running, '/oauth2/revoke', `token=${token}`) + api);
      const { statusLines } = await within(connection.responses(2), 2000);
      expect(statusLines).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 401 Unauthorized']);
      expect(running.served).toBe(0);
    } finally {
      connection.close();
    }
  });

  it('several token requests in one write are all answered, in order', async () => {
    running = await harness();
    const connection = await openConnection(running.port);
    try {
      connection.send(Array.from({ length: 5 }, () => post(running!, '/oauth2/token', 'grant_type=client_credentials')).join(''));
      const { statusLines, text } = await connection.responses(5);
      expect(statusLines).toEqual(Array(5).fill('HTTP/1.1 200 OK'));
      expect(new Set(text.match(/"access_token":"[^"]+"/g)).size).toBe(5);
      expect(running.saves).toBe(5);
    } finally {
      connection.close();
    }
  });
});
