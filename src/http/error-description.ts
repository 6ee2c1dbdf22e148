// The one place an error_description is made safe to send: RFC 6749's character set, a bounded length.

// error_description = 1*( %x20-21 / %x23-5B / %x5D-7E ): printable ASCII without `"` and `\`.
const OUTSIDE_SET = /[^\x20\x21\x23-\x5B\x5D-\x7E]/g;
const MAX_LENGTH = 300;

/**
 * `text` held to the error_description grammar, whatever produced it: `"` becomes `'`, `\` becomes `/`, any
 * other character outside the set (controls, non-ASCII) becomes `?`, and the result is cut at 300 characters.
 * The messages themselves never quote request input (they name server vocabulary only); this is the net under
 * them, applied where every JSON error body, redirect error and `WWW-Authenticate` challenge is built.
 * @see RFC 6749 §5.2 and §4.1.2.1 (`error_description` charset), RFC 6750 §3 (the same in a challenge).
 */
export function toErrorDescription(text: string): string {
  const clean = text.replace(OUTSIDE_SET, (c) => (c === '"' ? "'" : c === '\\' ? '/' : '?'));
  return clean.length === 0 ? 'the request was refused' : clean.slice(0, MAX_LENGTH);
}
