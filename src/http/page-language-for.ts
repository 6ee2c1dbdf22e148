// The language a page is written in for one request: the host's choice, else Accept-Language, else English.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../options.js';
import { lookUpLanguage } from './accept-language-lookup.js';
import { answeredByHost } from './answered-by-host.js';
import { ENGLISH_PAGES, type PageLanguage, type ResolvedPageLanguages } from '../views/page-languages.js';

/**
 * How long a page waits for an asynchronous `choose` (a profile read from a store): past it, the page is negotiated
 * from Accept-Language, so a slow or hung lookup delays a page by this much at most, never holds it.
 */
export const CHOOSE_TIMEOUT_MS = 1000;

/** Chosen once per request: a page and its error page agree, and the host's hook runs once. */
const chosen = new WeakMap<Request, PageLanguage>();
/**
 * Requests whose route lets a page wait for an asynchronous `choose` (createLazyPageLanguage), until it is asked, each
 * with its route's `next`: a page that fails to render after the wait goes on to the route's own error handler (the
 * router's error page), as a throw from the handler itself does. `req.next` is the enclosing router's, which leaves
 * the route and passes the route's error handler by: the host's error handler answered, with its stack trace.
 */
const mayWait = new WeakMap<Request, NextFunction>();
/** The wait under way for a request's `choose`: a second page write of the request (none is expected) joins it. */
const waiting = new WeakMap<Request, Promise<PageLanguage>>();
const warned = new WeakSet<ResolvedPageLanguages>();
/** What the wait for a slow `choose` ends with. */
const TIMED_OUT = Symbol('timed out');

function logOnce(languages: ResolvedPageLanguages, logger: Logger, problem: string): void {
  if (warned.has(languages)) return;
  warned.add(languages);
  logger.error(`express-oauth-router: pageLanguages.choose ${problem}; the page language is taken from Accept-Language instead`);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  try {
    return typeof (value as PromiseLike<unknown>).then === 'function';
  } catch {
    // A `then` getter that throws: Promise.resolve turns it into a rejection, handled as one.
    return true;
  }
}

/** The available language `tag` names (case aside), if any. */
function languageOf(languages: ResolvedPageLanguages, tag: unknown): PageLanguage | undefined {
  if (typeof tag !== 'string') return undefined;
  return languages.byTag.get(tag) ?? [...languages.byTag.values()].find((l) => l.tag.toLowerCase() === tag.toLowerCase());
}

/** Calls the host's hook: its answer, a thenable, or undefined when it threw (logged once). */
function callChoose(req: Request, languages: ResolvedPageLanguages, logger: Logger): unknown {
  try {
    // A copy: a hook that sorts or edits its `available` must not reorder what Accept-Language is matched against.
    return languages.choose!(req, [...languages.tags]);
  } catch (err) {
    logOnce(languages, logger, `threw (${err instanceof Error ? err.message : String(err)})`);
    return undefined;
  }
}

/** Records the language of `req`: `choice` when it is available, else the best of Accept-Language, else English. */
function settle(req: Request, languages: ResolvedPageLanguages, choice: PageLanguage | undefined): PageLanguage {
  let language = choice;
  if (language === undefined) {
    // English first: with no Accept-Language, or `*`, the first of the list is the answer.
    const best = lookUpLanguage(req.headers['accept-language'], languages.tags);
    language = (best === null ? undefined : languages.byTag.get(best)) ?? languages.byTag.get('en')!;
  }
  chosen.set(req, language);
  return language;
}

/**
 * The page language of `req`: `choose`'s answer when it names an available language, else the best of Accept-Language
 * among them (q-values, then the header's order; each range looked up, so `zh-Hant-TW` matches `zh-Hant` and `de-CH`
 * matches `de`: `lookUpLanguage`), else English, which is also the answer to no header or `*`. An asynchronous
 * `choose`'s answer is the one `writeInPageLanguage` (or the sign-out's `awaitPageLanguage`) waited for; a page written
 * where none may wait (a 405, a form refused before it is read) takes a synchronous answer, and is else negotiated.
 * @see RFC 9110 §12.5.4 (Accept-Language), RFC 4647 §3.4 (lookup).
 */
export function pageLanguageFor(req: Request | undefined, languages: ResolvedPageLanguages | null, logger: Logger): PageLanguage {
  if (languages === null || req === undefined) return ENGLISH_PAGES;
  const known = chosen.get(req);
  if (known !== undefined) return known;
  if (languages.choose === null) return settle(req, languages, undefined);
  const answer = callChoose(req, languages, logger);
  // Its rejection, left unhandled, would end the process.
  if (isThenable(answer)) Promise.resolve(answer).catch(() => undefined);
  return settle(req, languages, languageOf(languages, answer));
}

