// The `jwt` option (RFC 9068 access tokens): its types and start-up validation, host keys parsed once.
import type { KeyObject } from 'node:crypto';
import { parseSigningKey, type SigningKey } from './signing-key.js';

/** Settings of JWT access tokens (RFC 9068). */
export interface JwtOptions {
  /**
   * Private keys (KeyObject or PEM): EC P-256 (ES256), RSA ≥ 2048 bits (RS256) or Ed25519 (EdDSA). The first
   * signs; the others are only published and verify, so the host rotates by adding a new key second, moving it
   * first once every instance and JWKS cache has it (a few minutes), and dropping the old one `accessTokenTtl` later. Omitted: the package generates keys and keeps them in
   * `store.keys` (see `rotateSigningKey`).
   */
  readonly signingKeys?: readonly (KeyObject | string)[];
  /** The `aud` claim, and what requireBearer requires in it (RFC 9068 §2.2, §4). Default: `issuer`. */
  readonly audience?: string;
  /**
   * Make `requireBearer` refuse revoked JWTs too: a JWT is accepted only while the store still holds its
   * record, as an opaque token is. With a store that has a revocation feed the answer comes from the exact
   * in-process cache (no store round trip for a token already seen; a revocation through any path is honoured
   * on the next request, or within the feed's latency across instances); without one, every request is looked
   * up. The price: like opaque tokens, JWTs are then refused (503) while the store is down. Default false: a
   * JWT is verified by signature and claims alone and stays usable until it expires. @see RFC 7009 §2.1, RFC 9068 §4.
   */
  readonly checkRevocation?: boolean;
}

/** JWT settings after validation, host keys parsed once, here: `oauth.options.jwt`. @see RFC 9068 §2.2 (`aud`), §4 (keys). */
export interface ResolvedJwtOptions {
  readonly audience: string;
  /** Empty when the host supplied none (keys then come from `store.keys`). */
  readonly signingKeys: readonly SigningKey[];
  readonly checkRevocation: boolean;
}

/**
 * Validates the `jwt` option and parses the host's keys once, at start-up (DESIGN §3a: no PEM parsing and
 * no bad key discovered at the first request). `fail` raises the router's OptionsError naming the key
 * (passed in, so this module does not import options.ts, which imports it).
 * @see RFC 9068 §2.2 (`aud`), §4 (keys), RFC 7518 §3.1 (algorithms).
 */
export function resolveJwtOptions(value: unknown, mainIssuer: string, fail: (key: string, problem: string) => never): ResolvedJwtOptions {
  if (value === undefined) return { audience: mainIssuer, signingKeys: [], checkRevocation: false };
  if (typeof value !== 'object' || value === null) fail('jwt', 'must be { signingKeys?, audience?, checkRevocation? }');
  for (const key of Object.keys(value)) {
    if (key !== 'signingKeys' && key !== 'audience' && key !== 'checkRevocation') fail(`jwt.${key}`, 'is not an option');
  }
  const { signingKeys = [], audience = mainIssuer, checkRevocation = false } = value as JwtOptions;
  if (typeof checkRevocation !== 'boolean') fail('jwt.checkRevocation', 'must be a boolean');
  if (typeof audience !== 'string' || audience.length === 0) fail('jwt.audience', 'must be a non-empty string');
  if (!Array.isArray(signingKeys)) fail('jwt.signingKeys', 'must be a list of private keys (KeyObject or PEM)');
  const parsed = signingKeys.map((key: unknown, i) => {
    try {
      return parseSigningKey(key, i > 0);
    } catch (err) {
      fail(`jwt.signingKeys[${i}]`, (err as Error).message);
    }
  });
  const kids = new Set(parsed.map((key) => key.kid));
  if (kids.size !== parsed.length) fail('jwt.signingKeys', 'lists the same key twice');
  return { audience, signingKeys: parsed, checkRevocation };
}

