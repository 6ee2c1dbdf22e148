// The username a refused sign-in shows again in its form: what was typed, cut to a length a page keeps, as text HTML can carry.

/** Most UTF-16 code units shown again: a username no user directory keeps is refused before this matters. */
const MAX_UNITS = 200;

// C0 controls but tab, line feed and carriage return, and DEL (each a parse error in HTML text and attribute values),
// and a surrogate without its other half (which UTF-8 cannot encode).
const UNSHOWABLE = /[\0-\x08\x0B\x0C\x0E-\x1F\x7F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The login form's `username` value after a refused sign-in (WCAG 3.3.1 keeps it so only the password is typed again).
 * Cut at 200 code units, one fewer when the cut would split a surrogate pair (an emoji at the edge): the lone half
 * cannot be encoded in UTF-8 and went out as U+FFFD. Controls, and a lone surrogate typed as such, are shown as U+FFFD,
 * which a browser's HTML parser makes of a NUL anyway, so the page's bytes stay well-formed HTML.
 * @see RFC 3629 §3 (UTF-8 encodes no surrogate), WHATWG HTML's parse errors "unexpected-null-character" and
 * "control-character-in-input-stream".
 */
export function echoedUsername(typed: unknown): string {
  if (typeof typed !== 'string') return '';
  let cut = typed.length > MAX_UNITS ? typed.slice(0, MAX_UNITS) : typed;
  const last = cut.charCodeAt(cut.length - 1);
  if (typed.length > MAX_UNITS && last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut.replace(UNSHOWABLE, '\uFFFD');
}
