// Reads an application/x-www-form-urlencoded body with a size limit, rejecting repeated parameters.
import type { Request } from 'express';
import { InvalidRequestError, UnreadableBodyError } from '../errors.js';
import { startBodyDeadline } from './body-deadline.js';
import { checkFormBodyEncoding, decodeFormBody } from './form-body-encoding.js';
import { isBodyAlreadyRead, preParsedFields } from './pre-parsed-body.js';
import { parameterLabel } from '../checks/parameter-label.js';
import { requireSingleHeader } from './authorization-header.js';

/** The most a token, revoke or introspect request can need; larger bodies are refused. */
export const FORM_BODY_LIMIT = 8 * 1024;

/** A parsed form: the parameters the endpoint reads, each at most once; empty values dropped (RFC 6749 §3.1). */
export type FormParams = ReadonlyMap<string, string>;

/**
 * A host parser's array (a name sent more than once) as its non-empty items: none is `''`, one is that item. A
 * one-item array is left an array (refused): only bracket syntax (`a[]=x`) makes one, which is not a plain parameter.
 */
function withoutEmpty(value: unknown): unknown {
  if (!Array.isArray(value) || value.length < 2) return value;
  const filled = value.filter((item) => item !== '');
  return filled.length === 0 ? '' : filled.length === 1 ? filled[0] : filled;
}

function toParams(entries: Iterable<[string, unknown]>, reads: ReadonlySet<string>): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, raw] of entries) {
    // RFC 6749 §3.1: parameters the endpoint does not read are ignored, repeated or not (a `state` sent twice to the
    // token endpoint, RFC 8707's repeated `resource`); "Parameters sent without a value MUST be treated as if they
    // were omitted", so `grant_type=&grant_type=…` names it once.
    if (!reads.has(name)) continue;
    const value = withoutEmpty(raw);
    if (value === '') continue;
    // RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once." A one-item array is
    // bracket syntax (`grant_type[]=x`), sent once: malformed, not repeated.
    if (params.has(name) || (Array.isArray(value) && value.length > 1)) throw new InvalidRequestError(`${parameterLabel(name)} is repeated`);
    if (typeof value !== 'string') throw new InvalidRequestError(`${parameterLabel(name)} is malformed`);
    params.set(name, value);
  }
  return params;
}

function tooLarge(): UnreadableBodyError {
  return new UnreadableBodyError('request body too large', 413);
}

/**
 * The body when all the bytes its Content-Length declares sit in the stream's buffer already (the usual case:
 * it came in the packet that carried the headers), read without listeners, a promise or a deadline;
 * `undefined` when they have not all arrived, there is no Content-Length (chunked), or someone else reads the
 * stream (flowing, a decoder set, already ended).
 */
function bufferedBody(req: Request): Buffer | undefined {
  const declared = req.headers['content-length'];
  if (declared === undefined || req.readableEnded || req.readableFlowing === true || req.readableEncoding !== null) return undefined;
  const length = Number(declared);
  if (!(length <= FORM_BODY_LIMIT) || req.readableLength !== length) return undefined;
  const body = length === 0 ? Buffer.alloc(0) : (req.read(length) as Buffer);
  // Flowing from now on, so the stream still ends (and emits 'end') once the parser has seen the message out.
  req.resume();
  return body;
}

/** The raw body, at most FORM_BODY_LIMIT bytes, in full within `timeoutSeconds`. */
function readBody(req: Request, timeoutSeconds: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > FORM_BODY_LIMIT) {
      reject(tooLarge());
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      cancelDeadline();
      outcome();
    };
    // A body that stops (or trickles) is answered 408; the caller closes the connection with the answer.
    const cancelDeadline = startBodyDeadline(req, timeoutSeconds, () => settle(() => {
      req.removeAllListeners('data');
      reject(new UnreadableBodyError('the request body did not arrive in time', 408));
    }));
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > FORM_BODY_LIMIT) {
        settle(() => reject(tooLarge()));
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => settle(() => resolve(Buffer.concat(chunks))));
    req.on('error', () => settle(() => reject(new InvalidRequestError('request body could not be read'))));
    // An aborted upload must not leave the request hanging; after 'end' there is nothing to reject (nor an error to build).
    req.on('close', () => { if (!req.readableEnded) settle(() => reject(new InvalidRequestError('request body was not completed'))); });
  });
}

/**
 * Parses the form body of a POST to the token (or revocation, introspection) endpoint, keeping the parameters it
 * `reads` (parameter-label.ts).
 * Works whether or not the host app already ran a body parser before the router, with the same limits either
 * way (a host's `express.urlencoded({ limit: '1mb' })` does not lift the 8 KB limit); arrays and objects that an
 * extended parser made of `a[]=` or `a[b]=` are refused as repeated or malformed parameters. The router's own
 * read decodes only identity-encoded UTF-8 or ISO-8859-1 bodies, and waits at most `timeoutSeconds` for them.
 * @throws InvalidRequestError for a wrong or repeated content type, or a repeated parameter; UnreadableBodyError for an
 * oversized, compressed, wrongly encoded or late body.
 * @see RFC 6749 §3.2 ("MUST use the HTTP POST method", "application/x-www-form-urlencoded"), §3.1, Appendix B.
 */
export async function readForm(req: Request, timeoutSeconds: number, reads: ReadonlySet<string>): Promise<FormParams> {
  // Node reads the first of two Content-Type headers, a proxy may read the last: the body's meaning is not settled.
  requireSingleHeader(req, 'content-type', 'Content-Type');
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new InvalidRequestError('the request body must be application/x-www-form-urlencoded');
  }
  // Before anything is read: a compressed or wrongly encoded body gets the same answer whoever read it.
  const charset = checkFormBodyEncoding(req);
  // A host parser read the body first (its own, larger limits): hold what it parsed to ours.
  if (isBodyAlreadyRead(req)) return toParams(preParsedFields(req, { bytes: FORM_BODY_LIMIT }), reads);
  // This runs in the 'request' event, which Node's parser emits before it parses the body; the parser pushes
  // the rest of the packet before any promise continues, so after one turn of the microtask queue a body that
  // came with the headers is buffered.
  if (req.readableLength === 0) await Promise.resolve();
  return toParams(decodeFormBody(bufferedBody(req) ?? (await readBody(req, timeoutSeconds)), charset), reads);
}
