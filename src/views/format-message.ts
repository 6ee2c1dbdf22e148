// Puts values into a page message: the message is text, the values are escaped or given as the router's own markup.

/** A `{name}` placeholder: letters only, so other braces in a translation stay text. */
const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

/** Escapes text for element content: quotes need no escaping there, and stay as the English pages always wrote them. */
function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/**
 * The message as HTML for element content: its text escaped, each `{name}` replaced by `html[name]`, markup the
 * router built from an escaped value (`<bdi>…</bdi>`). One pass over the message, so a value that itself reads
 * `{user}` is not replaced again; a `{name}` without a value stays as text.
 */
export function messageHtml(message: string, html: Readonly<Record<string, string>> = {}): string {
  return message.split(PLACEHOLDER).map((part, at) => {
    // split() with a capturing group: odd entries are the placeholders' names.
    if (at % 2 === 0) return escapeText(part);
    return Object.hasOwn(html, part) ? html[part]! : escapeText(`{${part}}`);
  }).join('');
}

/**
 * The message as plain text (a `<title>`, an attribute), each `{name}` replaced by `text[name]`; the caller escapes the
 * whole, for its context.
 */
export function messageText(message: string, text: Readonly<Record<string, string>> = {}): string {
  return message.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(text, name) ? text[name]! : whole));
}
