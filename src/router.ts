// createOAuthRouter: validates everything once, then mounts the endpoints of both base addresses.
import { SigningKeysReplacementIncompleteError } from './jwt/replacement-incomplete-error.js';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import type { Store } from './stores/contract.js';
import type { UserAuth } from './user-auth.js';
import type { OAuthRouter, RotateSigningKeyOptions } from './types.js';
import { resolveOptions, type OAuthRouterOptions, type ResolvedIssuer } from './options.js';
import { checkStore } from './stores/check-store.js';
import { checkUserAuth } from './check-user-auth.js';
import { boundUserAuth } from './http/bounded-user-auth.js';
import { createSessionMiddleware } from './http/session-middleware.js';
import { createRouterErrorHandler, type RouterAddress } from './http/router-error-handler.js';
import { createPageFormBody } from './http/page-form-body.js';
import { noStore } from './http/no-store.js';
import { bindOutageStore } from './http/store-outage-log.js';
import { issuerForRequest } from './checks/issuer.js';
import { refuseUnclearIssuer, type EndpointName } from './http/refuse-unclear-issuer.js';
import { createAuthorizeEndpoint } from './endpoints/authorize.js';
import { createLoginEndpoint } from './endpoints/login.js';
import { createConsentEndpoint } from './endpoints/consent.js';
import { createTokenEndpoint } from './endpoints/token.js';
import { createRevocationEndpoint } from './endpoints/revoke.js';
import { createIntrospectionEndpoint } from './endpoints/introspect.js';
import { buildMetadata, createMetadataEndpoint } from './endpoints/metadata.js';
import { documentMethodNotAllowed, methodNotAllowed } from './endpoints/method-not-allowed.js';
import { createPageMethodNotAllowed } from './endpoints/page-method-not-allowed.js';
import { createRefuseCrossSiteForm } from './endpoints/refuse-cross-site-form.js';
import { serveDirectly, type DirectRoute } from './http/direct-routes.js';
import { keepPeerAddress } from './http/keep-peer-address.js';
import { createPageErrorHandler } from './endpoints/page-error.js';
import { createAwaitPageLanguage, createLazyPageLanguage } from './http/page-language-for.js';
import { createConsentsEndpoints } from './endpoints/consents.js';
import { createLogoutEndpoint } from './endpoints/logout.js';
import { checkProductionSession } from './http/check-production-session.js';
import { warnPlainHttpIssuer } from './http/warn-plain-http-issuer.js';
import { createLoginRateLimit } from './http/login-rate-limit.js';
import { createClientAuthRateLimit } from './checks/client-auth-rate-limit.js';
import { createUntrustedProxyWarning } from './http/untrusted-proxy-warning.js';
import { createCounterKey } from './http/rate-limit-keys.js';
import { rateLimitKeySecretOf, warnUnkeyedCounterKeys } from './http/rate-limit-key-secret.js';
import { createMemoryRateLimits } from './stores/memory/rate-limits.js';
import { withdrawConsent } from './consents/withdraw-consent.js';
import type { PageContext } from './endpoints/page-context.js';
import { createRequireBearer } from './middleware/require-bearer.js';
import { createKeyRing, createVerifyingKeyRing } from './jwt/key-ring.js';
import { createAccessTokenVerifier } from './jwt/verify-access-token.js';
import { createJwksEndpoint } from './jwt/jwks-endpoint.js';
import { createHealth } from './health/create-health.js';
import { createOAuthAdmin } from './admin/create-oauth-admin.js';

type Endpoints = Record<EndpointName, RequestHandler>;

/**
 * Creates the authorization server. Mount `router` at the root of the host app (`app.use(oauth.router)`):
 * the paths come from the issuer URLs, `${issuer}/oauth2/authorize` and `${issuer}/oauth2/token`, for the
 * main and the legacy base address alike (SPEC §4, §9).
 * @throws OptionsError naming the bad option; TypeError for an incomplete store or userAuth.
 * @see RFC 6749 §3 (protocol endpoints), SPEC §4.1–4.5, §9.
 * @example
 * const oauth = createOAuthRouter(createSqliteStore({ filename: './data/oauth.sqlite' }), userAuth, {
 *   issuer: 'https://auth.example.com',
 *   legacy: { issuer: 'https://legacy-auth.example.com' },
 * });
 * app.use(oauth.router);
 * app.get('/api/v1/envelopes', oauth.requireBearer(), listEnvelopes);
 */
