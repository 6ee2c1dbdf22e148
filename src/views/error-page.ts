// The error page for authorization requests that must not be redirected (RFC 6749 §4.1.2.1).
import { escapeHtml } from './escape-html.js';

/**
 * The body of an error page: the RFC error code and a description, both escaped. `audience` says whom the
 * description is written for: the user (a form expired, a store is down), or the developer of the application
 * that built a bad authorization request (`unknown client_id`), which the user gets in plain words first and the
 * description after, as the details to pass on.
 * @see RFC 6749 §4.1.2.1 ("SHOULD inform the resource owner of the error and MUST NOT automatically redirect").
 */
export function errorPageBody(error: string, description: string, audience: 'user' | 'developer' = 'user'): string {
  if (audience === 'developer') {
    return `<h1>This request cannot be completed</h1>
<p class="error" role="alert">The application that sent you here made a request this service cannot accept, so you have not been sent back to it.</p>
<p class="muted">Return to the application and try again, or contact its support with these details: <code>${escapeHtml(error)}</code>: ${escapeHtml(description)}.</p>`;
  }
  return `<h1>This request cannot be completed</h1>
<p class="error" role="alert">${escapeHtml(description)}</p>
<p class="muted">Error code: <code>${escapeHtml(error)}</code>. Return to the application you came from and try again, or contact its support.</p>`;
}
