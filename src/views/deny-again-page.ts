// The answer to a Deny whose session ended while its consent page was open: nothing was sent, and one click refuses.
import { escapeHtml } from './escape-html.js';
import { messageHtml } from './format-message.js';
import { ENGLISH_PAGE_MESSAGES, type PageMessages } from './page-messages.js';

/** What the page needs: the request the Deny carried, and a token of the login form's (no session vouches for one). */
export interface DenyAgainPageModel {
  /** The sign-in form's address, whose Cancel is the refusal that needs no identity. */
  readonly action: string;
  readonly csrfToken: string;
  /** The authorization request (`encodeLoginRequest`), as the sign-in form carries it. */
  readonly requestId: string;
  readonly clientName: string;
  /** What the notice says: the session ended (the default), or the request asks for a sign-in that cannot be made here. */
  readonly message?: 'consentFormExpiredDeny' | 'consentFormExpiredFreshSignIn';
}

/**
 * The notice that the click was not taken, in an alert, and a Deny button: the sign-in form's Cancel (its own
 * double-submit token, so a forged POST that lands here sends nothing either), which sends the integration
 * `access_denied` without asking who is there. A Deny needs no sign-in, so none is asked for, even where only the
 * host's login (which has no Cancel) could sign the user in.
 * @see RFC 6749 §4.1.2.1 (access_denied), §10.12 (CSRF), WCAG 2.2.1 (a timed-out form continues), 3.3.1.
 */
export function denyAgainPageBody(model: DenyAgainPageModel, messages: PageMessages = ENGLISH_PAGE_MESSAGES): string {
  const m = messages;
  const client = `<bdi>${escapeHtml(model.clientName)}</bdi>`;
  return `<h1>${messageHtml(m.consentTitle, { client })}</h1>
<p class="error" role="alert">${messageHtml(m[model.message ?? 'consentFormExpiredDeny'], { client })}</p>
<form method="post" action="${escapeHtml(model.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(model.csrfToken)}">
<input type="hidden" name="request_id" value="${escapeHtml(model.requestId)}">
<div class="actions"><button type="submit" name="cancel" value="deny" class="secondary">${messageHtml(m.denyButton)}</button></div>
</form>`;
}
