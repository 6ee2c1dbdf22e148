// GET /oauth2/consents and POST /oauth2/consents/withdraw: the user's connected applications.
import type { Request, Response } from 'express';
import type { PageContext } from './page-context.js';
import { findCurrentUser, findSignIn, type SignIn } from '../http/current-user.js';
import { hostLogoutUrl } from '../http/host-logout-url.js';
import { csrfTokenFor, isValidCsrfToken } from '../http/csrf.js';
import { oauthSession, readOAuthSession } from '../http/oauth-session.js';
import { bindSessionToUser, isSessionOf } from '../http/session-owner.js';
import { sendPage } from '../http/send-page.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { withdrawConsent } from '../consents/withdraw-consent.js';
import { requireConsents } from '../stores/check-store.js';
import { consentsPageBody, type ConsentRow, type ConsentsPageModel } from '../views/consents-page.js';
import { renderError, renderLogin, writePageLanguage } from './render.js';
import { grantableScopes, heldScope, isAllAccess } from '../checks/grant-scope.js';
import { isConsentCurrent } from '../checks/consent-current.js';
import { isStoreId } from '../stores/store-policy.js';
import type { OAuthClient } from '../stores/contract.js';
import { dayIn } from '../views/day-in.js';
import { scopeSentence } from '../views/scope-sentence.js';
import { redirect } from '../http/answered-by-host.js';

/** The login form's request id when the sign-in is for this page rather than an authorization request. */
export const CONSENTS_PAGE_REQUEST = 'consents';

/**
 * Builds the page and its withdraw action. Signed out: the login page (or the host's login URL), then back
 * here. Withdrawing needs the session's CSRF token and revokes that integration's tokens for the user. The
 * page also offers the sign-out form (POST /oauth2/logout), or for a user the host signed in, a link to the
 * host's sign-out (`UserAuth.logoutUrl`).
 * @see RFC 6749 §10.2, RFC 7009 §2.1, RFC 6819 §4.4.1.4.
 */
export function createConsentsEndpoints(context: PageContext) {
  const { store, userAuth, options } = context;

  /** The router's form ends only its own sign-in: the host's is ended at the host's sign-out, if it names one. */
  function signOutOf(req: Request, signIn: SignIn): ConsentsPageModel['signOut'] {
    if (!signIn.byHost) return { action: context.paths.logout };
    const href = hostLogoutUrl(req, userAuth, options.logger);
    return href === null ? null : { href };
  }

  /** The withdrawal's confirmation, said once: a reload of the page does not repeat it. */
  function takeNotice(req: Request): ConsentsPageModel['withdrawn'] {
    const data = readOAuthSession(req);
    const withdrawn = data?.withdrawn ?? null;
    if (data && withdrawn !== null) delete data.withdrawn;
    return withdrawn;
  }

  async function show(req: Request, res: Response): Promise<void> {
    const signIn = await findSignIn(req, userAuth, options);
    if (!signIn) {
      if (userAuth.loginUrl && !userAuth.verifyCredentials) {
        redirect(res, 303, userAuth.loginUrl(req, context.paths.consents));
        return;
      }
      renderLogin(req, res, context, { requestId: CONSENTS_PAGE_REQUEST, clientName: options.productName, error: null, username: '' });
      return;
    }
    const { user } = signIn;
    bindSessionToUser(req, user);
    const notice = takeNotice(req);
    const consents = await requireConsents(store, 'consentsPage').consents.listConsents(user.id);
    const connected: { readonly client: OAuthClient; readonly consent: (typeof consents)[number] }[] = [];
    for (const consent of consents) {
      const client = await store.clients.findClient(consent.clientId);
      // Left behind by a deleted integration (gone, or re-created under the same id since): not a connection.
      if (!client || !isConsentCurrent(consent, client)) continue;
      connected.push({ client, consent });
    }
    writePageLanguage(res, context, (language) => {
      const m = language.messages;
      const rows: ConsentRow[] = connected.map(({ client, consent }) => ({
        clientId: client.clientId,
        clientName: client.name,
        // What the integration can do now: a scope dropped from the `scopes` option since the user allowed it is held
        // by none of its tokens (heldScope) and granted no more, so it is not listed. A consent left with none is still
        // listed, saying it has no permission (never as full access: it named scopes), so its Withdraw stays within reach:
        // the option given the scope back would make its unexpired tokens hold it again.
        scope: grantableScopes(consent.scope, options).map((scope) => scopeSentence(scope, m, options.scopes)),
        allAccess: isAllAccess(consent.scope, options),
        scopesDropped: heldScope(consent.scope, options) === null,
        grantedAt: consent.grantedAt,
      }));
      sendPage(res, {
        status: 200,
        title: m.consentsTitle,
        productName: options.productName,
        brandColor: options.brandColor,
        language,
        body: consentsPageBody(
          { action: context.paths.withdraw, signOut: signOutOf(req, signIn), csrfToken: csrfTokenFor(req), userName: user.displayName, rows, withdrawn: notice },
          m, language.english ? undefined : dayIn(language.tag),
        ),
      });
    });
  }

  return {
    async consentsPage(req: Request, res: Response): Promise<void> {
      try {
        await show(req, res);
      } catch (err) {
        const oauthError = toOAuthError(err, options);
        renderError(res, context, oauthError.status, oauthError.error, { message: 'pageUnavailable' });
      }
    },
    async withdraw(req: Request, res: Response): Promise<void> {
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!isValidCsrfToken(req, body.csrf_token)) {
        renderError(res, context, 403, 'invalid_request', { message: 'formExpiredReload' });
        return;
      }
      try {
        const user = await findCurrentUser(req, userAuth, options);
        if (user && !isSessionOf(req, user)) {
          renderError(res, context, 403, 'invalid_request', { message: 'formExpiredReload' });
          return;
        }
        // A client_id no store could hold (a NUL byte, a megabyte) is refused here, never sent to the store.
        if (!user || !isStoreId(body.client_id)) {
          renderError(res, context, 400, 'invalid_request', { message: 'chooseApplication' });
          return;
        }
        await withdrawConsent(store, user.id, body.client_id, { events: options.events, issuer: context.issuer.issuer, ip: req.ip ?? null });
        // Post/redirect/get: the page after the redirect says what was done (WCAG 3.3.4, a status message).
        const client = await store.clients.findClient(body.client_id);
        oauthSession(req).withdrawn = { name: client?.name ?? null };
        redirect(res, 303, context.paths.consents);
      } catch (err) {
        const oauthError = toOAuthError(err, options);
        renderError(res, context, oauthError.status, oauthError.error, { message: 'pageUnavailable' });
      }
    },
  };
}
