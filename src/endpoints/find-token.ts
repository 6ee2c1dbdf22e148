// Finds a presented token among access and refresh tokens, trying the client's hint first.
import type { Store, TokenRecord } from '../stores/contract.js';
import { hashToken } from '../crypto/hash-token.js';

/** A token found by its value, and which kind it is. */
export interface FoundToken {
  readonly kind: 'access_token' | 'refresh_token';
  readonly record: TokenRecord;
}

/**
 * Looks the token up by its hash. The hint only orders the search: "If the server is unable to locate the
 * token using the given hint, it MUST extend its search across all of its supported token types."
 * `visible`, when given, says which records the caller may be told about: a record it refuses does not end the
 * search, so that such a token costs the store lookups of an unknown one and its answer (RFC 7662 §2.2's bare
 * `{"active":false}`) does not come back a store round trip sooner. A record the caller may see ends it at once:
 * the answer tells of that token anyway. The refused record is still returned, last, for the caller to refuse.
 * @see RFC 7009 §2.1, RFC 7662 §2.1, §2.2, §4 (an inactive token's answer gives nothing away).
 */
export async function findPresentedToken(
  store: Store, token: string, hint: string | undefined, visible?: (record: TokenRecord) => boolean,
): Promise<FoundToken | null> {
  const hash = hashToken(token);
  const order: FoundToken['kind'][] = hint === 'refresh_token' ? ['refresh_token', 'access_token'] : ['access_token', 'refresh_token'];
  let hidden: FoundToken | null = null;
  for (const kind of order) {
    const record = kind === 'access_token' ? await store.tokens.findAccessToken(hash) : await store.tokens.findRefreshToken(hash);
    if (!record) continue;
    if (!visible || visible(record)) return { kind, record };
    hidden ??= { kind, record };
  }
  return hidden;
}
