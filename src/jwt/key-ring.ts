// The signing keys of one router: which key signs, which keys verify and are published in the JWKS.
import type { Store } from '../stores/contract.js';
import type { RotatedSigningKey, RotateSigningKeyOptions } from '../types.js';
import { OptionsError, type ResolvedOptions } from '../options.js';
import type { SigningKey } from './signing-key.js';
import { createStoreKeyRing } from './store-key-ring.js';

/** The keys of JWT access tokens, as the issuer, the verifier and the JWKS endpoint see them. */
export interface KeyRing {
  /** The key that signs new access tokens. */
  signer(): Promise<SigningKey>;
  /** The published key of `kid`, or `null`; an unknown kid may trigger a (rate-limited) reload. */
  findKey(kid: string): Promise<SigningKey | null>;
  /**
   * Whether the key of `kid`, which `findKey` found before, still verifies, by the keys as last loaded (no store read
   * waited for): the verifier's memory of tokens it verified asks it on each hit, so a key that retires takes its
   * tokens with it there too. @see RFC 9068 §4.
   */
  stillVerifies(kid: string): boolean;
  /** Every key a token may currently be signed with: the JWKS. */
  publishedKeys(): Promise<readonly SigningKey[]>;
  /**
   * Publishes a new ES256 key, which signs once every instance and cache has it; older keys keep verifying until
   * retired. With `leaked`, the new key signs at once and every older key's record is deleted (`deleted`).
   */
  rotate(options?: RotateSigningKeyOptions): Promise<RotatedSigningKey>;
}

/** Host keys: the first signs, all verify; the host rotates by changing the list (RFC 9068 §4). */
function createHostKeyRing(keys: readonly SigningKey[]): KeyRing {
  const signer = keys[0]!;
  const byKid = new Map(keys.map((key) => [key.kid, key]));
  return {
    signer: async () => signer,
    findKey: async (kid) => byKid.get(kid) ?? null,
    // The host's keys change only with a restart, which empties every memory of verified tokens.
    stillVerifies: (kid) => byKid.has(kid),
    publishedKeys: async () => keys,
    rotate: async (): Promise<never> => {
      throw new Error('express-oauth-router: jwt.signingKeys are supplied by the host; rotate by adding the new key second in jwt.signingKeys, then moving it first');
    },
  };
}

/**
 * Chooses the key source for `accessTokenFormat: 'jwt'`: the host's `jwt.signingKeys` when given,
 * otherwise keys the package generates and keeps in `store.keys`.
 * @throws OptionsError naming `jwt.signingKeys` when neither is available; TypeError for a broken `store.keys`.
 * @see RFC 9068 §4 (validation with the AS's published keys), RFC 8414 §2 (`jwks_uri`).
 */
export function createKeyRing(store: Store, options: ResolvedOptions): KeyRing {
  if (options.jwt.signingKeys.length > 0) return createHostKeyRing(options.jwt.signingKeys);
  const keys = store.keys;
  if (keys === undefined) {
    throw new OptionsError('jwt.signingKeys', 'is required with accessTokenFormat "jwt" when the store has no signing-key part (store.keys)');
  }
  for (const method of ['listSigningKeys', 'saveSigningKey'] as const) {
    if (typeof keys[method] !== 'function') {
      throw new TypeError(`express-oauth-router: store.keys.${method} must be a function (see SigningKeyStore in stores/contract)`);
    }
  }
  return createStoreKeyRing(keys, options.accessTokenTtl, options.logger);
}

/** Keys that verify nothing: an opaque router given no `jwt.signingKeys` on a store without `store.keys`. */
const NO_KEYS: KeyRing = {
  signer: async (): Promise<never> => {
    throw new Error('express-oauth-router: an opaque router signs no JWT');
  },
  findKey: async () => null,
  stillVerifies: () => false,
  publishedKeys: async () => [],
  rotate: async (): Promise<never> => {
    throw new Error('express-oauth-router: an opaque router rotates no key');
  },
};

/**
 * The keys an opaque router checks a JWT issued before the switch against (its record is what it honours): the host's
 * `jwt.signingKeys` when still given, as a JWT router would, otherwise the store's, never generating one. A JWT is
 * honoured only while one of them verifies its key, as a JWT router would: one of a key replaced as leaked (RFC 9700
 * §4.14), whose record the replacement leaves, or deleted by hand, or dropped from `jwt.signingKeys`, is refused, and
 * with no key at all (a store holding none, or without `store.keys`) every JWT is. A store's keys deleted to the last
 * one by hand are not told apart from a store never given one, so an empty store is no proof its JWTs were the host's.
 * @see RFC 9068 §4.
 */
export function createVerifyingKeyRing(store: Store, options: ResolvedOptions): KeyRing {
  if (options.jwt.signingKeys.length > 0) return createHostKeyRing(options.jwt.signingKeys);
  if (typeof store.keys?.listSigningKeys !== 'function') return NO_KEYS;
  return createStoreKeyRing(store.keys, options.accessTokenTtl, options.logger, { verifyOnly: true });
}
