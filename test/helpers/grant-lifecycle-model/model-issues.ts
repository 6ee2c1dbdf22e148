// How an issued token answer enters the model: a new grant of a code exchange or of a client_credentials request.
import type { Answer } from './http.js';
import type { Known, MClient, MCode, MGrant, MToken, Model } from './model.js';

/** The access and refresh token a code exchange issued (RFC 6749 §4.1.4), as the grant of `code`; `state`: dead when a racing revocation reached them. */
export function recordCodeTokens(m: Model, code: MCode, answer: Answer, state: Known): { access: MToken; refresh: MToken } {
  const grant: MGrant = { client: code.client, userId: code.userId, scope: code.scope, tokens: [], refresh: null };
  const access: MToken = { value: answer.json.access_token as string, kind: 'access', grant, state, issued: answer.at };
  const refresh: MToken = { value: answer.json.refresh_token as string, kind: 'refresh', grant, state, issued: answer.at };
  grant.tokens.push(access);
  grant.refresh = refresh;
  code.grant = grant;
  m.tokens.push(access, refresh);
  return { access, refresh };
}

/** The access token a client_credentials request issued (RFC 6749 §4.4.3), a grant of its own with `scope`. */
export function recordClientToken(m: Model, c: MClient, scope: readonly string[], answer: Answer, state: Known): MToken {
  const grant: MGrant = { client: c, userId: null, scope, tokens: [], refresh: null };
  const access: MToken = { value: answer.json.access_token as string, kind: 'access', grant, state, issued: answer.at };
  grant.tokens.push(access);
  m.tokens.push(access);
  return access;
}
