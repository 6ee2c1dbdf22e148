// A body the host app's own parser (express.urlencoded, express.json, …) read before the router: held to the router's limits.
import type { Request } from 'express';
import { UnreadableBodyError } from '../errors.js';
import { parseUrlencoded } from './parse-urlencoded.js';

/** The router's limits on a form body, whoever parsed it. */
export interface FormLimits {
  /** Bytes of the body (and, for a body parsed by the host, of its fields re-encoded). */
  readonly bytes: number;
  /** Fields at most; none when absent (the byte limit bounds them). */
  readonly fields?: number;
}

/**
 * True when something before the router already consumed the request body (a host body parser): the stream
 * cannot be read again, so the router must work from `req.body` and hold it to its own limits.
 */
export function isBodyAlreadyRead(req: Request): boolean {
  return req.readableEnded;
}

/** Encoded bytes and leaf values of a parsed body, counted without recursion and only until `stopAt`. */
function measure(entries: ReadonlyArray<readonly [string, unknown]>, stopAt: number): { bytes: number; fields: number } {
  let bytes = 0;
  let fields = 0;
  const stack: Array<readonly [string, unknown]> = [...entries];
  while (stack.length > 0 && bytes <= stopAt) {
    const [name, value] = stack.pop()!;
    // `name=` (a nested `a[b]=` counts each part and one bracket: a lower bound of the raw size).
    bytes += encodeURIComponent(name).length + 1;
    if (value !== null && typeof value === 'object') {
      // One push per entry: spread into a single call, an object of a permissive host parser's 150,000 fields
      // overflowed the call stack (RangeError, a 500) before the limit could refuse it.
      for (const entry of Object.entries(value as Record<string, unknown>)) stack.push(entry);
    } else {
      // The value, and the `&` before every field but the first.
      bytes += encodeURIComponent(String(value)).length + (fields > 0 ? 1 : 0);
      fields += 1;
    }
  }
  return { bytes, fields };
}

/**
 * The fields with what hpp (HTTP parameter pollution middleware) set aside put back: after a host's body parser it
 * moves every repeated field's values to `req.bodyPolluted` and leaves one in `req.body`, so a body with a parameter
 * twice (a wrong and a right `client_secret`, two `scope`s) reached the router as a body with it once. Put back as
 * the parser's array, the field is refused as repeated, or kept as one value when all but one are empty, as without
 * hpp. Only hpp's own shape is read: an array under a name the body has.
 * @see RFC 6749 §3.1 ("MUST NOT be included more than once"), §3.2.
 */
function withPollutedPutBack(req: Request, entries: Array<[string, unknown]>): Array<[string, unknown]> {
  const polluted = (req as { bodyPolluted?: unknown }).bodyPolluted;
  if (polluted === null || typeof polluted !== 'object') return entries;
  return entries.map(([name, value]): [string, unknown] => {
    const aside: unknown = Object.hasOwn(polluted, name) ? (polluted as Record<string, unknown>)[name] : undefined;
    return Array.isArray(aside) ? [name, aside] : [name, value];
  });
}

function tooLarge(): UnreadableBodyError {
  // The words and error of the router's own reader, so the answer does not depend on who parsed the body.
  return new UnreadableBodyError('request body too large', 413);
}

/**
 * The fields of a body a host parser already read, as `[name, value]` entries in their parsed order, held to
 * the router's limits: the declared Content-Length first, then (chunked or compressed bodies declare none that
 * counts) the size of the parsed fields themselves. Values stay as the host's parser made them: strings, or
 * arrays and objects from an extended parser, which the caller refuses (hpp's repeats put back as such arrays). A string or Buffer body (express.text,
 * express.raw) is parsed as the form it is.
 * @throws UnreadableBodyError `request body too large` or `too many parameters` (413 on pages, 400 elsewhere).
 * @see RFC 6749 §3.2 (form-encoded requests), §3.1 (parameters at most once).
 */
export function preParsedFields(req: Request, limits: FormLimits): Array<[string, unknown]> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limits.bytes) throw tooLarge();
  const body = (req as { body?: unknown }).body;
  let entries: Array<[string, unknown]>;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (Buffer.byteLength(text) > limits.bytes) throw tooLarge();
    entries = parseUrlencoded(text);
  } else if (body !== null && typeof body === 'object') {
    entries = withPollutedPutBack(req, Object.entries(body as Record<string, unknown>));
  } else {
    entries = [];
  }
  const size = measure(entries, limits.bytes);
  if (size.bytes > limits.bytes) throw tooLarge();
  if (limits.fields !== undefined && size.fields > limits.fields) throw new UnreadableBodyError('too many parameters', 413);
  return entries;
}
