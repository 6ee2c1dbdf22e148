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
 * @see RFC 7009 §2.1, RFC 7662 §2.1.
 */
export async function findPresentedToken(store: Store, token: string, hint: string | undefined): Promise<FoundToken | null> {
  const hash = hashToken(token);
  const order: FoundToken['kind'][] = hint === 'refresh_token' ? ['refresh_token', 'access_token'] : ['access_token', 'refresh_token'];
  for (const kind of order) {
    const record = kind === 'access_token' ? await store.tokens.findAccessToken(hash) : await store.tokens.findRefreshToken(hash);
    if (record) return { kind, record };
  }
  return null;
}
