// What a body parser (the router's own, or the host's express.urlencoded/json) refused, as the request error it is.
import { InvalidRequestError, UnreadableBodyError } from '../errors.js';

/** body-parser's `type`s of a request it could not read; every other error (a host's 401, 403 or 429 too) is not one. */
const REFUSALS = new Set([
  'entity.parse.failed', 'entity.too.large', 'parameters.too.many', 'charset.unsupported', 'encoding.unsupported',
  'request.aborted', 'request.size.invalid',
]);

/** A body whose Content-Encoding did not inflate: body-parser passes zlib's error on as a 400 with zlib's `code`. */
function isBadCompression(code: unknown): boolean {
  return typeof code === 'string' && code.startsWith('Z_');
}

/** True when `err` is a body parser's refusal of the request body (body-parser's 4xx errors and their `type`). */
export function isBodyParserRefusal(err: unknown): boolean {
  const { status, type, code } = (err ?? {}) as { status?: unknown; type?: unknown; code?: unknown };
  return typeof status === 'number' && status >= 400 && status < 500 && ((typeof type === 'string' && REFUSALS.has(type)) || isBadCompression(code));
}

/**
 * A body-parser refusal as the request error it is: 413 too large or too many fields, 415 charset or encoding
 * (pages; 400 `invalid_request` at the token, revocation and introspection endpoints), anything else unreadable
 * (malformed JSON, an aborted or mis-sized body) `invalid_request`. Anything that is no such refusal is returned
 * unchanged.
 * @see RFC 6749 §5.2 (invalid_request), RFC 9110 §15.5.14, §15.5.16.
 */
export function fromBodyParser(err: unknown): unknown {
  if (!isBodyParserRefusal(err)) return err;
  const { type, code } = err as { type?: string; code?: unknown };
  if (type === 'entity.too.large') return new UnreadableBodyError('request body too large', 413);
  if (type === 'parameters.too.many') return new UnreadableBodyError('too many parameters', 413);
  if (type === 'charset.unsupported') return new UnreadableBodyError('the charset of the body is not supported', 415);
  if (type === 'encoding.unsupported' || isBadCompression(code)) return new UnreadableBodyError('Content-Encoding is not supported', 415);
  return new InvalidRequestError('request body could not be read');
}
