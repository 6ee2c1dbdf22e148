// The page shown after signing out.
import { escapeHtml } from './escape-html.js';

/**
 * Says the sign-in at this authorization server has ended. It links nowhere a request could choose: an
 * address taken from the request would make the sign-out form an open redirect (RFC 9700 §4.11).
 * @see RFC 6749 §10.12, RFC 9700 §4.11.
 */
export function signedOutPageBody(productName: string): string {
  return `<h1>You are signed out</h1>
<p>You are no longer signed in to ${escapeHtml(productName)} in this browser. An application that asks for access again will ask you to sign in first.</p>
<p class="muted">You can close this page.</p>`;
}

/**
 * Says the sign-in was not ended: the host signed the user in (`UserAuth.currentUser`), and only the host's
 * sign-out ends that. `logoutUrl` is the host's own address (checked by hostLogoutUrl), never the request's.
 * @see RFC 6749 §10.12, RFC 9700 §4.11.
 */
export function stillSignedInPageBody(productName: string, logoutUrl: string | null): string {
  const name = escapeHtml(productName);
  const where = logoutUrl === null ? 'its own sign-out' : `<a href="${escapeHtml(logoutUrl)}">its own sign-out</a>`;
  return `<h1>You are still signed in</h1>
<p>You signed in on ${name}'s own pages, so this page cannot sign you out: use ${where}. Until then, an application that asks for access can be answered without asking you to sign in.</p>`;
}
