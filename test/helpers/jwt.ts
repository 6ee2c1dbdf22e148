// Helpers for the RFC 9068 tests: decode a JWT, fetch the JWKS, verify independently, forge tokens.
import { createHmac, createPublicKey, sign, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import request from 'supertest';
import type express from 'express';
import { expect } from 'vitest';

/** A compact JWS, split and decoded. */
export interface DecodedJwt {
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
  readonly signingInput: string;
  readonly signature: Buffer;
}

const json = (segment: string): Record<string, unknown> => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
const segment = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/** Splits and decodes a compact JWS (no verification). */
export function decodeJwt(token: string): DecodedJwt {
  const parts = token.split('.');
  expect(parts).toHaveLength(3);
  return { header: json(parts[0]!), claims: json(parts[1]!), signingInput: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2]!, 'base64url') };
}

/** GET {prefix}/oauth2/jwks over HTTP; asserts the JWK Set shape. */
export async function fetchJwks(app: express.Express, prefix = ''): Promise<JsonWebKey[]> {
  const res = await request(app).get(`${prefix}/oauth2/jwks`);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Array.isArray(res.body.keys)).toBe(true);
  return res.body.keys as JsonWebKey[];
}

/** Verifies a token's signature with node:crypto against a JWK Set, as a resource server elsewhere would. */
export function verifyWithJwks(token: string, jwks: readonly JsonWebKey[]): boolean {
  const { header, signingInput, signature } = decodeJwt(token);
  const jwk = jwks.find((key) => key.kid === header.kid);
  if (!jwk || jwk.alg !== header.alg) return false;
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  const data = Buffer.from(signingInput);
  switch (header.alg) {
    case 'ES256': return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'RS256': return verify('sha256', data, key, signature);
    case 'EdDSA': return verify(null, data, key, signature);
    default: return false;
  }
}

const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** An ES256 signature with S replaced by n − S: the twin that verifies under plain ECDSA (malleability). */
export function otherS(signature: Buffer): Buffer {
  const s = BigInt(`0x${signature.subarray(32).toString('hex')}`);
  return Buffer.concat([signature.subarray(0, 32), Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex')]);
}

/** Whether an ES256 signature is in low-S form (S ≤ n/2). */
export function isLowS(signature: Buffer): boolean {
  return BigInt(`0x${signature.subarray(32).toString('hex')}`) <= P256_N >> 1n;
}

/** Signs arbitrary header and claims with `key` (ES256/RS256/EdDSA by key type, or HS256 with a Buffer). ES256
 * signatures come out low-S, as a correct signer makes them; `otherS` gives the high-S twin. */
export function forgeJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject | Buffer): string {
  const input = `${segment(header)}.${segment(claims)}`;
  let signature: Buffer;
  if (Buffer.isBuffer(key)) signature = createHmac('sha256', key).update(input).digest();
  else if (key.asymmetricKeyType === 'ec') {
    signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
    if (!isLowS(signature)) signature = otherS(signature);
  }
  else if (key.asymmetricKeyType === 'rsa') signature = sign('sha256', Buffer.from(input), key);
  else signature = sign(null, Buffer.from(input), key);
  return `${input}.${signature.toString('base64url')}`;
}

/** Replaces the payload of a token, keeping its header and signature (a tampered token). */
export function tamperClaims(token: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  return `${header}.${segment({ ...json(payload), ...change })}.${signature}`;
}

/** GET /api/v1/me with a bearer token. */
export function callApi(app: express.Express, token: string): request.Test {
  return request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
}
