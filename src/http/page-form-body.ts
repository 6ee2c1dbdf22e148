// The form body of the login, consent and withdraw pages, with the same limits whether the router or the host parsed it.
import express, { type Request, type RequestHandler } from 'express';
import { InvalidRequestError, UnreadableBodyError } from '../errors.js';
import { fromBodyParser } from './from-body-parser.js';
import { startBodyDeadline } from './body-deadline.js';
import { isBodyAlreadyRead, preParsedFields } from './pre-parsed-body.js';
import { checkFormBodyEncoding, checkTransferCoding } from './form-body-encoding.js';
import { parameterLabel } from '../checks/parameter-label.js';

/** The most fields a page form can carry (the login form has five). */
export const PAGE_FORM_FIELD_LIMIT = 20;

/**
 * The largest page form body: the login form's `request_id` (the authorization request, at most 12,000
 * characters: `fitsLoginForm`) with room for a username, a password and the CSRF token.
 */
export const PAGE_FORM_BODY_LIMIT = 16 * 1024;

/** Each field once and a string; browsers' forms never repeat or nest these fields. */
function onlyStrings(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, string> {
  for (const [name, value] of entries) {
    if (Array.isArray(value) && value.length > 1) throw new InvalidRequestError(`${parameterLabel(name)} is repeated`);
    if (typeof value !== 'string') throw new InvalidRequestError(`${parameterLabel(name)} is malformed`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function isForm(req: Request): boolean {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/**
 * Parses the page forms with the router's limits (16 KB, 20 fields, each field once). When a host parser
 * (a global `express.urlencoded({ extended: true, limit: '1mb' })`, say) read the body first, the same limits
 * are applied to what it parsed. Either way a refused body is an `invalid_request` page, never a 5xx: 413 for
 * too large or too many fields, 415 for a charset other than UTF-8 or ISO-8859-1 or any `Content-Encoding`
 * (browsers never compress a form), 408 when the body is not in within `timeoutSeconds`, 400 otherwise.
 * @see RFC 6749 §3.1 (parameters at most once), RFC 6819 §4.4.1.4 (the forms these bodies carry),
 * RFC 9110 §15.5.9, §15.5.14, §15.5.16 (408, 413, 415).
 */
export function createPageFormBody(timeoutSeconds: number): RequestHandler {
  // inflate: false: a compressed form is refused (415) rather than decompressed at an attacker's choosing.
  const parse = express.urlencoded({ extended: false, limit: PAGE_FORM_BODY_LIMIT, parameterLimit: PAGE_FORM_FIELD_LIMIT, inflate: false });
  return function pageFormBody(req, res, next) {
    const accept = (entries: ReadonlyArray<readonly [string, unknown]>): void => {
      try {
        req.body = onlyStrings(entries);
      } catch (err) {
        next(err);
        return;
      }
      next();
    };
    if (!isBodyAlreadyRead(req)) {
      // A declared length over the limit is refused before any byte is read: body-parser would read the whole
      // body off the socket first, so a client that declared more than it sends would wait for the deadline.
      if (Number(req.headers['content-length']) > PAGE_FORM_BODY_LIMIT) {
        req.resume();
        next(new UnreadableBodyError('request body too large', 413));
        return;
      }
      try {
        checkTransferCoding(req);
      } catch (err) {
        req.resume();
        next(err);
        return;
      }
      // Whichever comes first, the parser's answer or the deadline, is the only one acted on.
      let settled = false;
      const cancelDeadline = startBodyDeadline(req, timeoutSeconds, () => {
        settled = true;
        next(new UnreadableBodyError('the form did not arrive in time', 408));
      });
      parse(req, res, (err?: unknown) => {
        if (settled) return;
        settled = true;
        cancelDeadline();
        if (err) next(fromBodyParser(err));
        else accept(Object.entries((req.body ?? {}) as Record<string, unknown>));
      });
      return;
    }
    try {
      // What the router's own parser would have seen: only a form body counts, and one it would have refused
      // (compressed, another charset: a host parser may have inflated or decoded it) is refused here too.
      if (isForm(req)) checkFormBodyEncoding(req);
      accept(isForm(req) ? preParsedFields(req, { bytes: PAGE_FORM_BODY_LIMIT, fields: PAGE_FORM_FIELD_LIMIT }) : []);
    } catch (err) {
      next(err);
    }
  };
}
