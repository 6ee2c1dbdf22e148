// SPEC §4.2 (token endpoint common rules) and §5.1 (HTTP Basic client authentication), RFC 6749 §2.3.1, §3.2, §5.2.
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { REDIRECT_URI, basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { expectSpecHeaders } from '../helpers/spec-requests.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { buildClientRecord } from '../../src/clients/register-client.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';

describe('SPEC §4.2 token endpoint: common rules', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  const token = () => request(t.app).post('/oauth2/token');
  const cc = () => ({ grant_type: 'client_credentials', client_id: t.credentialsClient.clientId });

  it('answers 200 with every SPEC §4.2 header, byte for byte, and Content-Length', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).type('form').send(cc());
    expect(res.status).toBe(200);
    expectSpecHeaders(res);
  });

  it('answers the §4.3 exchange and the §4.5 refresh with every SPEC §4.2 header too, at {auth_url} and {legacy_auth_url}', async () => {
    const cases: [string, TestClient, TestClient][] = [['', t.codeClient, t.credentialsClient], ['/legacy', t.legacyCodeClient, t.legacyCredentialsClient]];
    for (const [prefix, codeClient, credentialsClient] of cases) {
      const post = (client: TestClient, form: Record<string, string>) =>
        request(t.app).post(`${prefix}/oauth2/token`).set('Authorization', basic(client)).type('form').send(form);
      const code = await obtainCode(t.app, codeClient, { prefix });
      const exchanged = await post(codeClient, { grant_type: 'authorization_code', client_id: codeClient.clientId, redirect_uri: REDIRECT_URI, code });
      const refreshed = await post(codeClient, { grant_type: 'refresh_token', client_id: codeClient.clientId, refresh_token: exchanged.body.refresh_token });
      const credentials = await post(credentialsClient, { grant_type: 'client_credentials', client_id: credentialsClient.clientId });
      for (const [what, res] of [['authorization_code', exchanged], ['refresh_token', refreshed], ['client_credentials', credentials]] as const) {
        expect(res.status, `${prefix} ${what}`).toBe(200);
        expectSpecHeaders(res);
      }
    }
  });

  it.each(['text/plain', 'application/json', 'multipart/form-data; boundary=x'])(
    'refuses a well-formed form body sent as %s with 400 invalid_request, issuing nothing (RFC 6749 §3.2: application/x-www-form-urlencoded)',
    async (type) => {
      const body = new URLSearchParams(cc()).toString();
      const res = await token().set('Authorization', basic(t.credentialsClient)).set('Content-Type', type).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.access_token).toBeUndefined();
    },
  );

  it('sends the same no-store header set on errors (RFC 6749 §5.2 errors are JSON)', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).type('form').send({ grant_type: 'password' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    expectSpecHeaders(res);
  });

  it('refuses a body that is not application/x-www-form-urlencoded with invalid_request', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).send(cc());
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('refuses a request without grant_type with invalid_request', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).type('form').send({ client_id: t.credentialsClient.clientId });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('treats an empty parameter as omitted (RFC 6749 §3.1)', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).type('form').send('grant_type=&client_id=x');
    expect(res.body.error).toBe('invalid_request');
  });

  it('an empty value beside a real one is omitted, not a repetition (RFC 6749 §3.1), in either order', async () => {
    for (const body of ['grant_type=&grant_type=client_credentials', 'grant_type=client_credentials&grant_type=', `client_id=&grant_type=client_credentials&client_id=${encodeURIComponent(t.credentialsClient.clientId)}`]) {
      const res = await token().set('Authorization', basic(t.credentialsClient)).type('form').send(body);
      expect(res.status, body).toBe(200);
      expect(res.body.access_token, body).toEqual(expect.any(String));
    }
  });

  it('refuses a repeated parameter with invalid_request (RFC 6749 §3.1)', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).type('form')
      .send('grant_type=client_credentials&grant_type=client_credentials');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toContain('repeated');
  });

  it('refuses an unknown grant_type with unsupported_grant_type', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).type('form').send({ grant_type: 'password', username: 'a', password: 'b' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_grant_type');
  });

  it('refuses a body larger than 8 KiB with invalid_request, not a 5xx', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).type('form').send(`${new URLSearchParams(cc())}&pad=${'a'.repeat(9000)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('answers 405 with Allow: POST to other methods (RFC 6749 §3.2)', async () => {
    const res = await request(t.app).get('/oauth2/token');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.error).toBe('invalid_request');
  });

  it('works when the host app parsed the form body before the router', async () => {
    const { default: express } = await import('express');
    const { createOAuthRouter } = await import('../../src/router.js');
    const { createTestUserAuth, ISSUER } = await import('../helpers/app.js');
    const host = express();
    host.use(express.urlencoded({ extended: false }));
    host.use(createOAuthRouter(t.store, createTestUserAuth(new Set()), { issuer: ISSUER, legacy: false, session: { secret: 'x'.repeat(32) } }).router);
    const res = await request(host).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form').send(cc());
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
  });
});

describe('SPEC §5.1 HTTP Basic client authentication (RFC 6749 §2.3.1, §5.2)', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  const token = () => request(t.app).post('/oauth2/token').type('form');
  const cc = () => ({ grant_type: 'client_credentials', client_id: t.credentialsClient.clientId });

  function expectInvalidClient(res: request.Response): void {
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.headers['www-authenticate']).toBe('Basic realm="http://auth.test"');
    expectSpecHeaders(res);
  }

  it('answers 401 invalid_client with WWW-Authenticate: Basic when the Authorization header is missing', async () => {
    expectInvalidClient(await token().send(cc()));
  });

  it('answers 401 invalid_client for a wrong secret', async () => {
    expectInvalidClient(await token().set('Authorization', basic({ ...t.credentialsClient, clientSecret: 'wrong' })).send(cc()));
  });

  it('answers an unknown client_id exactly like a wrong secret', async () => {
    const unknown = await token().set('Authorization', basic({ clientId: 'nobody', clientSecret: 'wrong' })).send({ grant_type: 'client_credentials' });
    const wrong = await token().set('Authorization', basic({ ...t.credentialsClient, clientSecret: 'wrong' })).send({ grant_type: 'client_credentials' });
    expectInvalidClient(unknown);
    expect(unknown.text).toBe(wrong.text);
  });

  it('answers 401 invalid_client for a scheme other than Basic', async () => {
    expectInvalidClient(await token().set('Authorization', `Bearer ${t.credentialsClient.clientSecret}`).send(cc()));
  });

  it('answers 401 invalid_client for malformed Basic credentials', async () => {
    for (const header of ['Basic', 'Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${Buffer.from(':secret').toString('base64')}`]) {
      expectInvalidClient(await token().set('Authorization', header).send(cc()));
    }
  });

  it('refuses Base64 with a stray padding or an impossible length (RFC 7617 §2)', async () => {
    const encoded = Buffer.from(`${t.credentialsClient.clientId}:${t.credentialsClient.clientSecret}`).toString('base64');
    const cases: [string, RegExp][] = [
      [`Basic ${encoded}=`, /expected the Base64 of client_id:client_secret/],
      ['Basic QUJDR', /expected the Base64 of client_id:client_secret/],
      ['Basic !!!', /expected the Base64 of client_id:client_secret/],
      ['Basic', /expected the Base64 of client_id:client_secret/],
      ['Bearer abc', /must use the Basic scheme/],
    ];
    for (const [header, description] of cases) {
      const res = await token().set('Authorization', header).send(cc());
      expectInvalidClient(res);
      expect(res.body.error_description, header).toMatch(description);
    }
    expect((await token().set('Authorization', `Basic ${encoded}`).send(cc())).status, 'the canonical form').toBe(200);
    expect((await token().set('Authorization', `Basic ${encoded.replace(/=+$/, '')}`).send(cc())).status, 'unpadded').toBe(200);
  });

  it('accepts form-urlencoded id and secret inside the Basic value (RFC 6749 §2.3.1)', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).send(cc());
    expect(res.status).toBe(200);
  });

  it("reads Basic as SPEC §2 writes it too: an imported id and secret holding % or + authenticate sent as they are or form-encoded", async () => {
    // SPEC §2: "the Base64 encoding of client_id:client_secret"; curl -u, requests' HTTPBasicAuth and Authlib send that.
    const clientId = 'partner+7%41';
    const clientSecret = 's3cret+from%2019/ok=%zz';
    await t.store.clients.createClient!(buildClientRecord({ name: 'Imported partner', flow: 'client_credentials', clientId }, hashSecret(clientSecret)));
    const literal = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const send = (header: string, form: Record<string, string> = {}) => token().set('Authorization', header).send({ grant_type: 'client_credentials', ...form });
    expect((await send(literal(clientId, clientSecret))).status, 'as SPEC §2 writes it').toBe(200);
    expect((await send(basic({ clientId, clientSecret }))).status, 'form-encoded, RFC 6749 §2.3.1').toBe(200);
    expect((await send(literal(clientId, clientSecret), { client_id: clientId })).status, 'with client_id in the body, SPEC §4.4').toBe(200);
    // A wrong secret is a wrong secret in either reading, answered as any other.
    const wrong = await send(literal(clientId, 'wrong+secret%2F'));
    expectInvalidClient(wrong);
    expect(wrong.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    // A body client_id names one reading: the other is not tried behind it.
    await t.store.clients.createClient!(buildClientRecord({ name: 'Plus partner', flow: 'client_credentials', clientId: 'partner+8' }, hashSecret('plus+plus+plus')));
    expect((await send(literal('partner+8', 'plus+plus+plus'))).status).toBe(200);
    expect((await send(literal('partner+8', 'plus+plus+plus'), { client_id: 'partner+8' })).status).toBe(200);
    expectInvalidClient(await send(literal('partner+8', 'plus+plus+plus'), { client_id: 'partner 8' }));
    // Where a % is no escape (%zz), the header has only the reading as sent: a body naming another id does not match it.
    const mismatch = await send(literal(clientId, clientSecret), { client_id: 'partner 7A' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe('invalid_request');
  });

  it('accepts the Basic scheme name in any case (RFC 9110 §11.1: an authentication scheme is case-insensitive)', async () => {
    for (const scheme of ['basic', 'BASIC', 'bAsIc']) {
      const res = await token().set('Authorization', basic(t.credentialsClient).replace(/^Basic/, scheme)).send(cc());
      expect(res.status, scheme).toBe(200);
    }
  });

  it('reads a + in the form-encoded id and secret as a space (RFC 6749 §2.3.1, Appendix B)', async () => {
    const clientId = 'spaced partner';
    const clientSecret = 'a secret with spaces';
    await t.store.clients.createClient!(buildClientRecord({ name: 'Spaced partner', flow: 'client_credentials', clientId }, hashSecret(clientSecret)));
    const header = `Basic ${Buffer.from('spaced+partner:a+secret+with+spaces').toString('base64')}`;
    const res = await token().set('Authorization', header).send({ grant_type: 'client_credentials' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('refuses a body client_id naming neither reading of a Basic header holding + (DESIGN §5): neither reading authenticates behind it', async () => {
    const clientId = 'partner+9';
    const clientSecret = 'nine+nine';
    await t.store.clients.createClient!(buildClientRecord({ name: 'Nine partner', flow: 'client_credentials', clientId }, hashSecret(clientSecret)));
    const header = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    const send = (form: Record<string, string>) => token().set('Authorization', header).send({ grant_type: 'client_credentials', ...form });
    expect((await send({})).status, 'the reading as sent authenticates').toBe(200);
    const res = await send({ client_id: t.credentialsClient.clientId });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('reads octets that are not UTF-8 as ISO-8859-1, as requests\' HTTPBasicAuth and Authlib send a non-ASCII secret (RFC 7617 §2.1)', async () => {
    // RFC 7617 §2.1: without charset="UTF-8" in the challenge the charset is the server's to pick; those clients
    // encode `id:secret` as ISO-8859-1, where é is the one octet 0xE9, which no UTF-8 reading has. Registration
    // refuses an id outside VSCHAR (RFC 6749 Appendix A.1) now; one already in the store (registered before, or
    // written by a tool) keeps authenticating, so it is written here as such a tool would.
    const clientId = 'café-partner';
    const clientSecret = 'naïve+secret%2F§';
    const record = buildClientRecord({ name: 'Latin partner', flow: 'client_credentials', clientId: 'cafe-partner' }, hashSecret(clientSecret));
    await t.store.clients.createClient!({ ...record, clientId });
    const encoded = (id: string, secret: string, charset: BufferEncoding) => `Basic ${Buffer.from(`${id}:${secret}`, charset).toString('base64')}`;
    const send = (header: string) => token().set('Authorization', header).send({ grant_type: 'client_credentials' });
    expect((await send(encoded(clientId, clientSecret, 'latin1'))).status, 'ISO-8859-1, as sent by requests and Authlib').toBe(200);
    expect((await send(encoded(clientId, clientSecret, 'utf8'))).status, 'UTF-8 as it is').toBe(200);
    expect((await send(basic({ clientId, clientSecret }))).status, 'UTF-8 form-encoded, RFC 6749 §2.3.1').toBe(200);
    // Read octet for octet, so a wrong secret stays a wrong secret, answered as any other.
    const wrong = await send(encoded(clientId, 'naïve+secret%2F¤', 'latin1'));
    expectInvalidClient(wrong);
    expect(wrong.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  it('an id holding a colon authenticates form-encoded in Basic (%3A, RFC 6749 §2.3.1) and in the body; sent raw, the id ends at its first colon (RFC 7617 §2)', async () => {
    const clientId = 'tenant:partner';
    const clientSecret = 'colon:secret';
    await t.store.clients.createClient!(buildClientRecord({ name: 'Colon partner', flow: 'client_credentials', clientId }, hashSecret(clientSecret)));
    const cc = { grant_type: 'client_credentials' };
    const encoded = await token().set('Authorization', basic({ clientId, clientSecret })).send(cc);
    expect(encoded.status, JSON.stringify(encoded.body)).toBe(200);
    expect(Buffer.from(basic({ clientId, clientSecret }).slice(6), 'base64').toString()).toBe('tenant%3Apartner:colon%3Asecret');
    expect((await token().send({ ...cc, client_id: clientId, client_secret: clientSecret })).status, 'client_secret_post').toBe(200);
    // Raw, the header names the integration "tenant" with the secret "partner:colon:secret": no such integration.
    const raw = await token().set('Authorization', `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`).send(cc);
    expectInvalidClient(raw);
  });

  it('an unknown client_id outside VSCHAR (controls, DEL, non-ASCII, a lone surrogate) is 401 invalid_client, in the body or in Basic, raw or form-encoded', async () => {
    for (const clientId of ['tab\tid', 'del\u007fid', 'nul\u0000id', 'c1\u0085id', 'café-unknown', 'nbsp\u00a0id', 'emoji-\u{1F600}', 'lone-\uD800']) {
      const label = JSON.stringify(clientId);
      const posted = await token().send(new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'x' }).toString());
      expectInvalidClient(posted);
      // A lone surrogate has no UTF-8, so no form-encoding (encodeURIComponent throws): raw only.
      if (!clientId.startsWith('lone-')) expectInvalidClient(await token().set('Authorization', basic({ clientId, clientSecret: 'x' })).send({ grant_type: 'client_credentials' }));
      const raw = await token().set('Authorization', `Basic ${Buffer.from(`${clientId}:x`).toString('base64')}`).send({ grant_type: 'client_credentials' });
      expect(raw.status, label).toBe(401);
      expect(raw.body.error, label).toBe('invalid_client');
    }
  });

  it('a disabled integration and a wrong secret take the same work when the header has two readings: both are tried', async () => {
    const inner = createMemoryStore();
    let lookups = 0;
    const store = { ...inner, clients: { ...inner.clients, findClient: (id: string) => { lookups += 1; return inner.clients.findClient(id); } } };
    const app = (await createTestApp({}, store)).app;
    const secret = 'disabled+partner/secret';
    await inner.clients.createClient(buildClientRecord({ name: 'Disabled partner', flow: 'client_credentials', clientId: 'off-1' }, hashSecret(secret)));
    await inner.clients.updateClient('off-1', { disabled: true });
    // Form-encoded (RFC 6749 §2.3.1), so each header also has a reading as sent: the right secret's first reading
    // finds the integration disabled, a wrong one's finds a wrong secret; either way the second reading runs too.
    const lookupsFor = async (presented: string): Promise<number> => {
      lookups = 0;
      const res = await request(app).post('/oauth2/token').type('form')
        .set('Authorization', basic({ clientId: 'off-1', clientSecret: presented })).send({ grant_type: 'client_credentials' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
      return lookups;
    };
    expect(await lookupsFor(secret)).toBe(await lookupsFor('wrong+partner/secret'));
  });

  it('refuses a client_secret in the body next to Basic: one authentication method per request (RFC 6749 §2.3)', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).send({ ...cc(), client_secret: t.credentialsClient.clientSecret });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('refuses a body client_id that differs from the Basic one (DESIGN §5)', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).send({ grant_type: 'client_credentials', client_id: t.codeClient.clientId });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('accepts a request without client_id in the body when Basic identifies the client (DESIGN §5)', async () => {
    const res = await token().set('Authorization', basic(t.credentialsClient)).send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
  });

  it('refuses a disabled integration with invalid_client', async () => {
    const { registerClient } = await import('../../src/clients/register-client.js');
    const { disableClient } = await import('../../src/clients/disable-client.js');
    const { client, clientSecret } = await registerClient(t.store, { name: 'Old', flow: 'client_credentials' });
    await disableClient(t.store, client.clientId);
    expectInvalidClient(await token().set('Authorization', basic({ clientId: client.clientId, clientSecret })).send({ grant_type: 'client_credentials' }));
  });

  it('answers unauthorized_client when the integration\'s flow does not allow the grant (SPEC §5.5)', async () => {
    const codeAsCc = await token().set('Authorization', basic(t.codeClient)).send({ grant_type: 'client_credentials' });
    expect(codeAsCc.status).toBe(400);
    expect(codeAsCc.body.error).toBe('unauthorized_client');
    const ccAsRefresh = await token().set('Authorization', basic(t.credentialsClient)).send({ grant_type: 'refresh_token', refresh_token: 'x' });
    expect(ccAsRefresh.body.error).toBe('unauthorized_client');
    const ccAsCode = await token().set('Authorization', basic(t.credentialsClient)).send({ grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://x' });
    expect(ccAsCode.body.error).toBe('unauthorized_client');
  });
});