/** Waits for `answer` (a thenable `choose` gave), at most CHOOSE_TIMEOUT_MS, and records the language it leads to. */
function waitForChoice(req: Request, languages: ResolvedPageLanguages, logger: Logger, answer: PromiseLike<unknown>): Promise<PageLanguage> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => { timer = setTimeout(resolve, CHOOSE_TIMEOUT_MS, TIMED_OUT); });
  // Promise.race handles the hook's rejection even when it comes after the timeout.
  return Promise.race([Promise.resolve(answer), timeout]).then((tag) => {
    if (tag === TIMED_OUT) logOnce(languages, logger, `did not answer within ${CHOOSE_TIMEOUT_MS} ms`);
    return tag === TIMED_OUT ? undefined : languageOf(languages, tag);
  }, (err: unknown) => {
    logOnce(languages, logger, `rejected (${err instanceof Error ? err.message : String(err)})`);
    return undefined;
  }).finally(() => clearTimeout(timer)).then((choice) => settle(req, languages, choice));
}

/**
 * Route middleware, mounted only where `choose` is set, before a page's handler (the session and form read): lets the
 * page that handler may write wait for an asynchronous `choose` (`writeInPageLanguage`). It asks nothing itself, so an
 * answer that writes no page (a redirect with a code or an error, a `prompt=none` answer, a sign-in's redirect) never
 * waits for the hook, nor runs it.
 */
export function createLazyPageLanguage(): RequestHandler {
  return function lazyPageLanguage(req: Request, _res: Response, next: NextFunction): void {
    mayWait.set(req, next);
    next();
  };
}

/**
 * Route middleware for a route that always answers with a page and changes the session first (the sign-out): the hook
 * runs, and a Promise it answers is waited for, before the handler, so it still sees the user signing out.
 */
export function createAwaitPageLanguage(languages: ResolvedPageLanguages, logger: Logger): RequestHandler {
  return function awaitPageLanguage(req: Request, _res: Response, next: NextFunction): void {
    if (chosen.has(req)) { next(); return; }
    const answer = callChoose(req, languages, logger);
    if (!isThenable(answer)) {
      settle(req, languages, languageOf(languages, answer));
      next();
      return;
    }
    // A host logger that threw: the page is still answered, by the error handler.
    waitForChoice(req, languages, logger, answer).then(() => next(), (err: unknown) => next(err));
  };
}

/**
 * Writes a page (`write`) in the language of `res`'s request: at once when it is known, or `choose` is synchronous, or
 * the route does not let pages wait (createLazyPageLanguage); else once an asynchronous `choose` has answered, at most
 * CHOOSE_TIMEOUT_MS later, unless the host has answered meanwhile (answeredByHost). The hook is asked here, when a
 * page is written, and not before: an answer without a page never waits for it.
 * @see RFC 9110 §12.5.4.
 */
export function writeInPageLanguage(
  res: Response, languages: ResolvedPageLanguages | null, logger: Logger, write: (language: PageLanguage) => void,
): void {
  // The host answered while the page was being made (connect-timeout's 503 during a slow store call): writing it would
  // set a header after the answer (the sign-in form's cookie), which threw and was logged as an unexpected error.
  if (answeredByHost(res)) return;
  const req = res.req as Request | undefined;
  if (languages === null || languages.choose === null || req === undefined || chosen.has(req) || !mayWait.has(req)) {
    write(pageLanguageFor(req, languages, logger));
    return;
  }
  let wait = waiting.get(req);
  if (wait === undefined) {
    const answer = callChoose(req, languages, logger);
    if (!isThenable(answer)) {
      write(settle(req, languages, languageOf(languages, answer)));
      return;
    }
    wait = waitForChoice(req, languages, logger, answer);
    waiting.set(req, wait);
  }
  const routeNext = mayWait.get(req)!;
  wait.then((language) => {
    if (!answeredByHost(res)) write(language);
  }).catch((err: unknown) => {
    // A host logger that threw, or a page that failed to render: the route's error handler answers (the router's own
    // error page, which shows no stack), as for a throw from the handler itself; the host's, if that page fails too.
    // A wait that failed itself (the logger threw) settled no language: the error page is negotiated, not made to join it.
    if (!chosen.has(req)) settle(req, languages, undefined);
    if (!res.headersSent) routeNext(err);
    else res.destroy(err instanceof Error ? err : undefined);
  });
}
