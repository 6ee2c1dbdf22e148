// The language a page is written in for one request: the host's choice, else Accept-Language, else English.
import type { Request } from 'express';
import type { Logger } from '../options.js';
import { lookUpLanguage } from './accept-language-lookup.js';
import { ENGLISH_PAGES, type PageLanguage, type ResolvedPageLanguages } from '../views/page-languages.js';

/** Chosen once per request: a page and its error page agree, and the host's hook runs once. */
const chosen = new WeakMap<Request, PageLanguage>();
const warned = new WeakSet<ResolvedPageLanguages>();

/**
 * The page language of `req`: `choose`'s answer when it names an available language, else the best of Accept-Language
 * among them (q-values, then the header's order; each range looked up, so `zh-Hant-TW` matches `zh-Hant` and `de-CH`
 * matches `de`: `lookUpLanguage`), else English, which is also the answer to no header or `*`.
 * @see RFC 9110 §12.5.4 (Accept-Language), RFC 4647 §3.4 (lookup).
 */
export function pageLanguageFor(req: Request | undefined, languages: ResolvedPageLanguages | null, logger: Logger): PageLanguage {
  if (languages === null || req === undefined) return ENGLISH_PAGES;
  const known = chosen.get(req);
  if (known !== undefined) return known;
  let language: PageLanguage | undefined;
  if (languages.choose !== null) {
    const logOnce = (problem: string): void => {
      if (warned.has(languages)) return;
      warned.add(languages);
      logger.error(`express-oauth-router: pageLanguages.choose ${problem}; the page language is taken from Accept-Language instead`);
    };
    try {
      // A copy: a hook that sorts or edits its `available` must not reorder what Accept-Language is matched against.
      const tag: unknown = languages.choose(req, [...languages.tags]);
      if (typeof tag === 'string') language = languages.byTag.get(tag) ?? [...languages.byTag.values()].find((l) => l.tag.toLowerCase() === tag.toLowerCase());
      else if (typeof (tag as PromiseLike<unknown> | null)?.then === 'function') {
        // A hook written `async`: the page cannot wait for it, and its rejection, left unhandled, would end the process.
        (tag as PromiseLike<unknown>).then(undefined, () => undefined);
        logOnce('answered a Promise (it must be synchronous: read a cookie or a profile loaded before the router)');
      }
    } catch (err) {
      logOnce(`threw (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  if (language === undefined) {
    // English first: with no Accept-Language, or `*`, the first of the list is the answer.
    const best = lookUpLanguage(req.headers['accept-language'], languages.tags);
    language = (best === null ? undefined : languages.byTag.get(best)) ?? languages.byTag.get('en')!;
  }
  chosen.set(req, language);
  return language;
}
