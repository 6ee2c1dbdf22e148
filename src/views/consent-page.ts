// The consent page: names the integration and what it asks for, with Allow and Deny.
import { escapeHtml } from './escape-html.js';

/** What the consent form needs. */
export interface ConsentPageModel {
  readonly action: string;
  readonly csrfToken: string;
  readonly requestId: string;
  readonly clientName: string;
  readonly userName: string;
  readonly scope: readonly string[];
  /** The request is for a token without a scope, which the server treats as all-access. */
  readonly allAccess: boolean;
  /** Names the service on the all-access warning. */
  readonly productName: string;
  readonly redirectOrigin: string;
}

/**
 * The consent form. Contract for outside tests: submit buttons named `decision` with values `allow` and `deny`.
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
  return `<h1>Allow ${escapeHtml(model.clientName)}?</h1>
<p><strong>${escapeHtml(model.clientName)}</strong> wants to access your account.</p>
${scopes}
<p class="muted">Signed in as ${escapeHtml(model.userName)}. After you choose, you will be sent back to ${escapeHtml(model.redirectOrigin)}.</p>
<form method="post" action="${escapeHtml(model.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(model.csrfToken)}">
<input type="hidden" name="request_id" value="${escapeHtml(model.requestId)}">
<div class="actions">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`;
}
