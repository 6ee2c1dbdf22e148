// The consent page: names the integration and what it asks for, with Allow and Deny.
import { escapeHtml } from './escape-html.js';

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
}

/**
 * The consent form. Contract for outside tests: submit buttons named `decision` with values `allow` and `deny`, and
 * `switch` ("use another account") when `switchAccount`.
 * @see RFC 6749 §4.1.1 ("the authorization server … establishes whether the resource owner grants or denies
 * the client's access request"), RFC 6819 §4.4.1.4 (CSRF protection).
 */
export function consentPageBody(model: ConsentPageModel): string {
  // An all-access grant is not limited to any permission: say so plainly, so nobody mistakes it for a narrow one.
  const scopes = model.allAccess
    ? `<p><strong>It asks for full access to your account:</strong> it will be able to do everything you can do in ${escapeHtml(model.productName)}, on your behalf.</p>`
    : model.scope.length > 0
      ? `<p>It asks for these permissions:</p>\n<ul>${model.scope.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>`
      : `<p>It asks to access ${escapeHtml(model.productName)} on your behalf.</p>`;
  // <bdi>: a name in another script direction keeps to itself instead of reordering the sentence around it.
  const client = `<bdi>${escapeHtml(model.clientName)}</bdi>`;
  return `<h1>Allow ${client}?</h1>
<p><strong>${client}</strong> wants to access your ${escapeHtml(model.productName)} account.</p>
${scopes}
<p class="muted">Signed in as <bdi>${escapeHtml(model.userName)}</bdi>. After you choose, you will be sent back to ${escapeHtml(model.redirectOrigin)}. Deny shares nothing with ${client}; if you allow, you can withdraw its access at any time under <a href="${escapeHtml(model.consentsUrl)}">Connected applications</a>.</p>
<form method="post" action="${escapeHtml(model.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(model.csrfToken)}">
<input type="hidden" name="request_id" value="${escapeHtml(model.requestId)}">
<input type="hidden" name="resume" value="${escapeHtml(model.resume)}">
<div class="actions">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>${model.switchAccount
    ? `\n<p class="muted">Not <bdi>${escapeHtml(model.userName)}</bdi>? <button type="submit" name="decision" value="switch" class="link">Use another account</button></p>` : ''}
</form>`;
}
