// RFC 6749 §2.3.1 client passwords imported as bcrypt: bcrypt reads only a secret's first 72 bytes, so no longer secret may pass.
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import bcrypt from 'bcryptjs';
import { basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';

/** A client_credentials integration whose secret is kept as the bcrypt hash of `original` (an import's `client_secret_hash`). */
async function importedWithBcrypt(t: TestApp, original: string): Promise<string> {
  const { clientId } = t.credentialsClient;
  await t.store.clients.updateClient!(clientId, { clientSecretHash: bcrypt.hashSync(original, 4) });
  return clientId;
}

function viaBasic(t: TestApp, client: TestClient): request.Test {
  return request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(client)).send({ grant_type: 'client_credentials' });
}

function viaPost(t: TestApp, client: TestClient): request.Test {
  return request(t.app).post('/oauth2/token').type('form')
    .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });
}

describe('RFC 6749 §2.3.1: a secret kept as bcrypt authenticates only as itself, though bcrypt reads 72 bytes', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp({ clientAuthRateLimit: false }); });

  it('accepts the 72-byte secret and refuses it with anything after it (73 bytes and more, ASCII or not)', async () => {
    const secret = 'k'.repeat(72);
    const clientId = await importedWithBcrypt(t, secret);
    expect((await viaBasic(t, { clientId, clientSecret: secret })).status).toBe(200);
    expect((await viaPost(t, { clientId, clientSecret: secret })).status).toBe(200);
    for (const longer of [`${secret}x`, `${secret}é`, `${secret}${'z'.repeat(200)}`]) {
      const res = await viaBasic(t, { clientId, clientSecret: longer });
      expect(res.status, longer.slice(72)).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect((await viaPost(t, { clientId, clientSecret: longer })).status).toBe(401);
    }
  });

  it('counts bytes, not characters: 36 × é is 72 bytes, and one character more is refused', async () => {
    const secret = 'é'.repeat(36);
    const clientId = await importedWithBcrypt(t, secret);
    expect((await viaBasic(t, { clientId, clientSecret: secret })).status).toBe(200);
    // ISO-8859-1 in Basic (requests, Authlib) reads as the same characters, so the same rule holds.
    const latin1 = `Basic ${Buffer.from(`${clientId}:${secret}X`, 'latin1').toString('base64')}`;
    expect((await request(t.app).post('/oauth2/token').type('form').set('Authorization', latin1).send({ grant_type: 'client_credentials' })).status).toBe(401);
    expect((await viaBasic(t, { clientId, clientSecret: `${secret}X` })).status).toBe(401);
    expect((await viaPost(t, { clientId, clientSecret: `${secret}X` })).status).toBe(401);
  });

  it('refuses every longer secret against a hash made of one: it holds only the first 72 bytes, which alone match it', async () => {
    const secret = `${'B'.repeat(72)}secret-tail-1234`;
    const clientId = await importedWithBcrypt(t, secret);
    for (const presented of [secret, `${'B'.repeat(72)}WRONG`]) {
      expect((await viaBasic(t, { clientId, clientSecret: presented })).status, presented.slice(72)).toBe(401);
    }
    // bcrypt(secret) is bcrypt(its first 72 bytes): no check can tell them apart, so the partner sends those.
    expect((await viaBasic(t, { clientId, clientSecret: 'B'.repeat(72) })).status).toBe(200);
  });
});
