// The error page for authorization requests that must not be redirected (RFC 6749 §4.1.2.1).
import { escapeHtml } from './escape-html.js';
import { messageHtml } from './format-message.js';
import { ENGLISH_PAGE_MESSAGES, type PageMessages } from './page-messages.js';

/**
 * The body of an error page: the RFC error code and a description, both escaped. `audience` says whom the
 * description is written for: the user (a form expired, a store is down), or the developer of the application
 * that built a bad authorization request (`unknown client_id`), which the user gets in plain words first and the
 * description after, as the details to pass on. `descriptionLang`: the description's language when it is not the
 * page's (an English description on a translated page), marked so a screen reader reads it as such.
 * @see RFC 6749 §4.1.2.1 ("SHOULD inform the resource owner of the error and MUST NOT automatically redirect"),
 *   WCAG 2.2 §3.1.2 (language of parts).
 */
export function errorPageBody(
  error: string, description: string, audience: 'user' | 'developer' = 'user', messages: PageMessages = ENGLISH_PAGE_MESSAGES,
  descriptionLang: string | null = null,
): string {
  const m = messages;
  const lang = descriptionLang === null ? '' : ` lang="${escapeHtml(descriptionLang)}"`;
  const code = `<code>${escapeHtml(error)}</code>`;
  if (audience === 'developer') {
    const said = lang === '' ? escapeHtml(description) : `<span${lang}>${escapeHtml(description)}</span>`;
    return `<h1>${messageHtml(m.errorHeading)}</h1>
<p class="error" role="alert">${messageHtml(m.errorFromApplication)}</p>
<p class="muted">${messageHtml(m.errorDetails, { details: `${code}: ${said}` })}</p>`;
  }
  return `<h1>${messageHtml(m.errorHeading)}</h1>
<p class="error" role="alert"${lang}>${escapeHtml(description)}</p>
<p class="muted">${messageHtml(m.errorCode, { code })}</p>`;
}
