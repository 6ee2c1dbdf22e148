// Helpers for the revocation and introspection tests: obtain tokens, call /revoke, /introspect and the API.
import request from 'supertest';
import type express from 'express';
import { expect } from 'vitest';
import { REDIRECT_URI, basic, type TestClient } from './app.js';
import { obtainCode } from './browser-flow.js';

/** The tokens of one authorization_code grant. */
export interface CodeTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly scope?: string;
}

/** A client_credentials access token for `client` at `prefix` ('' or '/legacy'). */
export async function clientCredentialsToken(app: express.Express, client: TestClient, prefix = '', scope?: string): Promise<string> {
  const res = await request(app).post(`${prefix}/oauth2/token`).set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token as string;
}

/** Runs the browser part and the code exchange; returns an access and a refresh token of one grant. */
export async function codeTokens(app: express.Express, client: TestClient, prefix = ''): Promise<CodeTokens> {
  const code = await obtainCode(app, client, { prefix });
  const res = await request(app).post(`${prefix}/oauth2/token`).set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { accessToken: res.body.access_token as string, refreshToken: res.body.refresh_token as string };
}

/** POST {prefix}/oauth2/token with grant_type=refresh_token. */
export function refresh(app: express.Express, client: TestClient, refreshToken: string, prefix = ''): request.Test {
  return request(app).post(`${prefix}/oauth2/token`).set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** POST {prefix}/oauth2/{endpoint} with a form; `auth` is a client (Basic), a raw header value, or null (none). */
function clientRequest(
  app: express.Express, endpoint: 'revoke' | 'introspect', auth: TestClient | string | null, form: Record<string, string>, prefix: string,
): request.Test {
  const req = request(app).post(`${prefix}/oauth2/${endpoint}`).type('form');
  if (auth !== null) req.set('Authorization', typeof auth === 'string' ? auth : basic(auth));
  return req.send(form);
}

/** POST {prefix}/oauth2/revoke (RFC 7009 §2.1). */
export function revoke(app: express.Express, auth: TestClient | string | null, form: Record<string, string>, prefix = ''): request.Test {
  return clientRequest(app, 'revoke', auth, form, prefix);
}

/** POST {prefix}/oauth2/introspect (RFC 7662 §2.1). */
export function introspect(app: express.Express, auth: TestClient | string | null, form: Record<string, string>, prefix = ''): request.Test {
  return clientRequest(app, 'introspect', auth, form, prefix);
}

/** GET /api/v1/me (behind requireBearer) with a bearer token; resolves the status. */
export async function apiStatus(app: express.Express, accessToken: string): Promise<number> {
  return (await request(app).get('/api/v1/me').set('Authorization', `Bearer ${accessToken}`)).status;
}
