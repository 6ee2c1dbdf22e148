// What a body parser (the router's own, or the host's express.urlencoded/json) refused, as the request error it is.
import { InvalidRequestError, UnreadableBodyError } from '../errors.js';

/**
 * A body-parser refusal (an error with a 4xx `status` and body-parser's `type`) as the request error it is: 413 too
 * large or too many fields, 415 charset or encoding (pages; 400 `invalid_request` at the token, revocation and
 * introspection endpoints), anything else unreadable (malformed JSON, a bad form) `invalid_request`. Anything else
 * is returned unchanged.
 * @see RFC 6749 §5.2 (invalid_request), RFC 9110 §15.5.14, §15.5.16.
 */
export function fromBodyParser(err: unknown): unknown {
  const { status, type } = (err ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status !== 'number' || status < 400 || status >= 500) return err;
  if (type === 'entity.too.large') return new UnreadableBodyError('request body too large', 413);
  if (type === 'parameters.too.many') return new UnreadableBodyError('too many parameters', 413);
  if (type === 'charset.unsupported') return new UnreadableBodyError('the charset of the form is not supported', 415);
  if (type === 'encoding.unsupported') return new UnreadableBodyError('Content-Encoding is not supported', 415);
  return new InvalidRequestError('request body could not be read');
}
