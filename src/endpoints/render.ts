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
import { denyAgainPageBody, type DenyAgainPageModel } from '../views/deny-again-page.js';
import { isolate } from '../views/isolate.js';
import { isAllAccess } from '../checks/grant-scope.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { reportErrorAnswer } from '../metrics/channels.js';
import { encodeLoginRequest } from '../http/login-request.js';
import { formActionSource } from '../http/form-action-source.js';
import { writeInPageLanguage } from '../http/page-language-for.js';
import { messageHtml, messageText } from '../views/format-message.js';
import { escapeHtml } from '../views/escape-html.js';
import { scopeSentence } from '../views/scope-sentence.js';
import { ENGLISH_PAGE_MESSAGES, type PageErrorMessage, type PageMessages } from '../views/page-messages.js';
import type { PageLanguage } from '../views/page-languages.js';

/**
 * What the login form says went wrong: a refusal, an expired form, a click on an expired consent page (whose session
 * ended), or the sign-in limit's wait (seconds).
 */
export type LoginError = 'signInFailed' | 'signInFormExpired' | 'consentFormExpiredSignIn' | { readonly retryAfterSeconds: number };

/** An error page's description: a message of the catalogues (translated), or a text in English. */
export type ErrorDescription = string | { readonly message: PageErrorMessage };

/**
 * Writes the page answering `res` (`write`) in its language (`pageLanguages`; English without it): the host's
 * `choose` is asked now, a page being written, and an asynchronous one waited for (writeInPageLanguage).
 */
export function writePageLanguage(res: Response, context: PageContext, write: (language: PageLanguage) => void): void {
  writeInPageLanguage(res, context.options.pageLanguages ?? null, context.options.logger, write);
}

/** The sign-in limit's wait in words: the page says when to try again, not "a few minutes". */
function lockoutText(messages: PageMessages, retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  const counted = messages.signInLockedOut;
  let text: unknown;
  try {
    text = typeof counted === 'function' ? counted(minutes) : counted;
  } catch {
    text = null;
  }
  // A host's plural function that throws or answers no text is a bug of its own: the page still says how long, in English.
  if (typeof text !== 'string') text = (ENGLISH_PAGE_MESSAGES.signInLockedOut as (count: number) => string)(minutes);
  return messageText(text as string, { minutes: String(minutes) });
}

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
    requestId: string; clientName: string; error: LoginError | null; errorInFields?: boolean; username: string; redirectUri?: string; status?: number;
  },
): void {
  const { redirectUri, status, errorInFields, error, ...model } = view;
  writePageLanguage(res, context, (language) => {
    const m = language.messages;
    sendPage(res, {
      status: status ?? (error ? 400 : 200),
      // The title is what a screen reader announces first on the new page: it says the attempt failed (WCAG 2.4.2, 3.3.1).
      title: error ? m.signInErrorTitle : m.signInTitle,
      productName: context.options.productName,
      brandColor: context.options.brandColor,
      language,
      ...(redirectUri !== undefined ? { formTargets: [formActionSource(redirectUri)] } : {}),
      body: loginPageBody({
        action: context.paths.login, csrfToken: loginCsrfToken(req, res, context.options), productName: context.options.productName,
        cancellable: redirectUri !== undefined, errorInFields: errorInFields ?? false, ...model,
        errorHtml: error === null ? null : error === 'consentFormExpiredSignIn'
          ? messageHtml(m[error], { client: `<bdi>${escapeHtml(view.clientName)}</bdi>` })
          : escapeHtml(typeof error === 'string' ? m[error] : lockoutText(m, error.retryAfterSeconds)),
      }, m),
    });
  });
}

/**
 * Shows the consent form for a pending request. `notice`: the page is shown again after a click on an expired copy of
 * it, which was not taken: the page says so, in an alert, and its title starts as an error's (WCAG 2.4.2, 3.3.1).
 */
