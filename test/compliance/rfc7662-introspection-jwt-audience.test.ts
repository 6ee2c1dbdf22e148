// RFC 7662 §2.2 with RFC 9068 §4: a JWT whose aud lacks the jwt.audience configured now is inactive, as requireBearer refuses it.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import express from 'express';
import { createTestApp, createTestRouter, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken, introspect } from '../helpers/token-requests.js';
import { callApi, decodeJwt } from '../helpers/jwt.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { Store } from '../../src/stores/contract.js';
import { hashToken } from '../../src/crypto/hash-token.js';

const JWT = { accessTokenFormat: 'jwt', accessTokenTtl: 3600 } as const;
const OLD = 'https://old-api.example';
const NEW = 'https://api.example';

/** The same deployment restarted on `store` with `options`: its API and its introspection endpoint. */
function restarted(store: Store, options: Parameters<typeof createTestRouter>[1]): express.Express {
  const oauth = createTestRouter(store, options);
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
  return app;
}

async function introspected(app: express.Express, t: TestApp, token: string): Promise<string> {
  const res = await introspect(app, t.credentialsClient, { token });
  expect(res.status).toBe(200);
  return res.text;
}

describe.each([
  ['store-kept keys', {}],
  ['host keys', { signingKeys: [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey] }],
] as const)('RFC 7662 §2.2, RFC 9068 §4 (%s): a JWT issued for an audience no longer configured', (_label, keys) => {
  for (const checkRevocation of [false, true]) {
    it(`is inactive at introspection exactly as requireBearer refuses it (jwt.checkRevocation ${checkRevocation})`, async () => {
      const store = createMemoryStore({ sweepIntervalSeconds: 0 });
      const t = await createTestApp({ ...JWT, jwt: { ...keys, audience: OLD, checkRevocation } }, store);
      const old = await clientCredentialsToken(t.app, t.credentialsClient);
      expect(decodeJwt(old).claims.aud).toBe(OLD);
      expect(JSON.parse(await introspected(t.app, t, old))).toMatchObject({ active: true });
      const app = restarted(store, { ...JWT, jwt: { ...keys, audience: NEW, checkRevocation } });
      // A genuine token of ours, its key live: only its audience is not the one configured now.
      expect(await store.tokens.findAccessToken(hashToken(old))).not.toBeNull();
      expect((await callApi(app, old)).status).toBe(401);
      expect(await introspected(app, t, old)).toBe('{"active":false}');
      const fresh = await clientCredentialsToken(app, t.credentialsClient);
      expect(decodeJwt(fresh).claims.aud).toBe(NEW);
      expect((await callApi(app, fresh)).status).toBe(200);
      expect(JSON.parse(await introspected(app, t, fresh))).toMatchObject({ active: true, token_type: 'Bearer' });
    });
  }
});
