// Reads an application/x-www-form-urlencoded body with a size limit, rejecting repeated parameters.
import type { Request } from 'express';
import { InvalidRequestError } from '../errors.js';
import { isBodyAlreadyRead, preParsedFields } from './pre-parsed-body.js';

/** The most a token, revoke or introspect request can need; larger bodies are refused. */
export const FORM_BODY_LIMIT = 8 * 1024;

/** A parsed form: each parameter at most once; empty values dropped (RFC 6749 §3.1). */
export type FormParams = ReadonlyMap<string, string>;

function toParams(entries: Iterable<[string, unknown]>): Map<string, string> {
  const params = new Map<string, string>();
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    if (seen.has(name) || Array.isArray(value)) {
      // RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once."
      throw new InvalidRequestError(`parameter ${name.slice(0, 40)} is repeated`);
    }
    seen.add(name);
    if (typeof value !== 'string') throw new InvalidRequestError(`parameter ${name.slice(0, 40)} is malformed`);
    // RFC 6749 §3.1: "Parameters sent without a value MUST be treated as if they were omitted."
    if (value !== '') params.set(name, value);
  }
  return params;
}

function readBody(req: Request): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > FORM_BODY_LIMIT) {
      reject(new InvalidRequestError('request body too large'));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > FORM_BODY_LIMIT) {
        reject(new InvalidRequestError('request body too large'));
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => reject(new InvalidRequestError('request body could not be read')));
    // An aborted upload must not leave the request hanging; after 'end' there is nothing to reject (nor an error to build).
    req.on('close', () => { if (!req.readableEnded) reject(new InvalidRequestError('request body was not completed')); });
  });
}

/**
 * Parses the form body of a POST to the token (or revocation, introspection) endpoint.
 * Works whether or not the host app already ran a body parser before the router, with the same limits either
 * way (a host's `express.urlencoded({ limit: '1mb' })` does not lift the 8 KB limit); arrays and objects that an
 * extended parser made of `a[]=` or `a[b]=` are refused as repeated or malformed parameters.
 * @throws InvalidRequestError for a wrong content type, an oversized body or a repeated parameter.
 * @see RFC 6749 §3.2 ("MUST use the HTTP POST method", "application/x-www-form-urlencoded"), §3.1.
 */
export async function readForm(req: Request): Promise<FormParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new InvalidRequestError('the request body must be application/x-www-form-urlencoded');
  }
  // A host parser read the body first (its own, larger limits): hold what it parsed to ours.
  if (isBodyAlreadyRead(req)) return toParams(preParsedFields(req, { bytes: FORM_BODY_LIMIT }));
  const text = await readBody(req);
  return toParams(new URLSearchParams(text).entries());
}