export function renderConsent(
  req: Request, res: Response, context: PageContext,
  view: { requestId: string; client: OAuthClient; pending: PendingAuthorization; signIn: SignIn; notice?: boolean },
): void {
  const { user } = view.signIn;
  const redirectOrigin = new URL(view.pending.redirectUri).origin;
  writePageLanguage(res, context, (language) => {
    const m = language.messages;
    sendPage(res, {
      status: 200,
      title: messageText(view.notice === true ? m.consentErrorTitle : m.consentTitle, { client: isolate(view.client.name) }),
      productName: context.options.productName,
      brandColor: context.options.brandColor,
      language,
      formTargets: [formActionSource(view.pending.redirectUri)],
      body: consentPageBody({
        action: context.paths.consent,
        csrfToken: csrfTokenFor(req),
        requestId: view.requestId,
        resume: encodeLoginRequest(view.pending.query),
        clientName: view.client.name,
        userName: user.displayName,
        scope: view.pending.scope.map((scope) => scopeSentence(scope, m, context.options.scopes)),
        allAccess: isAllAccess(view.pending.scope, context.options),
        productName: context.options.productName,
        redirectOrigin,
        consentsUrl: context.paths.consents,
        switchAccount: !view.signIn.byHost,
        expiredNotice: view.notice === true,
      }, m),
    });
  });
}

/**
 * Answers a Deny whose session ended while its page was open (403: the click was not taken): the notice that nothing
 * was sent, and a Deny button that is the sign-in form's Cancel, with the login cookie's token, so refusing needs no
 * sign-in. `redirectUri` is the request's: the Cancel's 303 ends there, which CSP form-action covers. Also the answer to
 * a click on an expired consent page whose request asks for a fresh sign-in the router cannot take (`message`).
 * @see RFC 6749 §4.1.2.1, §10.12.
 */
export function renderDenyAgain(
  req: Request, res: Response, context: PageContext,
  view: { requestId: string; clientName: string; redirectUri: string; message?: DenyAgainPageModel['message'] },
): void {
  writePageLanguage(res, context, (language) => {
    const m = language.messages;
    sendPage(res, {
      status: 403,
      title: messageText(m.consentErrorTitle, { client: isolate(view.clientName) }),
      productName: context.options.productName,
      brandColor: context.options.brandColor,
      language,
      formTargets: [formActionSource(view.redirectUri)],
      body: denyAgainPageBody({
        action: context.paths.login, csrfToken: loginCsrfToken(req, res, context.options), requestId: view.requestId, clientName: view.clientName,
        ...(view.message === undefined ? {} : { message: view.message }),
      }, m),
    });
  });
}

/**
 * Shows an error that must not be redirected (RFC 6749 §4.1.2.1). `audience`: `developer` for a description
 * written for the integration's developer (a bad client_id or redirect_uri), which the page puts in plain words
 * for the user first. A description given as a message of the catalogues is translated; a text (an OAuthError's, for
 * developers) stays English, marked as such on a page in another language.
 */
export function renderError(
  res: Response, context: PageContext, status: number, error: string, description: ErrorDescription, audience: 'user' | 'developer' = 'user',
): void {
  writePageLanguage(res, context, (language) => {
    const m = language.messages;
    const translated = typeof description !== 'string';
    sendPage(res, {
      status,
      title: m.errorTitle,
      productName: context.options.productName,
      brandColor: context.options.brandColor,
      language,
      body: errorPageBody(error, translated ? m[description.message] : description, audience, m, translated || language.english ? null : 'en'),
    });
  });
}

/** The failures' descriptions the user is shown, each a message of the catalogues (its English, the error's own text). */
const SERVICE_FAILURES: readonly PageErrorMessage[] = ['authorizationServerUnavailable', 'authorizationServerFailed'];

/**
 * Shows why an authorization request's integration or redirect_uri was refused (never redirected, RFC 6749
 * §4.1.2.1), and counts the answer. A refusal is the integration's doing, said for its developer; a failure of
 * the service (5xx) is said to the user: as `serviceText` when given, else as the error says it, in the page's
 * language (`authorizationServerUnavailable`, `authorizationServerFailed`: the same English words as before).
 */
export function renderTargetError(res: Response, context: PageContext, err: unknown, serviceText?: ErrorDescription): void {
  const oauthError = toOAuthError(err, context.options);
  reportErrorAnswer(context.options.events, 'authorization', oauthError.error, oauthError.status);
  const refused = oauthError.expose && oauthError.status < 500;
  const said = oauthError.expose ? oauthError.message : ENGLISH_PAGE_MESSAGES.authorizationServerFailed;
  // A store's own OAuthError with other words keeps them, in English.
  const failure = SERVICE_FAILURES.find((message) => ENGLISH_PAGE_MESSAGES[message] === said);
  const forUser = serviceText ?? (failure === undefined ? said : { message: failure });
  renderError(res, context, oauthError.status, oauthError.error, refused ? said : forUser, refused ? 'developer' : 'user');
}
