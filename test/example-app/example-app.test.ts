// The example signature API driven in-process through supertest (the built server: server-restart.test.ts).
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerClient, type CompleteStore } from 'express-oauth-router';
import { createMemoryStore } from 'express-oauth-router/stores/memory';
import { createApp } from '../../example-app/app.js';
import { createDemoUserAuth } from '../../example-app/users.js';
import { seedDemoClients } from '../../example-app/seed.js';
import { MAX_DEMO_REDIRECT_URIS } from '../../example-app/demo-redirect-uri.js';

const AUTH_URL = 'http://localhost:3000';

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}

// Sends a Buffer body as its octets (superagent would send the JSON of { type: 'Buffer', data }); its types say string.
const asIs = ((body: Buffer) => body) as unknown as (body: unknown) => string;

describe('example app in-process', () => {
  let store: CompleteStore;
  let app: ReturnType<typeof createApp>['app'];

  beforeEach(async () => {
    store = createMemoryStore();
    const userAuth = await createDemoUserAuth({ username: 'demo', password: 'correct horse battery' });
    ({ app } = createApp({ store, userAuth, authUrl: AUTH_URL, sessionSecret: 'a-session-secret-of-32-characters' }));
  });

  afterEach(async () => {
    await store.close?.();
  });

  async function clientCredentialsToken(
    issuedAt?: Date, path = '/oauth2/token', allowedScopes = ['envelopes:read', 'envelopes:write'],
  ): Promise<{ token: string; clientId: string }> {
    const { client, clientSecret } = await registerClient(store, {
      name: 'Acme CRM',
      flow: 'client_credentials',
      allowedScopes,
      ...(issuedAt ? { credentialsIssuedAt: issuedAt } : {}),
    });
    const response = await request(app)
      .post(path)
      .set('Authorization', basic(client.clientId, clientSecret))
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: client.clientId });
    expect(response.status).toBe(200);
    return { token: String(response.body.access_token), clientId: client.clientId };
  }

  it.each([
    ['get', '/api/v1/envelopes'],
    ['post', '/api/v1/envelopes'],
    ['get', '/api/v1/me'],
  ] as const)('%s %s answers 401 with a Bearer challenge without a token', async (method, path) => {
    const response = await request(app)[method](path);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="/);
  });

  it('answers 403 insufficient_scope to a read-only token that creates an envelope', async () => {
    const { token } = await clientCredentialsToken(undefined, '/oauth2/token', ['envelopes:read']);
    expect((await request(app).get('/api/v1/envelopes').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    const response = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`).send({ title: 'NDA' });
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toMatch(/error="insufficient_scope".*scope="envelopes:write"/);
  });

  it('answers 401 invalid_token for an unknown token', async () => {
    const response = await request(app).get('/api/v1/envelopes').set('Authorization', 'Bearer not-a-real-token');
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('creates and lists envelopes with a client_credentials token', async () => {
    const { token } = await clientCredentialsToken();
    const empty = await request(app).get('/api/v1/envelopes').set('Authorization', `Bearer ${token}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ envelopes: [] });

    const created = await request(app)
      .post('/api/v1/envelopes')
      .set('Authorization', `Bearer ${token}`)
      .send({ title: 'Lease agreement' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Lease agreement', status: 'draft' });
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect(created.headers['location']).toBe(`/api/v1/envelopes/${created.body.id}`);
    // The API's security headers (api-headers.ts): never cached, sniffed, run as a page or framed.
    expect(created.headers['x-content-type-options']).toBe('nosniff');
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");

    const list = await request(app).get('/api/v1/envelopes').set('Authorization', `Bearer ${token}`);
    expect(list.body).toEqual({ envelopes: [created.body] });
    // No-store answers get no ETag: no cache may revalidate them, and making one hashes the body.
    expect(list.headers['etag']).toBeUndefined();
  });

  it('keeps envelopes per integration', async () => {
    const first = await clientCredentialsToken();
    const second = await clientCredentialsToken();
    await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${first.token}`).send({ title: 'Mine' }).expect(201);
    const other = await request(app).get('/api/v1/envelopes').set('Authorization', `Bearer ${second.token}`);
    expect(other.body).toEqual({ envelopes: [] });
  });

  it.each([
    ['no title', {}],
    ['an empty title', { title: '' }],
    ['a blank title', { title: '   ' }],
    ['a number', { title: 42 }],
    ['a title over 200 characters', { title: 'x'.repeat(201) }],
  ])('refuses %s with 400 and a JSON error', async (_label, body) => {
    const { token } = await clientCredentialsToken();
    const response = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`).send(body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/title/) });
    const list = await request(app).get('/api/v1/envelopes').set('Authorization', `Bearer ${token}`);
    expect(list.body).toEqual({ envelopes: [] });
  });

  it('accepts a title of exactly 200 characters', async () => {
    const { token } = await clientCredentialsToken();
    await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`).send({ title: 'x'.repeat(200) }).expect(201);
  });

  // The README's "1–200 characters" counts code points: an emoji is two UTF-16 units but one character.
  it.each([
    ['150 emoji', '\u{1F4DD}'.repeat(150)],
    ['200 emoji', '\u{1F4DD}'.repeat(200)],
    ['a right-to-left title (no formatting characters needed)', 'عقد إيجار'],
  ])('accepts %s', async (_label, title) => {
    const { token } = await clientCredentialsToken();
    const response = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`).send({ title }).expect(201);
    expect(response.body.title).toBe(title);
  });

  // The package refuses these in an integration's name; a title is shown and logged the same way.
  it.each([
    ['201 emoji', '"' + '\\ud83d\\udcdd'.repeat(201) + '"', /at most 200 characters \(Unicode code points\)/],
    ['a NUL', '"NDA\\u0000"', /control characters/],
    ['an escape sequence', '"NDA\\u001b]0;owned\\u0007"', /control characters/],
    ['a newline', '"NDA\\nforged line"', /control characters/],
    ['a C1 control', '"NDA\\u0085"', /control characters/],
    ['a lone high surrogate', '"NDA\\ud800"', /lone surrogate/],
    ['a lone low surrogate', '"\\udc00NDA"', /lone surrogate/],
    ['a right-to-left override', '"Lease\\u202efdp.exe"', /bidirectional formatting characters/],
    ['a left-to-right embedding', '"\\u202aNDA"', /bidirectional formatting characters/],
    ['a first-strong isolate', '"NDA\\u2068"', /bidirectional formatting characters/],
    ['a pop directional isolate', '"NDA\\u2069"', /bidirectional formatting characters/],
    ['zero-width spaces only', '"\\u200b\\u200b"', /show at least one letter/],
    ['Hangul fillers and spaces only', '" \\u3164 "', /show at least one letter/],
  ])('refuses a title with %s with 400 naming the rule', async (_label, titleJson, rule) => {
    const { token } = await clientCredentialsToken();
    const response = await request(app)
      .post('/api/v1/envelopes')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send(`{"title":${titleJson}}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(rule) });
  });

  it('refuses malformed JSON with 400 and a JSON error, not a stack trace', async () => {
    const { token } = await clientCredentialsToken();
    const response = await request(app)
      .post('/api/v1/envelopes')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send('{"title": ');
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_request');
    expect(response.text).not.toMatch(/at .*\.js/);
  });

  it('serves the envelope its 201 Location names, to the integration that created it only', async () => {
    const owner = await clientCredentialsToken();
    const stranger = await clientCredentialsToken();
    const created = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${owner.token}`).send({ title: 'NDA' }).expect(201);
    const location = String(created.headers['location']);
    const mine = await request(app).get(location).set('Authorization', `Bearer ${owner.token}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual(created.body);
    expect(mine.headers['cache-control']).toBe('no-store');
    // Another integration's envelope is as unknown as one that never existed: 404, not 403, so ids tell nothing.
    for (const [token, path] of [[stranger.token, location], [owner.token, '/api/v1/envelopes/00000000-0000-4000-8000-000000000000']]) {
      const missing = await request(app).get(path!).set('Authorization', `Bearer ${token}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ error: 'not_found', error_description: expect.any(String) });
    }
    expect((await request(app).get(location)).status).toBe(401);
  });

  it('answers a method a route lacks with a JSON 405 and Allow, and a path the API lacks with a JSON 404', async () => {
    const { token } = await clientCredentialsToken();
    for (const [method, path, allow] of [['put', '/api/v1/envelopes', 'GET, HEAD, POST, OPTIONS'], ['delete', '/api/v1/me', 'GET, HEAD, OPTIONS']] as const) {
      const response = await request(app)[method](path).set('Authorization', `Bearer ${token}`);
      expect(response.status).toBe(405);
      expect(response.headers['allow']).toBe(allow);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body.error).toBe('method_not_allowed');
    }
    const options = await request(app).options('/api/v1/envelopes/any-id');
    expect(options.status).toBe(204);
    expect(options.headers['allow']).toBe('GET, HEAD, OPTIONS');
    const unknown = await request(app).get('/api/v1/signatures').set('Authorization', `Bearer ${token}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/json/);
    expect(unknown.body.error).toBe('not_found');
    expect(unknown.text).not.toContain('<');
  });

  it('an envelope id that is not valid percent-encoding (RFC 3986 §2.1) is a 400 naming the path, not a complaint about a body the GET never had', async () => {
    const { token } = await clientCredentialsToken();
    for (const auth of [`Bearer ${token}`, undefined]) {
      const pending = request(app).get('/api/v1/envelopes/%ZZ');
      const response = await (auth ? pending.set('Authorization', auth) : pending);
      expect(response.status).toBe(400);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/percent-encod/) });
      expect(response.body.error_description).not.toMatch(/body/);
    }
  });

  it.each([
    ['get', '/'], ['get', '/signatures'], ['post', '/nope'], ['get', '/oauth2/nope'], ['get', '/legacy/nope'],
  ] as const)('%s %s outside the API is never kept by a shared cache, and a path nothing serves is a JSON 404', async (method, path) => {
    const response = await request(app)[method](path);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    if (path !== '/') {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'not_found', error_description: 'no such route' });
    }
  });

  it.each([
    ['text/plain', '{"title":"NDA"}'],
    ['application/x-www-form-urlencoded', 'title=NDA'],
  ])('refuses a %s body with 415 and a JSON error naming application/json', async (type, body) => {
    const { token } = await clientCredentialsToken();
    const response = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`).set('Content-Type', type).send(body);
    expect(response.status).toBe(415);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('application/json') });
  });

  it('refuses a JSON body that is not valid UTF-8 (RFC 8259 §8.1) with 400, creating no envelope with U+FFFD in its title', async () => {
    const { token } = await clientCredentialsToken();
    const body = Buffer.concat([Buffer.from('{"title":"NDA '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const response = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json').serialize(asIs).send(body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/UTF-8/) });
    const list = await request(app).get('/api/v1/envelopes').set('Authorization', `Bearer ${token}`).expect(200);
    expect(list.body).toEqual({ envelopes: [] });
  });

  it.each(['gzip', 'deflate', 'br'])('refuses a body that is not the %s its Content-Encoding names with 400 saying so, not "must be a JSON object"', async (coding) => {
    const { token } = await clientCredentialsToken();
    const response = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json').set('Content-Encoding', coding).serialize(asIs).send(Buffer.from('{"title":"NDA"}'));
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/Content-Encoding/) });
  });

  it.each([
    ['over 16 kB', 'application/json', JSON.stringify({ title: 'x'.repeat(17_000) }), 413, /16 kB/],
    ['in a charset other than UTF-8', 'application/json; charset=latin1', '{"title":"NDA"}', 415, /UTF-8/],
  ])('refuses a body %s with a description that says why', async (_label, type, body, status, description) => {
    const { token } = await clientCredentialsToken();
    const response = await request(app).post('/api/v1/envelopes').set('Authorization', `Bearer ${token}`).set('Content-Type', type).send(body);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(description) });
  });

  it('GET /me says which integration the token is for, and no user for client_credentials', async () => {
    const { token, clientId } = await clientCredentialsToken();
    const response = await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      client_id: clientId,
      client_name: 'Acme CRM',
      user_id: null,
      scope: 'envelopes:read envelopes:write',
      issuer: AUTH_URL,
    });
  });

  it('serves legacy credentials under /legacy, and their tokens work on the API', async () => {
    const { token, clientId } = await clientCredentialsToken(new Date('2020-06-01T00:00:00Z'), '/legacy/oauth2/token');
    const me = await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ client_id: clientId, issuer: `${AUTH_URL}/legacy` });
  });

  it('runs the authorization code flow: login, consent, code exchange; /me names the user', async () => {
    const demo = await seedDemoClients(store, 'http://localhost:3000/demo/callback');
    const clientId = demo.code!.clientId;
    const agent = request.agent(app);
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: 'http://localhost:3000/demo/callback', state: 's-1' });

    // Follows the app's own pages (login, consent) the way a browser would, submitting `fields` on each form.
    async function follow(response: request.Response, fields: Record<string, string>): Promise<request.Response> {
      let current = response;
      for (let step = 0; step < 5; step += 1) {
        const location = current.headers['location'];
        if ([302, 303].includes(current.status) && location && !location.startsWith('http://localhost:3000/demo/')) {
          current = await agent.get(location.replace(AUTH_URL, ''));
          continue;
        }
        if (current.status !== 200 || !current.text.includes('<form')) return current;
        const action = /<form[^>]*action="([^"]+)"/.exec(current.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
        const hidden = Object.fromEntries(
          [...current.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
        );
        const isLogin = current.text.includes('name="password"');
        current = await agent.post(action.replace(AUTH_URL, '')).type('form')
          .send({ ...hidden, ...(isLogin ? { username: fields['username'], password: fields['password'] } : { decision: fields['decision'] }) });
      }
      return current;
    }

    const done = await follow(await agent.get(`/oauth2/authorize?${query.toString()}`), {
      username: 'demo', password: 'correct horse battery', decision: 'allow',
    });
    // 303 after the consent POST (RFC 9700 §4.12); 302 would do for a GET.
    expect([302, 303]).toContain(done.status);
    const callback = new URL(done.headers['location'] ?? '');
    expect(`${callback.origin}${callback.pathname}`).toBe('http://localhost:3000/demo/callback');
    expect(callback.searchParams.get('state')).toBe('s-1');
    const code = callback.searchParams.get('code') ?? '';

    const page = await request(app).get(`/demo/callback${callback.search}`);
    expect(page.text).toContain(code);

    const tokens = await request(app)
      .post('/oauth2/token')
      .set('Authorization', basic(clientId, demo.code!.clientSecret!))
      .type('form')
      .send({ grant_type: 'authorization_code', client_id: clientId, redirect_uri: 'http://localhost:3000/demo/callback', code });
    expect(tokens.status).toBe(200);
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    const me = await request(app).get('/api/v1/me').set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(me.body).toMatchObject({ client_id: clientId, client_name: 'Acme Sign demo (authorization code)', user_id: 'user:demo' });
  });

  it('the demo callback page shows the code, escaped, and a curl without any secret', async () => {
    const response = await request(app).get('/demo/callback').query({ code: 'abc<script>', state: 'demo' });
    expect(response.status).toBe(200);
    expect(response.text).toContain('abc&#60;script&#62;');
    expect(response.text).not.toContain('<script>');
    expect(response.text).toContain('grant_type=authorization_code');
    expect(response.text).toContain('$CODE_CLIENT_SECRET');
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('the demo user signs in only with the right username and password', async () => {
    const userAuth = await createDemoUserAuth({ username: 'demo', password: 'pw-1' });
    expect(await userAuth.verifyCredentials?.('demo', 'pw-1')).toMatchObject({ displayName: 'demo' });
    expect(await userAuth.verifyCredentials?.('demo', 'pw-2')).toBeNull();
    expect(await userAuth.verifyCredentials?.('demo2', 'pw-1')).toBeNull();
    expect(await userAuth.verifyCredentials?.('', '')).toBeNull();
  });

  it('the demo user signs in whichever Unicode normal form the browser sends (é precomposed or e + U+0301)', async () => {
    const userAuth = await createDemoUserAuth({ username: 'andr\u00E9', password: 'p\u00E4ssw\u00F6rd' });
    expect(await userAuth.verifyCredentials?.('andre\u0301', 'pa\u0308sswo\u0308rd')).toMatchObject({ displayName: 'andr\u00E9' });
    expect(await userAuth.verifyCredentials?.('andr\u00E9', 'p\u00E4ssw\u00F6rd')).toMatchObject({ displayName: 'andr\u00E9' });
    // NFC only: a fullwidth letter (which NFKC would fold into its ASCII twin) is another password.
    expect(await userAuth.verifyCredentials?.('andr\u00E9', 'p\u00E4ssw\u00F6r\uFF44')).toBeNull();
  });

  it('seeds one demo integration per flow on an empty store only', async () => {
    const first = await seedDemoClients(store, 'http://localhost:3000/demo/callback');
    expect(first.created).toBe(true);
    expect(first.code?.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.clientCredentials?.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const again = await seedDemoClients(store, 'http://localhost:3000/demo/callback');
    expect(again).toEqual({
      created: false,
      code: { clientId: first.code?.clientId, clientSecret: null },
      clientCredentials: { clientId: first.clientCredentials?.clientId, clientSecret: null },
      total: 2,
    });
    expect(await store.clients.listClients()).toHaveLength(2);
  });

  it('adds each start\'s callback address to the demo integration, keeping the ten newest', async () => {
    const callback = (port: number) => `http://localhost:${port}/demo/callback`;
    const first = await seedDemoClients(store, callback(3000));
    const redirectUris = async () => (await store.clients.findClient(first.code!.clientId))!.redirectUris;
    await seedDemoClients(store, callback(3001));
    await seedDemoClients(store, callback(3000));
    expect(await redirectUris()).toEqual([callback(3000), callback(3001)]);
    // Instances starting together on several ports: none loses its address to another's write.
    await Promise.all([3002, 3003, 3004, 3005].map((port) => seedDemoClients(store, callback(port))));
    expect([...await redirectUris()].sort()).toEqual([3000, 3001, 3002, 3003, 3004, 3005].map(callback));
    for (let port = 3006; port < 3020; port += 1) await seedDemoClients(store, callback(port));
    expect(await redirectUris()).toEqual(Array.from({ length: MAX_DEMO_REDIRECT_URIS }, (_, i) => callback(3020 - MAX_DEMO_REDIRECT_URIS + i)));
  });
});
