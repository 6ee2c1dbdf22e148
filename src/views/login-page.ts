// The sign-in page shown when nobody is signed in at the authorization endpoint.
import { escapeHtml } from './escape-html.js';
import { messageHtml } from './format-message.js';
import { ENGLISH_PAGE_MESSAGES, type PageMessages } from './page-messages.js';

/** What the login form needs. */
export interface LoginPageModel {
  readonly action: string;
  readonly csrfToken: string;
  readonly requestId: string;
  readonly clientName: string;
  /** The service whose account signs in: named first, so nobody takes the integration for the one asking. */
  readonly productName: string;
  /** The error as HTML, in the page's language (its text escaped, a name in `<bdi>`). */
  readonly errorHtml: string | null;
  /**
   * The error is about what was typed (the username or password was refused), so both fields are marked invalid. An
   * error that is not (the form had expired, too many attempts) is tied to them as their description only: a screen
   * reader would otherwise call an empty username field "invalid entry".
   */
  readonly errorInFields: boolean;
  readonly username: string;
  /** The form resumes an authorization request, whose integration a Cancel answers with `access_denied`. */
  readonly cancellable: boolean;
}

/**
 * The login form. Contract for outside tests: inputs named `username` and `password`, a hidden CSRF token. For an
 * authorization request, a Cancel button (after Sign in, so Enter still signs in; `formnovalidate`, so it needs no
 * password) by which a user who will not sign in sends the integration `access_denied` rather than leaving it waiting.
 * @see RFC 6749 §3.1 (the server authenticates the resource owner), §4.1.2.1 (access_denied), RFC 6819 §4.4.1.4
 *   (CSRF on forms).
 */
export function loginPageBody(model: LoginPageModel, messages: PageMessages = ENGLISH_PAGE_MESSAGES): string {
  const m = messages;
  const error = model.errorHtml ? `<p class="error" role="alert" id="login-error">${model.errorHtml}</p>` : '';
  // After a refusal both fields are marked and tied to the message (WCAG 3.3.1); with the username kept, the
  // cursor starts where the retry is typed. Any other message is tied to them without marking them.
  const invalid = model.errorHtml ? `${model.errorInFields ? ' aria-invalid="true"' : ''} aria-describedby="login-error"` : '';
  const passwordNext = model.errorHtml !== null && model.username !== '';
  // <bdi>: a name in another script direction keeps to itself instead of reordering the sentence around it.
  const product = `<strong>${escapeHtml(model.productName)}</strong>`;
  const intro = model.clientName === model.productName
    ? messageHtml(m.signInIntro, { product })
    : messageHtml(m.signInIntroToClient, { product, client: `<strong><bdi>${escapeHtml(model.clientName)}</bdi></strong>` });
  return `<h1>${messageHtml(m.signInTitle)}</h1>
<p>${intro}</p>
${error}
<form method="post" action="${escapeHtml(model.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(model.csrfToken)}">
<input type="hidden" name="request_id" value="${escapeHtml(model.requestId)}">
<label for="username">${messageHtml(m.usernameLabel)}</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(model.username)}"${invalid}${passwordNext ? '' : ' autofocus'}>
<label for="password">${messageHtml(m.passwordLabel)}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${invalid}${passwordNext ? ' autofocus' : ''}>
<div class="actions"><button type="submit" class="primary">${messageHtml(m.signInButton)}</button>${model.cancellable
    ? `\n<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>${messageHtml(m.cancelButton)}</button>` : ''}</div>
</form>`;
}
