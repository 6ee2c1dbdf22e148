// The consent page: names the integration and what it asks for, with Allow and Deny.
import { escapeHtml } from './escape-html.js';
import { messageHtml } from './format-message.js';
import { ENGLISH_PAGE_MESSAGES, type PageMessages } from './page-messages.js';

/** What the consent form needs. */
export interface ConsentPageModel {
  readonly action: string;
  readonly csrfToken: string;
  readonly requestId: string;
  /**
   * The authorization request itself (`encodeLoginRequest`), so a form whose session ended while it was open
   * is asked again from the start instead of refused.
   */
  readonly resume: string;
  readonly clientName: string;
  readonly userName: string;
  /** The scopes' sentences, in the page's language. */
  readonly scope: readonly string[];
  /** The request is for a token without a scope, which the server treats as all-access. */
  readonly allAccess: boolean;
  /** Names the service on the all-access warning. */
  readonly productName: string;
  readonly redirectOrigin: string;
  /** Where the user withdraws access later (the connected-applications page). */
  readonly consentsUrl: string;
  /**
   * Offer "use another account": the user signed in through the router's own form, which the router can end. A
   * host's sign-in (`currentUser`) is the host's to end, so its users are not offered it.
   */
  readonly switchAccount: boolean;
  /** Shown again after a click on an expired copy of the page, which was not taken: say so (`consentFormExpired`). */
  readonly expiredNotice?: boolean;
}

/**
 * The consent form. Contract for outside tests: submit buttons named `decision` with values `allow` and `deny`, and
 * `switch` ("use another account") when `switchAccount`.
 * @see RFC 6749 §4.1.1 ("the authorization server … establishes whether the resource owner grants or denies
 * the client's access request"), RFC 6819 §4.4.1.4 (CSRF protection).
 */
export function consentPageBody(model: ConsentPageModel, messages: PageMessages = ENGLISH_PAGE_MESSAGES): string {
  const m = messages;
  const product = escapeHtml(model.productName);
  // An all-access grant is not limited to any permission: say so plainly, so nobody mistakes it for a narrow one.
  const scopes = model.allAccess
    ? `<p><strong>${messageHtml(m.consentAllAccessLead)}</strong> ${messageHtml(m.consentAllAccess, { product })}</p>`
    : model.scope.length > 0
      ? `<p>${messageHtml(m.consentScopesIntro)}</p>\n<ul>${model.scope.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>`
      : `<p>${messageHtml(m.consentNoScopes, { product })}</p>`;
  // <bdi>: a name in another script direction keeps to itself instead of reordering the sentence around it.
  const client = `<bdi>${escapeHtml(model.clientName)}</bdi>`;
  const user = `<bdi>${escapeHtml(model.userName)}</bdi>`;
  const consentsLink = `<a href="${escapeHtml(model.consentsUrl)}">${messageHtml(m.consentsTitle)}</a>`;
  // An alert, as the sign-in page's errors: the click did nothing, and the user is told why before choosing again.
  const notice = model.expiredNotice === true ? `<p class="error" role="alert">${messageHtml(m.consentFormExpired, { client })}</p>\n` : '';
  return `<h1>${messageHtml(m.consentTitle, { client })}</h1>
${notice}<p>${messageHtml(m.consentWants, { client: `<strong>${client}</strong>`, product })}</p>
${scopes}
<p class="muted">${messageHtml(m.signedInAs, { user })} ${messageHtml(m.consentAfterChoice, { origin: escapeHtml(model.redirectOrigin), client, consentsLink })}</p>
<form method="post" action="${escapeHtml(model.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(model.csrfToken)}">
<input type="hidden" name="request_id" value="${escapeHtml(model.requestId)}">
<input type="hidden" name="resume" value="${escapeHtml(model.resume)}">
<div class="actions">
<button type="submit" name="decision" value="allow" class="primary">${messageHtml(m.allowButton)}</button>
<button type="submit" name="decision" value="deny" class="secondary">${messageHtml(m.denyButton)}</button>
</div>${model.switchAccount
    ? `\n<p class="muted">${messageHtml(m.notUser, { user })} <button type="submit" name="decision" value="switch" class="link">${messageHtml(m.switchAccountButton)}</button></p>` : ''}
</form>`;
}
