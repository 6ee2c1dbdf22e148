// The form body of the login, consent and withdraw pages, with the same limits whether the router or the host parsed it.
import express, { type Request, type RequestHandler } from 'express';
import { InvalidRequestError } from '../errors.js';
import { FORM_BODY_LIMIT } from './read-form.js';
import { isBodyAlreadyRead, preParsedFields } from './pre-parsed-body.js';

/** The most fields a page form can carry (the login form has five). */
export const PAGE_FORM_FIELD_LIMIT = 20;

/** A body-parser refusal (413 too large, too many parameters, bad encoding) as the request error it is. */
function unreadable(err: unknown): unknown {
  const { status, type } = (err ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status !== 'number' || status >= 500) return err;
  if (type === 'entity.too.large') return new InvalidRequestError('request body too large');
  if (type === 'parameters.too.many') return new InvalidRequestError('too many parameters');
  return new InvalidRequestError('request body could not be read');
}

/** Each field once and a string; browsers' forms never repeat or nest these fields. */
function onlyStrings(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, string> {
  for (const [name, value] of entries) {
    if (Array.isArray(value)) throw new InvalidRequestError(`parameter ${name.slice(0, 40)} is repeated`);
    if (typeof value !== 'string') throw new InvalidRequestError(`parameter ${name.slice(0, 40)} is malformed`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function isForm(req: Request): boolean {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/**
 * Parses the page forms with the router's limits (8 KB, 20 fields, each field once). When a host parser
 * (a global `express.urlencoded({ extended: true, limit: '1mb' })`, say) read the body first, the same limits
 * are applied to what it parsed. Either way a refused body is a 400 `invalid_request` page, never a 5xx.
 * @see RFC 6749 §3.1 (parameters at most once), RFC 6819 §4.4.1.4 (the forms these bodies carry).
 */
export function createPageFormBody(): RequestHandler {
  const parse = express.urlencoded({ extended: false, limit: FORM_BODY_LIMIT, parameterLimit: PAGE_FORM_FIELD_LIMIT });
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
      parse(req, res, (err?: unknown) => {
        if (err) next(unreadable(err));
        else accept(Object.entries((req.body ?? {}) as Record<string, unknown>));
      });
      return;
    }
    try {
      // What the router's own parser would have seen: only a form body counts.
      accept(isForm(req) ? preParsedFields(req, { bytes: FORM_BODY_LIMIT, fields: PAGE_FORM_FIELD_LIMIT }) : []);
    } catch (err) {
      next(err);
    }
  };
}