export function createOAuthRouter(store: Store, userAuth: UserAuth, options: OAuthRouterOptions): OAuthRouter {
  const resolved = resolveOptions(options);
  // Each enabled feature names the store tier it needs, so a custom store missing a method fails here (the
  // signingKeys tier is checked by createKeyRing, which can name the jwt.signingKeys option instead).
  checkStore(store, {
    ...(resolved.rememberConsent || resolved.consentsPage
      ? { consents: 'rememberConsent and consentsPage (set both to false for a store without consents)' } : {}),
    // The tier is optional; a store that has it must have all of it.
    ...(store?.rateLimits !== undefined ? { rateLimits: 'loginRateLimit and clientAuthRateLimit (counters shared by every instance)' } : {}),
  });
  checkUserAuth(userAuth);
  // A store outage is logged per logger and store: another router's store answering does not end this one's (README, `logger`).
  bindOutageStore(resolved, store);
  checkProductionSession(resolved, userAuth);
  // What the endpoints call: the host's hooks, each bounded by userAuthTimeout.
  const hooks = boundUserAuth(userAuth, resolved.userAuthTimeout);
  warnPlainHttpIssuer(resolved);
  // RFC 9068: keys are chosen (host or store) and checked now; they are read from the store lazily.
  const keyRing = resolved.accessTokenFormat === 'jwt' ? createKeyRing(store, resolved) : undefined;
  // One verifier for requireBearer and introspection: a JWT is active at one exactly when the other accepts it.
  const verifyJwt = keyRing ? createAccessTokenVerifier(keyRing, resolved) : null;
  // Opaque: a JWT issued before the switch back is honoured by its record while its key (the store's, read only when
  // such a token comes) still verifies, so one of a key replaced as leaked never is again (RFC 9700 §4.14).
  const tokenKeys = keyRing ? null : createVerifyingKeyRing(store, resolved);
  const jwks = keyRing ? createJwksEndpoint(keyRing, resolved) : null;
  const router = express.Router();
  const sessionMiddleware = createSessionMiddleware(resolved, process.env.NODE_ENV === 'production' && typeof userAuth.verifyCredentials === 'function');
  // helmet's Referrer-Policy (no-referrer) keeps the query of the authorize page out of Referer headers;
  // noStore keeps the redirects carrying a code or an error out of caches.
  const pageHeaders = [helmet({
    contentSecurityPolicy: false, // set per page by sendPage: the consent form's redirect target varies
    xFrameOptions: { action: 'deny' }, // DESIGN §3; helmet's default is SAMEORIGIN
    strictTransportSecurity: resolved.main.secure,
  }), noStore];
  // The router's limits hold even when a host body parser ran first (it would otherwise make this one step aside).
  const formBody = createPageFormBody(resolved.bodyTimeout);
  const issuers = [resolved.main, ...(resolved.legacy ? [resolved.legacy] : [])];
  const pageError = createPageErrorHandler(resolved);
  // The host's `choose`, run (and, when it answers a Promise, waited for) when a page is written, once the session and
  // form are read: an answer without a page (a redirect with a code or an error) never waits for it. The sign-out,
  // which always writes a page, runs it before it ends the sign-in, so the hook still sees who is signing out. No
  // layer at all without a hook, so a page without one, or without pageLanguages, takes no extra step.
  const pageLanguage: RequestHandler[] = resolved.pageLanguages?.choose ? [createLazyPageLanguage()] : [];
  const signOutLanguage: RequestHandler[] = resolved.pageLanguages?.choose
    ? [createAwaitPageLanguage(resolved.pageLanguages, resolved.logger)] : [];
  const onlyGet = createPageMethodNotAllowed(resolved, 'GET');
  const onlyGetOrHead = createPageMethodNotAllowed(resolved, 'GET, HEAD');
  const onlyPost = createPageMethodNotAllowed(resolved, 'POST');
  // Every page form: refused when the browser says another site sent it, before the body or the session is read.
  // The client's address noted first, so the sign-in and consent events still name it after a hang-up, and the
  // sign-in limit counts it against its address.
  const countsSignIns = resolved.loginRateLimit !== null;
  const pageForm: RequestHandler[] = [
    ...pageHeaders, createRefuseCrossSiteForm(resolved), (req, _res, next) => { keepPeerAddress(req, resolved.events, countsSignIns); next(); },
  ];
  // Both limits count in the store's rateLimits tier, shared by every instance on it; without it, in this process.
  const counters = store.rateLimits ?? createMemoryRateLimits().rateLimits;
  // Their keys are MACed under a secret every instance holds, derived once here.
  const keySecret = rateLimitKeySecretOf(resolved);
  warnUnkeyedCounterKeys(resolved, keySecret, counters);
  const counterKey = createCounterKey(keySecret);
  // One per router: a setting that misreads the client's address is one fault, told once, whichever limit meets it.
  const warnProxy = createUntrustedProxyWarning(resolved.logger);
  const loginRateLimit = resolved.loginRateLimit ? createLoginRateLimit(resolved.loginRateLimit, counters, counterKey, warnProxy) : null;
  // Handed to the three client-authenticating endpoints themselves: no route layer, nothing kept per request.
  const clientAuthLimit = resolved.clientAuthRateLimit
    ? createClientAuthRateLimit(resolved.clientAuthRateLimit, counters, counterKey, warnProxy) : null;

  const endpointsByIssuer = new Map<ResolvedIssuer, Endpoints>();
  for (const issuer of issuers) {
    const base = `${issuer.pathPrefix}/oauth2`;
    const context: PageContext = {
      store, userAuth: hooks, options: resolved, issuer, loginRateLimit,
      paths: {
        authorize: `${base}/authorize`, login: `${base}/login`, consent: `${base}/consent`,
        consents: `${base}/consents`, withdraw: `${base}/consents/withdraw`, logout: `${base}/logout`,
      },
    };
    const consents = createConsentsEndpoints(context);
    endpointsByIssuer.set(issuer, {
      authorize: createAuthorizeEndpoint(context),
      login: createLoginEndpoint(context),
      consent: createConsentEndpoint(context),
      token: createTokenEndpoint(store, hooks, resolved, issuer, clientAuthLimit, keyRing),
      revoke: createRevocationEndpoint(store, resolved, issuer, clientAuthLimit),
      introspect: createIntrospectionEndpoint(store, resolved, issuer, clientAuthLimit, verifyJwt, tokenKeys),
      metadata: createMetadataEndpoint(buildMetadata(resolved, issuer, keyRing ? { jwks_uri: `${issuer.issuer}/oauth2/jwks` } : {}),
        issuers.some((other) => other !== issuer && other.pathPrefix === issuer.pathPrefix)),
      consents: consents.consentsPage,
      withdraw: consents.withdraw,
      logout: createLogoutEndpoint(context),
    });
  }

  // Two issuers may share a path (two host names): the host (Host, or X-Forwarded-Host from a trusted proxy) then picks one per request.
  const direct: DirectRoute[] = [];
  const addresses = new Map<string, RouterAddress>();
  const prefixes = [...new Set(issuers.map((issuer) => issuer.pathPrefix))];
  for (const prefix of prefixes) {
    const candidates = issuers.filter((issuer) => issuer.pathPrefix === prefix);
    const dispatch = (name: keyof Endpoints): RequestHandler => (req, res, next) => {
      let issuer: ResolvedIssuer;
      try {
        issuer = issuerForRequest(candidates, req);
      } catch (err) {
        // Two Host lines where the host picks the issuer (RFC 9112 §3.2): answered as this endpoint's bad request.
        refuseUnclearIssuer(resolved, name, err, res, next);
        return;
      }
      const answered: unknown = endpointsByIssuer.get(issuer)![name](req, res, next);
      // A rejection goes on to `next`, as a thrown error would: left on the promise (Express 4 ignores a handler's
      // promise, and this one was not returned), it was an unhandled rejection, which ends Node's process.
      if (answered instanceof Promise) answered.then(undefined, (err: unknown) => next(err ?? new Error('Rejected promise')));
    };
    const base = `${prefix}/oauth2`;
    // The machine endpoints first: their paths are disjoint from the pages', so the order changes no answer,
    // and the token endpoint, the busiest route, is matched at the stack's first layer instead of its seventh.
    // A POST to their exact paths is then served without walking the stack at all (serveDirectly, below).
    for (const name of ['token', 'revoke', 'introspect'] as const) {
      const path = `${base}/${name}`;
      addresses.set(path, { method: 'POST', kind: name === 'token' ? 'token' : name === 'revoke' ? 'revocation' : 'introspection' });
      const handler = dispatch(name);
      direct.push({ path, route: router.route(path).post(handler).all(methodNotAllowed), handler });
    }
    // Each page route answers the other methods with a 405 page (a reload of a posted form's address, say).
    // HEAD has a handler of its own so that Express does not run the GET's for it: that GET may issue a code.
    router.route(`${base}/authorize`).head(pageHeaders, onlyGet).get(pageHeaders, sessionMiddleware, pageLanguage, dispatch('authorize'), pageError)
      .all(pageHeaders, onlyGet);
    router.route(`${base}/login`).post(pageForm, sessionMiddleware, formBody, pageLanguage, dispatch('login'), pageError).all(pageHeaders, onlyPost);
    router.route(`${base}/consent`).post(pageForm, sessionMiddleware, formBody, pageLanguage, dispatch('consent'), pageError).all(pageHeaders, onlyPost);
    router.route(`${base}/logout`).post(pageForm, sessionMiddleware, formBody, signOutLanguage, dispatch('logout'), pageError).all(pageHeaders, onlyPost);
    if (resolved.consentsPage) {
      router.route(`${base}/consents`).get(pageHeaders, sessionMiddleware, pageLanguage, dispatch('consents'), pageError).all(pageHeaders, onlyGetOrHead);
      router.route(`${base}/consents/withdraw`).post(pageForm, sessionMiddleware, formBody, pageLanguage, dispatch('withdraw'), pageError)
        .all(pageHeaders, onlyPost);
    }
    const pages: ReadonlyArray<readonly [string, RouterAddress['method']]> = [['authorize', 'GET'], ['login', 'POST'], ['consent', 'POST'],
      ['logout', 'POST'], ...(resolved.consentsPage ? [['consents', 'GET'], ['consents/withdraw', 'POST']] as const : [])];
    for (const [page, method] of pages) addresses.set(`${base}/${page}`, { method, kind: 'page' });
    // Its HEAD is the 405 above, body or not: oauth.errorHandler walks it there rather than send it to itself again.
    addresses.set(`${base}/authorize`, { method: 'GET', kind: 'page', head: false });
    // Both issuers publish the same keys, so no dispatch by issuer is needed. Another method is 405, not the host's 404.
    if (jwks) {
      router.route(`${base}/jwks`).get(jwks).all(documentMethodNotAllowed);
      addresses.set(`${base}/jwks`, { method: 'GET', kind: 'document' });
    }
    // RFC 8414 §3.1 inserts the well-known segment before the issuer's path; the appended form is what many
    // clients try for issuers with a path, so both answer.
    // Cached for five minutes; with two issuers on this path, chosen by host and kept from shared caches (private:
    // createMetadataEndpoint says why). A client's own cache keys it by X-Forwarded-Host too, where a proxy it goes
    // through passes the header on, and by Host, said out loud for any cache that stores it all the same.
    const metadata = dispatch('metadata');
    // One route per address, named by it alone: a route's path is what a tracer reports as the request's route,
    // and one route for both addresses was `GET` without a route under dd-trace and both addresses joined by a
    // comma under New Relic and Elastic. An issuer without a path has one address.
    const inserted = `/.well-known/oauth-authorization-server${prefix}`;
    const appended = `${prefix}/.well-known/oauth-authorization-server`;
    const metadataHandler: RequestHandler = candidates.length > 1
      ? (req, res, next) => { res.vary('Host'); res.vary('X-Forwarded-Host'); metadata(req, res, next); } : metadata;
    for (const path of new Set([inserted, appended])) {
      router.route(path).get(metadataHandler).all(documentMethodNotAllowed);
      addresses.set(path, { method: 'GET', kind: 'document' });
    }
  }

  serveDirectly(router, direct, (baseUrl) => resolved.logger.warn(
    `express-oauth-router: oauth.router is mounted at "${baseUrl.slice(0, 100)}", so its routes answer under it and not at the issuer's `
    + `addresses (${issuers.map((issuer) => `${issuer.issuer}/oauth2/…`).join(', ')}). Mount it at the root, app.use(oauth.router): `
    + 'the issuer\'s path is already part of its routes.'));

  return {
    router,
    requireBearer: createRequireBearer(store, resolved, verifyJwt, tokenKeys),
    withdrawConsent: (userId: string, clientId: string) => withdrawConsent(store, userId, clientId, { events: resolved.events, issuer: null, ip: null }),
    rotateSigningKey: (rotation?: RotateSigningKeyOptions) => keyRing
      ? keyRing.rotate(rotation).then((rotated) => {
        if (rotation?.leaked === true) {
          resolved.events.publish({ type: 'signing_keys.replaced', time: new Date(), issuer: null, ip: null, kid: rotated.kid, signingKid: rotated.signingKid, deleted: rotated.deleted, complete: true });
        }
        return rotated;
      }, (error: unknown) => {
        // The new key is saved, some old ones deleted: the audit trail shows what happened before the failure.
        if (error instanceof SigningKeysReplacementIncompleteError) {
          resolved.events.publish({ type: 'signing_keys.replaced', time: new Date(), issuer: null, ip: null, kid: error.kid, signingKid: null, deleted: error.deleted, complete: false });
        }
        throw error;
      })
      : Promise.reject(new Error('express-oauth-router: rotateSigningKey needs accessTokenFormat "jwt"')),
    options: resolved,
    events: resolved.events,
    admin: createOAuthAdmin(store, { events: resolved.events, scopes: Object.keys(resolved.scopes) }),
    health: createHealth(store, keyRing, resolved),
    errorHandler: createRouterErrorHandler(resolved, router, addresses, pageError, pageHeaders),
  };
}
