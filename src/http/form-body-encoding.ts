// Which form bodies the router decodes: identity-encoded, in UTF-8 or ISO-8859-1; anything else is refused.
import type { Request } from 'express';
import { UnreadableBodyError } from '../errors.js';
import { parseUrlencoded } from './parse-urlencoded.js';

/** The two charsets a form body may declare, as Express's own urlencoded parser (the page forms) accepts them. */
export type FormCharset = 'utf-8' | 'iso-8859-1';

function charsetOf(contentType: string): string | undefined {
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === 'charset') {
      return param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    }
  }
  return undefined;
}

/**
 * Refuses a transfer coding other than `chunked` (`Transfer-Encoding: gzip, chunked`): Node's parser removes only
 * the chunked framing, so the body would be read as if it were the form itself. RFC 9112 §6.1: "A server that
 * receives a request message with a transfer coding it does not understand SHOULD respond with 501".
 * @throws UnreadableBodyError (501 on pages, 400 `invalid_request` at the token endpoint, as a Content-Encoding).
 */
export function checkTransferCoding(req: Request): void {
  const codings = req.headers['transfer-encoding'];
  if (codings === undefined) return;
  for (const coding of codings.split(',')) {
    const name = coding.trim().toLowerCase();
    if (name !== '' && name !== 'chunked') throw new UnreadableBodyError('Transfer-Encoding other than chunked is not supported', 501);
  }
}

/**
 * The charset to decode a form body with, refusing what the router would misread: any `Content-Encoding`
 * but `identity` (a gzip body read as text is garbage, and inflating it is work an attacker chooses), and a
 * charset other than UTF-8 or ISO-8859-1 (a UTF-16 body read as UTF-8 is garbage too). ISO-8859-1 is kept
 * because Java's Apache HttpClient declares it by default; for the ASCII values of an OAuth request it is
 * the same bytes.
 * @throws UnreadableBodyError (415 on pages, 400 `invalid_request` at the token endpoint; checkTransferCoding's 501).
 * @see RFC 6749 Appendix B (UTF-8 form encoding), RFC 9110 §8.4 (Content-Encoding), §15.5.16 (415).
 */
export function checkFormBodyEncoding(req: Request): FormCharset {
  checkTransferCoding(req);
  const encoding = (req.headers['content-encoding'] || 'identity').trim().toLowerCase();
  if (encoding !== 'identity') throw new UnreadableBodyError('Content-Encoding is not supported; send the body uncompressed', 415);
  const charset = charsetOf(req.headers['content-type'] ?? '') ?? 'utf-8';
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') {
    throw new UnreadableBodyError('the charset of the request body is not supported; use UTF-8', 415);
  }
  return charset;
}

/** Percent-decoding to ISO-8859-1 characters: `%E9` is `é`, as the charset says (URLSearchParams would read UTF-8). */
function latin1(text: string): string {
  return text.replace(/\+/g, ' ').replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A name or value with `+` read as a space and percent escapes decoded; `undefined` for what only WHATWG's parser reads. */
function decodeComponent(text: string): string | undefined {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    // A `%` not followed by two hex digits, or escapes that are not UTF-8: WHATWG keeps the first and writes
    // U+FFFD for the second, where decodeURIComponent throws.
    return undefined;
  }
}

/**
 * A UTF-8 form body's pairs as WHATWG's parser reads them, in half its time for a token request's short
 * fields (BENCHMARKS.md, sixteenth pass): split on `&` and the first `=`, each part decoded by the engine's
 * `decodeURIComponent`, which reads every well-formed escape as WHATWG does. Anything else is left to
 * the standard parser (parse-urlencoded.ts), so the answer is always its answer.
 */
function decodeUtf8Form(text: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  let start = 0;
  // The next `=` at or after `start` (text.length if none), found once: searched again for every pair, a body
  // of many pairs without one would be scanned to its end each time.
  let eq = -1;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end < 0) end = text.length;
    if (end > start) {
      if (eq < start) {
        eq = text.indexOf('=', start);
        if (eq < 0) eq = text.length;
      }
      const split = eq < end;
      const name = decodeComponent(text.slice(start, split ? eq : end));
      const value = split ? decodeComponent(text.slice(eq + 1, end)) : '';
      if (name === undefined || value === undefined) return parseUrlencoded(text);
      pairs.push([name, value]);
    }
    start = end + 1;
  }
  return pairs;
}

/**
 * The `[name, value]` pairs of an application/x-www-form-urlencoded body, in order, decoded in its charset.
 * @see WHATWG URL §5.1 (application/x-www-form-urlencoded parsing), RFC 6749 Appendix B.
 */
export function decodeFormBody(body: Buffer, charset: FormCharset): Array<[string, string]> {
  if (charset === 'utf-8') return decodeUtf8Form(body.toString('utf8'));
  return body.toString('latin1').split('&').filter((pair) => pair !== '').map((pair) => {
    const eq = pair.indexOf('=');
    return eq < 0 ? [latin1(pair), ''] : [latin1(pair.slice(0, eq)), latin1(pair.slice(eq + 1))];
  });
}
