// The "connected applications" page: a user's consents, each with a Withdraw button.
import { escapeHtml } from './escape-html.js';
import { messageHtml, messageText } from './format-message.js';
import { ENGLISH_PAGE_MESSAGES, type PageMessages } from './page-messages.js';

/** One approved integration as the page shows it. */
export interface ConsentRow {
  readonly clientId: string;
  readonly clientName: string;
  /** The scopes' sentences, in the page's language. */
  readonly scope: readonly string[];
  /** Approved without a scope, which the server treats as all-access. */
  readonly allAccess: boolean;
  /** Approved with scopes, none of which the server still knows (the `scopes` option dropped them): it may do nothing now. */
  readonly scopesDropped: boolean;
  readonly grantedAt: Date;
}

/** What the page needs. */
export interface ConsentsPageModel {
  readonly action: string;
  /**
   * How the user signs out: the router's form (POST /oauth2/logout) for its own sign-in, a link to the host's
   * sign-out (`UserAuth.logoutUrl`) for the host's, or `null` when only the host could and names no address.
   */
  readonly signOut: { readonly action: string } | { readonly href: string } | null;
  readonly csrfToken: string;
  readonly userName: string;
  readonly rows: readonly ConsentRow[];
  /** The integration whose access was just withdrawn (its name, `null` for one deleted meanwhile), said once; `null`: none. */
  readonly withdrawn: { readonly name: string | null } | null;
}

/**
 * Lists the integrations the user approved; withdrawing one revokes its tokens for the user. A sign-out
 * button ends the router's login session, so that no later authorization request is answered silently
 * (remembered consent) from this browser; a user the host signed in gets the host's sign-out instead.
 * `dateText` writes the day of each approval (UTC) in the page's language; English: `YYYY-MM-DD`.
 * @see RFC 6749 §10.2, RFC 6819 §4.4.1.4 (CSRF on forms).
 */
export function consentsPageBody(
  model: ConsentsPageModel, messages: PageMessages = ENGLISH_PAGE_MESSAGES, dateText: (date: Date) => string = (date) => date.toISOString().slice(0, 10),
): string {
  const m = messages;
  // <bdi>, as everywhere a name is shown: a right-to-left name at the start of the sentence keeps to itself.
  const withdrawn = model.withdrawn === null ? null : model.withdrawn.name === null
    ? messageHtml(m.consentWithdrawnUnnamed) : messageHtml(m.consentWithdrawn, { client: `<bdi>${escapeHtml(model.withdrawn.name)}</bdi>` });
  const notice = withdrawn === null ? '' : `<p role="status">${withdrawn}</p>`;
  const rows = model.rows.map((row) => `<li>
<h2><bdi>${escapeHtml(row.clientName)}</bdi></h2>
${permissionsPart(row, m)}
<p class="muted">${messageHtml(m.allowedOn, { date: `<time datetime="${row.grantedAt.toISOString()}">${escapeHtml(dateText(row.grantedAt))}</time>` })}</p>
<form method="post" action="${escapeHtml(model.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(model.csrfToken)}">
<input type="hidden" name="client_id" value="${escapeHtml(row.clientId)}">
<button type="submit" class="secondary" aria-label="${escapeHtml(messageText(m.withdrawLabel, { client: row.clientName }))}">${messageHtml(m.withdrawButton)}</button>
</form>
</li>`).join('\n');
  return `<h1>${messageHtml(m.consentsTitle)}</h1>
<p class="muted">${messageHtml(m.signedInAs, { user: `<bdi>${escapeHtml(model.userName)}</bdi>` })}</p>
${notice}
${model.rows.length > 0 ? `<ul class="plain">${rows}</ul>` : `<p>${messageHtml(m.noConsents)}</p>`}
${signOutPart(model, m)}`;
}

/**
 * What the integration may do: full access, its scopes' sentences, or, for a consent whose every scope the `scopes`
 * option has dropped since, that it has none now (said, so the entry does not read as a page missing its list).
 */
function permissionsPart(row: ConsentRow, m: PageMessages): string {
  if (row.allAccess) return `<p><strong>${messageHtml(m.fullAccess)}</strong></p>`;
  if (row.scope.length > 0) return `<ul>${row.scope.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>`;
  // A consent without a scope under `allAccessWithoutScopes: false` is not "no permission": its tokens reach the
  // routes that require no scope. It shows no list, as before.
  return row.scopesDropped ? `<p>${messageHtml(m.consentsNoPermissions)}</p>` : '';
}

function signOutPart(model: ConsentsPageModel, m: PageMessages): string {
  if (model.signOut === null) return '';
  if ('href' in model.signOut) return `<p class="actions"><a href="${escapeHtml(model.signOut.href)}">${messageHtml(m.signOutButton)}</a></p>`;
  return `<form method="post" action="${escapeHtml(model.signOut.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(model.csrfToken)}">
<div class="actions"><button type="submit" class="secondary">${messageHtml(m.signOutButton)}</button></div>
</form>`;
}
