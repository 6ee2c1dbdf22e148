// Public exports of express-oauth-router.
export { createOAuthRouter } from './router.js';
export { OAuthEvents } from './events/oauth-events.js';
export type { ErrorSink, OAuthEventMap } from './events/oauth-events.js';
export type {
  OAuthEvent, OAuthEventType, OAuthEventOf, OAuthEventBase, TokenIssuedEvent, TokenRefreshedEvent, TokenRevokedEvent,
  RevocationCause, CodeReplayedEvent, ClientAuthFailure, ClientAuthenticationFailedEvent, LoginSucceededEvent,
  LoginFailedEvent, ConsentGrantedEvent, ConsentWithdrawnEvent, ClientLifecycleEvent, RateLimitHitEvent, SigningKeysReplacedEvent,
} from './events/event-types.js';
export { OptionsError, resolveOptions } from './options.js';
export type {
  OAuthRouterOptions, LegacyOptions, SessionOptions, Logger, ResolvedOptions, ResolvedIssuer, JwtOptions,
  ResolvedSessionOptions, ResolvedJwtOptions,
} from './options.js';
export type { SigningKey, PublicJwk } from './jwt/signing-key.js';
export { ENGLISH_PAGE_MESSAGES } from './views/page-messages.js';
export type { PageMessages, PageCatalogue, PageMessage, CountedPageMessage } from './views/page-messages.js';
export type { PageLanguagesOptions, PageLanguageChoice, ResolvedPageLanguages, PageLanguage } from './views/page-languages.js';
export type { OAuthRouter, BearerAuth, RequireBearerOptions, RotateSigningKeyOptions, RotatedSigningKey } from './types.js';
export type { BearerCacheOption } from './middleware/bearer-cache.js';
export type { OAuthHealth } from './health/create-health.js';
export type { ReadinessReport, ReadinessOptions, HealthCheckResult, HealthFailure } from './health/check-readiness.js';
export { DIAGNOSTICS_CHANNELS } from './metrics/channels.js';
export type {
  ErrorEndpoint, ChannelMessageBase, TokenRequestMessage, BearerCheckMessage, ErrorAnswerMessage,
  BcryptWorkerFailureMessage, BcryptWorkerFailureReason,
} from './metrics/channels.js';
export type { SessionStoreLike } from './http/session-store-like.js';
export { MemorySessionStore } from './http/memory-session-store.js';
export type { MemorySessionStoreOptions, StoredSession } from './http/memory-session-store.js';
export type { UserAuth, AuthenticatedUser } from './user-auth.js';
export type {
  Store, ClientStore, CodeStore, TokenStore, ConsentStore, OAuthClient, ClientFlow, GrantType,
  AuthorizationCodeRecord, TokenRecord, ConsentRecord, ConsumeResult,
  SigningKeyStore, SigningKeyRecord, SigningAlgorithm, SaveSigningKeyOptions,
  ClientChanges, DisableClientOutcome, EnableClientOutcome, SaveTokensOptions, StoreTier, AdministrationStore, AdministrationClientStore, ConsentsStore, CompleteStore,
  TokenEndpointAuthMethod, RateLimitStore, RateLimitCount, RevocationFeed, RevocationMark, ClientCopy, ClientCopies,
} from './stores/contract.js';
export type { LoginRateLimitOptions, ResolvedLoginRateLimit } from './http/login-rate-limit.js';
export type { ClientAuthRateLimitOptions, ResolvedClientAuthRateLimit } from './checks/client-auth-rate-limit.js';
export {
  STORE_POLICY, compareIds, compareClients, compareConsents, compareSigningKeys, isStoreId, checkTokenPair,
  CLIENT_CHANGE_FIELDS, definedClientChanges, applyClientChanges,
} from './stores/store-policy.js';
export { STORE_TIERS, checkStore, missingStoreMethods, hasStoreTier } from './stores/check-store.js';
export { isStoreUnavailableError } from './stores/store-unavailable-error.js';
export { registerClient, ClientExistsError } from './clients/register-client.js';
export { rotateClientSecret } from './clients/rotate-client-secret.js';
export { disableClient } from './clients/disable-client.js';
export type { RegisterClientInput, RegisteredClient, RegistrationOptions } from './clients/register-client.js';
export { buildClientRecord } from './clients/register-client.js';
export { importClients } from './clients/import-clients.js';
export type { ImportClientsOptions, ImportReport, ImportRowResult, ImportOutcome } from './clients/import-clients.js';
export { parseImportFile, ImportFileError } from './clients/import-file.js';
export type { ImportFormat, ImportRecord } from './clients/import-file.js';
export { IMPORT_FIELDS } from './clients/import-row.js';
export type { ImportFields } from './clients/import-row.js';
export { enableClient } from './clients/enable-client.js';
export { createOAuthAdmin } from './admin/create-oauth-admin.js';
export type { OAuthAdmin, OAuthAdminOptions, DisabledClient, EnabledClient } from './admin/create-oauth-admin.js';
export { updateClientSettings } from './clients/update-client.js';
export type { ClientUpdate, UpdatedClient } from './clients/update-client.js';
export { rotateClientSecretWithGrace, MAX_SECRET_GRACE_SECONDS } from './clients/rotate-client-secret.js';
export type { RotateSecretOptions, RotatedSecret } from './clients/rotate-client-secret.js';
export { deleteOAuthClient } from './clients/delete-client.js';
export { revokeTokens } from './clients/revoke-tokens.js';
export type { RevokeTokensTarget, RevokedTokens } from './clients/revoke-tokens.js';
export { UnknownClientError, UnknownScopeError, StoreCapabilityError, RevocationIncompleteError, ConcurrentRotationError, GracePeriodRunningError } from './clients/client-errors.js';
export { SigningKeysReplacementIncompleteError } from './jwt/replacement-incomplete-error.js';
export { withdrawConsent } from './consents/withdraw-consent.js';
export type { WithdrawalAudit } from './consents/withdraw-consent.js';
export { hashSecret } from './crypto/hash-secret.js';
export { hashToken } from './crypto/hash-token.js';
export { hashSecretScrypt, SCRYPT_PARAMS } from './crypto/scrypt-secret.js';
export { verifyClientSecret } from './crypto/verify-client-secret.js';
export {
  OAuthError, InvalidRequestError, InvalidClientError, InvalidGrantError, UnauthorizedClientError,
  UnsupportedGrantTypeError, InvalidScopeError, AccessDeniedError, UnsupportedResponseTypeError,
  InvalidRedirectTargetError, ServerError, TemporarilyUnavailableError, InvalidTokenError, InsufficientScopeError,
  TooManyAttemptsError,
} from './errors.js';
export type { OAuthErrorCode } from './errors.js';
export { createStoreFromUrl, DEFAULT_STORE_URL } from './stores/from-url.js';
export type { StoreFromUrlOptions } from './stores/from-url.js';
export { consoleStoreLogger } from './stores/console-store-logger.js';
export type { StoreWarningLogger } from './stores/console-store-logger.js';
export { describeStoreError } from './stores/describe-store-error.js';
export type { StoreErrorSummary } from './stores/describe-store-error.js';
export { NETWORK_ERROR_CODES, StoreUnavailableError } from './stores/store-unavailable-error.js';
export { combineStores } from './stores/combine-stores.js';
export type { StoreParts } from './stores/combine-stores.js';
