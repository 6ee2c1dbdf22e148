// RFC 6819 §4.3.5: on a store that keeps integration copies (PostgreSQL, Redis), a wrong imported (scrypt)
// secret costs one slow check, not one against the copy and another against the record looked up after it.
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';
import { hashSecretScrypt } from '../../src/crypto/scrypt-secret.js';

const original = crypto.scrypt;
let scrypts = 0;

beforeAll(() => {
  // The package's `import { scrypt } from 'node:crypto'` is a live binding of the builtin's export.
  crypto.scrypt = ((...args: Parameters<typeof original>) => {
    scrypts += 1;
    return (original as (...a: unknown[]) => void)(...args);
  }) as typeof original;
  syncBuiltinESMExports();
});

afterAll(() => {
  crypto.scrypt = original;
  syncBuiltinESMExports();
});

const withCopies = builtInStores('slow_secret_copies').filter(([label]) => label === 'PostgreSQL' || label === 'Redis');

describe.each(withCopies)('%s: a wrong imported secret is checked once, not against the copy and again', (_label, available, open) => {
  let opened: OpenedStore;
  let t: TestApp;
  let imported: TestClient;

  beforeAll(async () => {
    if (!available) return;
    opened = await open();
    t = await createTestApp({ clientAuthRateLimit: false }, opened.store);
    imported = { clientId: t.credentialsClient.clientId, clientSecret: 'imported-partner-secret-2019' };
    await t.store.clients.updateClient!(imported.clientId, { clientSecretHash: await hashSecretScrypt(imported.clientSecret) });
  });

  afterAll(async () => {
    await opened?.dispose();
  });

  it.skipIf(!available)('one scrypt per wrong secret once the copy is held; the right secret still gets a token', async () => {
    expect(opened.store.clientCopies, 'this store keeps copies').toBeDefined();
    const token = () => request(t.app).post('/oauth2/token').type('form').send({ grant_type: 'client_credentials' });
    // The first request reads the integration, which makes the copy.
    expect((await token().set('Authorization', basic(imported))).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const before = scrypts;
      const res = await token().set('Authorization', basic({ clientId: imported.clientId, clientSecret: `guess-${i}` }));
      expect(res.status).toBe(401);
      expect(scrypts - before, `wrong secret ${i}`).toBe(1);
    }
    // A rotated secret is judged against the record looked up, not the copy's verdict.
    await t.store.clients.updateClient!(imported.clientId, { clientSecretHash: await hashSecretScrypt('rotated-imported-secret') });
    expect((await token().set('Authorization', basic({ clientId: imported.clientId, clientSecret: 'rotated-imported-secret' }))).status).toBe(200);
  });
});
