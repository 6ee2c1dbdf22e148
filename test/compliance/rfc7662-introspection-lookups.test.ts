// RFC 7662 §2.2: an inactive answer tells nothing more, not even by the store lookups (and so the time) it took.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken, codeTokens, introspect } from '../helpers/token-requests.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { Store } from '../../src/stores/contract.js';

/** A store that records its token lookups, in order: what the answer's response time is made of. */
function recordLookups(store: Store): { store: Store; lookups: string[] } {
  const lookups: string[] = [];
  const tokens = {
    ...store.tokens,
    findAccessToken: (hash: string) => {
      lookups.push('access');
      return store.tokens.findAccessToken(hash);
    },
    findRefreshToken: (hash: string) => {
      lookups.push('refresh');
      return store.tokens.findRefreshToken(hash);
    },
  };
  return { store: { ...store, tokens }, lookups };
}

describe('RFC 7662 §2.2: {"active":false} for another client\'s token takes the lookups of an unknown token', () => {
  let t: TestApp;
  let lookups: string[];
  let other: { access: string; refresh: string };
  beforeAll(async () => {
    const recorded = recordLookups(createMemoryStore());
    lookups = recorded.lookups;
    t = await createTestApp({}, recorded.store);
    const tokens = await codeTokens(t.app, t.codeClient);
    other = { access: tokens.accessToken, refresh: tokens.refreshToken };
  });
  beforeEach(() => {
    lookups.length = 0;
  });

  /** The lookups one introspection by the client_credentials integration (not the tokens' owner) made. */
  async function lookupsOf(form: Record<string, string>): Promise<string[]> {
    lookups.length = 0;
    const res = await introspect(t.app, t.credentialsClient, form);
    expect(res.text).toBe('{"active":false}');
    return [...lookups];
  }

  it.each([
    ['no hint', {}],
    ['hint access_token', { token_type_hint: 'access_token' }],
    ['hint refresh_token', { token_type_hint: 'refresh_token' }],
  ])('with %s: unknown, another client\'s access token and refresh token are each looked up as both kinds', async (_label, hint) => {
    // A search that stopped at the first record found answered another client's live token one store round trip
    // sooner than an unknown one (about 0.5 ms on PostgreSQL): a liveness oracle for a token the caller may not see.
    const unknown = await lookupsOf({ token: 'no-such-token-0123456789abcdefghijklmnopqrstuvw', ...hint });
    expect([...unknown].sort()).toEqual(['access', 'refresh']);
    expect(await lookupsOf({ token: other.access, ...hint })).toEqual(unknown);
    expect(await lookupsOf({ token: other.refresh, ...hint })).toEqual(unknown);
  });

  it('still stops at the first record the caller may see: its own token costs one lookup (the answer says it exists)', async () => {
    const own = await clientCredentialsToken(t.app, t.credentialsClient);
    lookups.length = 0;
    const res = await introspect(t.app, t.credentialsClient, { token: own });
    expect(res.body.active).toBe(true);
    expect(lookups).toEqual(['access']);
  });
});
