// The error page for authorization requests that must not be redirected (RFC 6749 §4.1.2.1).
import { escapeHtml } from './escape-html.js';

/**
 * The body of an error page: the RFC error code and a description, both escaped.
 * @see RFC 6749 §4.1.2.1 ("SHOULD inform the resource owner of the error and MUST NOT automatically redirect").
 */
export function errorPageBody(error: string, description: string): string {
  return `<h1>This request cannot be completed</h1>
<p class="error" role="alert">${escapeHtml(description)}</p>
<p class="muted">Error code: <code>${escapeHtml(error)}</code>. Return to the application you came from and try again, or contact its support.</p>`;
}
