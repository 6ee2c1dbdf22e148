// A signing key parsed once: its algorithm, RFC 7638 kid, node:crypto key objects and public JWK.
import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from '../stores/contract.js';
import { jwkThumbprint } from './jwk-thumbprint.js';

/** A public key as published in the JWKS (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2). */
export interface PublicJwk {
  readonly kty: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
  readonly n?: string;
  readonly e?: string;
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly use: 'sig';
}

/**
 * A key ready to sign and verify: parsed once, at start-up or when first read from the store (`oauth.options.jwt.signingKeys`
 * holds the host's). @see RFC 7515 §4.1.4 (`kid`), RFC 7638 (the kid is the key's thumbprint), RFC 8725 §3.1 (one algorithm per key).
 */
export interface SigningKey {
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  /** `null` when only the public key was supplied: published and verifying, never signing. */
  readonly privateKey: KeyObject | null;
  readonly publicKey: KeyObject;
  readonly publicJwk: PublicJwk;
}

const MIN_RSA_BITS = 2048;

/**
 * The one JWS algorithm a key may be used with: EC P-256 → ES256, RSA ≥ 2048 bits → RS256, Ed25519 → EdDSA.
 * Binding the algorithm to the key is what stops algorithm substitution (RFC 8725 §3.1).
 * @throws TypeError naming what is wrong with the key.
 * @see RFC 7518 §3.1, §3.3 ("A key of size 2048 bits or larger MUST be used"), RFC 8037 §3.1.
 */
export function algorithmOf(key: KeyObject): SigningAlgorithm {
  if (key.type === 'secret') throw new TypeError('is a symmetric key: only EC P-256, RSA ≥ 2048 and Ed25519 keys sign (HS* is refused)');
  switch (key.asymmetricKeyType) {
    case 'ec':
      if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new TypeError('is an EC key on a curve other than P-256');
      return 'ES256';
    case 'rsa':
      if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) throw new TypeError(`is an RSA key shorter than ${MIN_RSA_BITS} bits`);
      return 'RS256';
    case 'ed25519':
      return 'EdDSA';
    default:
      throw new TypeError(`is a ${String(key.asymmetricKeyType)} key: only EC P-256, RSA ≥ 2048 and Ed25519 are supported`);
  }
}

/**
 * Builds a SigningKey from a private (or, for verification only, public) key object.
 * @throws TypeError naming what is wrong with the key.
 * @see RFC 7517 §4 (JWK members), RFC 7638 (kid).
 */
export function toSigningKey(key: KeyObject): SigningKey {
  const algorithm = algorithmOf(key);
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  const jwk = publicKey.export({ format: 'jwk' });
  const kid = jwkThumbprint(jwk);
  const members = algorithm === 'RS256'
    ? { kty: 'RSA', n: jwk.n!, e: jwk.e! }
    : algorithm === 'ES256'
      ? { kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y! }
      : { kty: 'OKP', crv: 'Ed25519', x: jwk.x! };
  return {
    kid,
    algorithm,
    privateKey: key.type === 'private' ? key : null,
    publicKey,
    publicJwk: { ...members, kid, alg: algorithm, use: 'sig' },
  };
}

/**
 * Parses a host-supplied key: a KeyObject or a PEM string. A public key is accepted only where `allowPublic`
 * (keys after the first, kept to verify tokens signed before a rotation).
 * @throws TypeError naming what is wrong with the key.
 * @see RFC 9068 §4 (the AS signs with its keys), RFC 7517 §4.
 */
export function parseSigningKey(input: unknown, allowPublic: boolean): SigningKey {
  let key: KeyObject;
  if (input instanceof KeyObject) {
    key = input;
  } else if (typeof input === 'string') {
    try {
      key = /-----BEGIN [A-Z ]*PUBLIC KEY-----/.test(input) ? createPublicKey(input) : createPrivateKey(input);
    } catch {
      throw new TypeError('is not a PEM key that node:crypto can read');
    }
  } else {
    throw new TypeError('must be a KeyObject or a PEM string');
  }
  if (key.type === 'public' && !allowPublic) throw new TypeError('is a public key: the first key signs, so it must be a private key');
  return toSigningKey(key);
}
