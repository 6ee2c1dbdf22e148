// Ids for the exact-id rules: random ids with letters in both cases, their near-twins, and the longest ids.
import { randomBytes } from 'node:crypto';
import { STORE_POLICY } from '../stores/store-policy.js';

/**
 * A fresh id that starts with letters of both cases, so that swapping its case always gives another id.
 * @see RFC 6749 §2.2 (client identifier), Appendix A.1 (VSCHAR).
 */
export function freshId(prefix = 'Id'): string {
  return `${prefix}-${randomBytes(12).toString('base64url')}`;
}

/** The id with every letter's case swapped: `'Ab-c'` becomes `'aB-C'`. @see RFC 3986 §6.2.1 (ids compare as strings) */
export function swapCase(id: string): string {
  return [...id].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
}

/**
 * The ids a case-insensitive or space-padding collation (MySQL and MariaDB defaults, SQL Server's) takes
 * for `id`: the same id with its case swapped, and with a trailing space. The contract keeps them apart.
 * @see RFC 6749 §2.2 (client identifiers are unique), RFC 3986 §6.2.1 (simple string comparison).
 */
export function nearTwins(id: string): readonly [string, string] {
  return [swapCase(id), `${id} `];
}

/**
 * A fresh id of exactly `STORE_POLICY.maxIdLength` characters: the longest a store must keep.
 * @see RFC 6749 Appendix A.1 (client_id has no length limit: the package sets one).
 */
export function longestId(prefix = 'Long'): string {
  return freshId(prefix).padEnd(STORE_POLICY.maxIdLength, 'xY');
}

/**
 * A fresh user id outside ASCII (accents, CJK, an emoji outside the BMP) of `STORE_POLICY.maxIdLength`
 * UTF-16 code units: user ids come from the host's user base, not from the package.
 * @see RFC 6749 §1.1 (the resource owner is the host's user).
 */
export function nonAsciiUserId(): string {
  return `Zoë Ørsted 名前 😀 ${randomBytes(6).toString('hex')}`.padEnd(STORE_POLICY.maxIdLength, 'é');
}

/** Characters a store might join two ids with into one key (`${clientId}:${userId}`). */
const SEPARATORS = [':', '|', '/', '#', ',', '.', ' ', '-', '_', '~'] as const;

/**
 * Two (first, second) id pairs per separator that a key made by joining them with it cannot tell apart:
 * `('X:a', 'b')` and `('X', 'a:b')` both join to `'X:a:b'`. A store must key such pairs so they stay two records
 * (separate columns, a length prefix, JSON), or one user's revocation or consent reaches another's.
 * @see RFC 6749 §2.2 (client identifiers are unique strings), RFC 7009 §2.1 (revoke only what is named).
 */
export function splitPairs(): ReadonlyArray<{ readonly separator: string; readonly one: readonly [string, string]; readonly other: readonly [string, string] }> {
  return SEPARATORS.map((separator) => {
    const [head, middle, tail] = [freshId('Head'), freshId('Mid'), freshId('Tail')];
    return { separator, one: [`${head}${separator}${middle}`, tail], other: [head, `${middle}${separator}${tail}`] };
  });
}

/**
 * A hash as the router stores one (a SHA-256 digest, 43 base64url characters) and its last-character twin: the
 * same digest but its last character. A column or key cut short of the whole digest (a `VARCHAR(40)`, a prefix
 * index used as the key) takes the two for one, and one token's revocation, or a lookup, reaches the other.
 * @see RFC 6749 §10.10 (credentials guessable only by chance), RFC 6819 §5.1.4.1.3 (tokens stored as hashes).
 */
export function lastCharacterTwins(): readonly [string, string] {
  const digest = randomBytes(32).toString('base64url');
  return [digest, `${digest.slice(0, -1)}${digest.endsWith('A') ? 'B' : 'A'}`];
}
