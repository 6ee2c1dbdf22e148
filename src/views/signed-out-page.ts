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
