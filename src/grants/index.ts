// The grant types the token endpoint serves, by grant_type value.
import type { GrantHandler } from './grant-context.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { refreshTokenGrant } from './refresh-token.js';

/** grant_type → handler (SPEC §4.2: "The grant_type field selects the operation"). */
export const GRANTS: ReadonlyMap<string, GrantHandler> = new Map(
  [authorizationCodeGrant, clientCredentialsGrant, refreshTokenGrant].map((grant) => [grant.grantType, grant]),
);
