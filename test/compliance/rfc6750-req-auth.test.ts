// RFC 6750 §2.1: req.auth as host handlers read it, wherever the host mounts requireBearer (src/http/request-auth.ts).
import { createServer, IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express, { type Request } from 'express';
import request from 'supertest';
import { basic, createTestApp, createTestRouter, type TestApp } from '../helpers/app.js';
import type { OAuthRouter } from '../../src/types.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';

describe('req.auth, set by requireBearer for the host', () => {
  let t: TestApp;
  let token: string;
  let oauth: OAuthRouter;
  let host: express.Express;
  beforeAll(async () => {
    const store = createMemoryStore();
    oauth = createTestRouter(store);
    const { client, clientSecret } = await registerClient(store, { name: 'Sync', flow: 'client_credentials' });
    host = express();
    host.use(oauth.router);
    token = (await request(host).post('/oauth2/token').set('Authorization', basic({ clientId: client.clientId, clientSecret }))
      .type('form').send({ grant_type: 'client_credentials' })).body.access_token as string;
    t = await createTestApp();
  });
  const bearer = 'Bearer ';

  it('reaches a sub-app mounted behind requireBearer, and the parent after the sub-app hands the request back', async () => {
    const app = express();
    const sub = express();
    sub.get('/inside', (req, res) => { res.json({ inside: req.auth?.clientId ?? null }); });
    sub.get('/through', (_req, _res, next) => { next(); });
    app.use(oauth.router);
    app.use('/v1', oauth.requireBearer(), sub);
    app.get('/v1/through', (req, res) => { res.json({ after: req.auth?.clientId ?? null }); });
    const inside = await request(app).get('/v1/inside').set('Authorization', bearer + token);
    expect(inside.status).toBe(200);
    expect(inside.body.inside).toMatch(/\S/);
    const after = await request(app).get('/v1/through').set('Authorization', bearer + token);
    expect(after.body.after).toBe(inside.body.inside);
  });

  it('reaches the parent app from a requireBearer inside a sub-app, once the sub-app hands the request back', async () => {
    const app = express();
    const sub = express();
    sub.use(oauth.requireBearer());
    app.use(oauth.router);
    app.use('/v2', sub);
    app.get('/v2/x', (req, res) => { res.json({ clientId: req.auth?.clientId ?? null }); });
    const res = await request(app).get('/v2/x').set('Authorization', bearer + token);
    expect(res.status).toBe(200);
    expect(res.body.clientId).toMatch(/\S/);
  });

  it('is undefined on a route requireBearer does not guard, and each request reads only its own', async () => {
    const app = express();
    app.use(oauth.router);
    app.get('/open', (req, res) => { res.json({ has: req.auth !== undefined }); });
    app.get('/guarded', oauth.requireBearer(), (req, res) => { res.json({ has: req.auth !== undefined }); });
    const answers = await Promise.all([
      request(app).get('/guarded').set('Authorization', bearer + token),
      request(app).get('/open'),
      request(app).get('/guarded').set('Authorization', bearer + token),
      request(app).get('/open'),
    ]);
    expect(answers.map((res) => res.body.has)).toEqual([true, false, true, false]);
  });

  it("keeps a host's own req.auth (another auth middleware on other routes): set, read back, cleared, per request", async () => {
    const app = express();
    app.use(oauth.router);
    app.get('/guarded', oauth.requireBearer(), (req, res) => { res.json({ clientId: req.auth?.clientId }); });
    app.get('/basic', (req, res) => {
      const own = { clientId: 'set-by-the-host' } as unknown as NonNullable<Request['auth']>;
      req.auth = own;
      const readBack = req.auth === own;
      req.auth = undefined;
      res.json({ readBack, cleared: req.auth === undefined });
    });
    expect((await request(app).get('/guarded').set('Authorization', bearer + token)).body.clientId).toMatch(/\S/);
    expect((await request(app).get('/basic')).body).toEqual({ readBack: true, cleared: true });
  });

  it("leaves Node's own IncomingMessage.prototype alone", async () => {
    expect((await request(t.app).get('/api/v1/me').set('Authorization', bearer + token)).status).toBe(401); // another store
    expect(Object.hasOwn(IncomingMessage.prototype, 'auth')).toBe(false);
    expect('auth' in Object.getPrototypeOf(express.request)).toBe(false);
  });

  describe('a host without Express, calling requireBearer itself', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      const guard = oauth.requireBearer();
      server = createServer((req, res) => {
        void guard(req as Request, res as unknown as express.Response, () => {
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ own: Object.hasOwn(req, 'auth'), clientId: (req as Request).auth?.clientId ?? null }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(async () => { await new Promise((resolve) => server.close(resolve)); });

    it('gets req.auth as a plain property of the request', async () => {
      const res = await fetch(url, { headers: { authorization: bearer + token } });
      expect(res.status).toBe(200);
      const body = await res.json() as { own: boolean; clientId: string | null };
      expect(body.own).toBe(true);
      expect(body.clientId).toMatch(/\S/);
    });
  });
});
