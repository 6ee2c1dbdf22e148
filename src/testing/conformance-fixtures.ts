// Record builders and clocks for the Store conformance suite: fresh random ids, ms-precision dates.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createRandomToken } from '../crypto/random-token.js';
import { hashSecret } from '../crypto/hash-secret.js';
import type {
  AuthorizationCodeRecord,
  ConsentRecord,
  OAuthClient,
  SigningKeyRecord,
  Store,
  TokenRecord,
} from '../stores/contract.js';

/**
 * A date `seconds` from now (negative: in the past), at millisecond precision like `Date.now()`.
 * @see RFC 6749 §4.2.2, §5.1 (`expires_in` is relative to issuance).
 */
export function secondsFromNow(seconds: number): Date {
  return new Date(Date.now() + seconds * 1000);
}

/**
 * A moment already past: records expiring then must read as absent, no fake timers needed.
 * @see RFC 6749 §4.1.2 (codes expire), RFC 6750 §3.1 (an expired token is `invalid_token`).
 */
export function justExpired(): Date {
  return secondsFromNow(-1);
}

/**
 * A moment strictly after everything that has happened so far, returned once `Date.now()` has reached it:
 * at least 2 ms after the call, so that a revocation that returned before the call was recorded earlier
 * (`Date.now()` of the store's process) even if the store rounds to the millisecond. Waits by yielding to
 * the event loop until the clock has moved, not by sleeping a fixed time.
 * @see RFC 7009 §2.1 (a revocation takes effect at once, and only on what it overtook).
 */
export async function momentAfterNow(): Promise<Date> {
  const at = Date.now() + 2;
  while (Date.now() < at) await new Promise<void>((resolve) => setImmediate(resolve));
  return new Date(at);
}

/**
 * An integration as `registerClient` would build it, with the secret that only the caller ever sees.
 * @see RFC 6749 §2.3.1 (client password).
 */
export function buildClient(overrides: Partial<OAuthClient> = {}): { client: OAuthClient; secret: string } {
  const secret = createRandomToken();
  const client: OAuthClient = {
    clientId: createRandomToken(),
    clientSecretHash: hashSecret(secret),
    name: 'Conformance integration',
    flow: 'authorization_code',
    redirectUris: ['https://app.example.com/callback', 'http://localhost:8080/cb'],
    allowedScopes: ['envelopes:read', 'envelopes:write'],
    // As registration allows it: PKCE only for an integration that makes authorization requests.
    requirePkce: overrides.flow !== 'client_credentials',
    credentialsIssuedAt: new Date('2020-06-01T12:34:56.789Z'),
    createdAt: secondsFromNow(-60),
    disabled: false,
    ...overrides,
  };
  return { client, secret };
}

/** An unconsumed authorization code, issued a few seconds ago and live for 10 minutes (RFC 6749 §4.1.2). */
export function buildCode(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    codeHash: hashSecret(createRandomToken()),
    grantId: createRandomToken(),
    clientId: createRandomToken(),
    userId: 'user-1',
    redirectUri: 'https://app.example.com/callback',
    scope: ['envelopes:read'],
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    issuer: 'https://auth.example.com',
    issuedAt: secondsFromNow(-5),
    expiresAt: secondsFromNow(600),
    ...overrides,
  };
}

/** An access or refresh token record, live for an hour (RFC 6749 §1.4, §1.5). */
export function buildToken(overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    tokenHash: hashSecret(createRandomToken()),
    grantId: createRandomToken(),
    clientId: createRandomToken(),
    userId: 'user-1',
    scope: ['envelopes:read', 'envelopes:write'],
    issuer: 'https://auth.example.com',
    expiresAt: secondsFromNow(3600),
    ...overrides,
  };
}

/** An access token and a refresh token of one grant, as the token endpoint issues them (RFC 6749 §1.5). */
export function buildTokenPair(overrides: Partial<TokenRecord> = {}): { access: TokenRecord; refresh: TokenRecord } {
  const access = buildToken(overrides);
  const refresh = buildToken({
    ...overrides,
    grantId: access.grantId,
    clientId: access.clientId,
    userId: access.userId,
    expiresAt: overrides.expiresAt ?? secondsFromNow(86_400),
  });
  return { access, refresh };
}

/** A user's consent to an integration (RFC 6749 §4.1.1). */
export function buildConsent(overrides: Partial<ConsentRecord> = {}): ConsentRecord {
  return {
    userId: 'user-1',
    clientId: createRandomToken(),
    scope: ['envelopes:read'],
    grantedAt: secondsFromNow(-30),
    ...overrides,
  };
}

/** A signing-key record with a real P-256 PKCS#8 PEM (a store may check it) and a random kid (RFC 9068 §4). */
export function buildKey(overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid: randomBytes(32).toString('base64url'),
    algorithm: 'ES256',
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    createdAt: secondsFromNow(-60),
    ...overrides,
  };
}

/**
 * `saveTokens` with `authorizedAt` defaulting to now: what a token request that began just now saves.
 * @see RFC 6749 §5.1 (the token response follows the save).
 */
export function saveTokens(
  store: Store,
  access: TokenRecord,
  refresh: TokenRecord | null,
  authorizedAt: Date = new Date(),
): Promise<boolean> {
  return store.tokens.saveTokens(access, refresh, { authorizedAt });
}

/**
 * Whether each token still reads back through the finder of its kind: `true` for found, in argument order.
 * @see RFC 7009 §2.1 (a revoked token is gone), RFC 6750 §3.1.
 */
export async function findable(
  store: Store,
  access: readonly TokenRecord[],
  refresh: readonly TokenRecord[] = [],
): Promise<boolean[]> {
  return Promise.all([
    ...access.map(async (token) => (await store.tokens.findAccessToken(token.tokenHash)) !== null),
    ...refresh.map(async (token) => (await store.tokens.findRefreshToken(token.tokenHash)) !== null),
  ]);
}
