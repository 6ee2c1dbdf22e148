// The page shown after signing out.
import { escapeHtml } from './escape-html.js';
import { messageHtml } from './format-message.js';
import { ENGLISH_PAGE_MESSAGES, type PageMessages } from './page-messages.js';

/**
 * Says the sign-in at this authorization server has ended. It links nowhere a request could choose: an
 * address taken from the request would make the sign-out form an open redirect (RFC 9700 §4.11).
 * @see RFC 6749 §10.12, RFC 9700 §4.11.
 */
export function signedOutPageBody(productName: string, messages: PageMessages = ENGLISH_PAGE_MESSAGES): string {
  return `<h1>${messageHtml(messages.signedOutHeading)}</h1>
<p>${messageHtml(messages.signedOutText, { product: escapeHtml(productName) })}</p>
<p class="muted">${messageHtml(messages.signedOutClose)}</p>`;
}

/**
 * Says the sign-in was not ended: the host signed the user in (`UserAuth.currentUser`), and only the host's
 * sign-out ends that. `logoutUrl` is the host's own address (checked by hostLogoutUrl), never the request's.
 * @see RFC 6749 §10.12, RFC 9700 §4.11.
 */
export function stillSignedInPageBody(productName: string, logoutUrl: string | null, messages: PageMessages = ENGLISH_PAGE_MESSAGES): string {
  const link = messageHtml(messages.hostSignOutLink);
  const hostSignOut = logoutUrl === null ? link : `<a href="${escapeHtml(logoutUrl)}">${link}</a>`;
  return `<h1>${messageHtml(messages.stillSignedInHeading)}</h1>
<p>${messageHtml(messages.stillSignedInText, { product: escapeHtml(productName), hostSignOut })}</p>`;
}
