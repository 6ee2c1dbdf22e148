// Renders the login, consent and error pages of one base address.
import type { Request, Response } from 'express';
import type { OAuthClient } from '../stores/contract.js';
import type { SignIn } from '../http/current-user.js';
import type { PendingAuthorization } from '../http/oauth-session.js';
import type { PageContext } from './page-context.js';
import { sendPage } from '../http/send-page.js';
import { csrfTokenFor } from '../http/csrf.js';
import { loginCsrfToken } from '../http/login-csrf.js';
import { loginPageBody } from '../views/login-page.js';
import { consentPageBody } from '../views/consent-page.js';
import { errorPageBody } from '../views/error-page.js';
import { isolate } from '../views/isolate.js';
import { isAllAccess } from '../checks/grant-scope.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { reportErrorAnswer } from '../metrics/channels.js';
import { encodeLoginRequest } from '../http/login-request.js';
import { formActionSource } from '../http/form-action-source.js';

/**
 * Shows the sign-in form for a pending request (status 200, or 400 after a failed attempt: not 401, which HTTP
 * reserves for answers that name an authentication scheme in `WWW-Authenticate`, RFC 9110 §15.5.2). `redirectUri` is
 * the pending request's: when the user already consented, the login form's redirect chain ends there, and
 * browsers apply CSP form-action to every redirect after a form submission. Its CSRF token is the login
 * cookie's (no session exists yet); `requestId` carries the request itself.
 */
export function renderLogin(
  req: Request, res: Response, context: PageContext,
  view: {
    requestId: string; clientName: string; error: string | null; errorInFields?: boolean; username: string; redirectUri?: string; status?: number;
  },
): void {
  const { redirectUri, status, errorInFields, ...model } = view;
  sendPage(res, {
    status: status ?? (view.error ? 400 : 200),
    // The title is what a screen reader announces first on the new page: it says the attempt failed (WCAG 2.4.2, 3.3.1).
    title: view.error ? 'Error: Sign in' : 'Sign in',
    productName: context.options.productName,
    brandColor: context.options.brandColor,
    ...(redirectUri !== undefined ? { formTargets: [formActionSource(redirectUri)] } : {}),
    body: loginPageBody({
      action: context.paths.login, csrfToken: loginCsrfToken(req, res, context.options), productName: context.options.productName,
      cancellable: redirectUri !== undefined, errorInFields: errorInFields ?? false, ...model,
    }),
  });
}

/** Shows the consent form for a pending request. */
export function renderConsent(
  req: Request, res: Response, context: PageContext,
  view: { requestId: string; client: OAuthClient; pending: PendingAuthorization; signIn: SignIn },
): void {
  const { user } = view.signIn;
  const redirectOrigin = new URL(view.pending.redirectUri).origin;
  sendPage(res, {
    status: 200,
    title: `Allow ${isolate(view.client.name)}?`,
    productName: context.options.productName,
    brandColor: context.options.brandColor,
    formTargets: [formActionSource(view.pending.redirectUri)],
    body: consentPageBody({
      action: context.paths.consent,
      csrfToken: csrfTokenFor(req),
      requestId: view.requestId,
      resume: encodeLoginRequest(view.pending.query),
      clientName: view.client.name,
      userName: user.displayName,
      scope: view.pending.scope.map((scope) => context.options.scopes[scope] ?? scope),
      allAccess: isAllAccess(view.pending.scope, context.options),
      productName: context.options.productName,
      redirectOrigin,
      consentsUrl: context.paths.consents,
      switchAccount: !view.signIn.byHost,
    }),
  });
}

/**
 * Shows an error that must not be redirected (RFC 6749 §4.1.2.1). `audience`: `developer` for a description
 * written for the integration's developer (a bad client_id or redirect_uri), which the page puts in plain words
 * for the user first.
 */
export function renderError(
  res: Response, context: PageContext, status: number, error: string, description: string, audience: 'user' | 'developer' = 'user',
): void {
  sendPage(res, {
    status,
    title: 'Request cannot be completed',
    productName: context.options.productName,
    brandColor: context.options.brandColor,
    body: errorPageBody(error, description, audience),
  });
}

/**
 * Shows why an authorization request's integration or redirect_uri was refused (never redirected, RFC 6749
 * §4.1.2.1), and counts the answer. A refusal is the integration's doing, said for its developer; a failure of
 * the service (5xx) is said to the user: as `serviceText` when given, else as the error says it.
 */
export function renderTargetError(res: Response, context: PageContext, err: unknown, serviceText?: string): void {
  const oauthError = toOAuthError(err, context.options.logger);
  reportErrorAnswer(context.options.events, 'authorization', oauthError.error, oauthError.status);
  const refused = oauthError.expose && oauthError.status < 500;
  const said = oauthError.expose ? oauthError.message : 'the server encountered an unexpected condition';
  renderError(res, context, oauthError.status, oauthError.error, refused ? said : serviceText ?? said, refused ? 'developer' : 'user');
}
