// Upgrading: a router alone in its process keeps the sign-ins a host express-session held before routers marked their data.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createOAuthRouter } from '../../src/router.js';
import { REDIRECT_URI } from '../helpers/app.js';

describe('Upgrading behind a host express-session with one router in the process', () => {
  let server: Server;
  let origin: string;
  let clientId: string;

  beforeAll(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = createMemoryStore();
    const oauth = createOAuthRouter(store, {
      async verifyCredentials() { return null; },
      async findUser(id) { return id === 'u1' ? { id, displayName: 'Alice' } : null; },
    }, { issuer: origin, session: { hostSession: true }, logger: { warn() {}, error() {} } });
    clientId = (await registerClient(store, { name: 'CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] })).client.clientId;
    const app = express();
    app.use(session({ name: 'host.sid', secret: 'host-secret-0123456789', resave: false, saveUninitialized: false }));
    // What this router kept before its data was marked with its issuer.
    app.post('/seed-before-upgrade', (req, res) => {
      const now = Date.now();
      (req.session as unknown as Record<string, unknown>).expressOAuthRouter = {
        user: { id: 'u1', displayName: 'Alice' }, userId: 'u1', signedInAt: now, lastSeenAt: now, csrf: 'c'.repeat(43),
      };
      res.sendStatus(204);
    });
    app.use(oauth.router);
    server.on('request', app);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('an unmarked sign-in stays signed in: no other router could have written it', async () => {
    const seeded = await fetch(`${origin}/seed-before-upgrade`, { method: 'POST' });
    expect(seeded.status).toBe(204);
    const cookie = seeded.headers.getSetCookie()[0]!.split(';')[0]!;
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, state: 's' });
    const page = await (await fetch(`${origin}/oauth2/authorize?${query}`, { headers: { Cookie: cookie }, redirect: 'manual' })).text();
    expect(page).not.toContain('name="password"');
    expect(page).toContain('Alice');
  });
});
