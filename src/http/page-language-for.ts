// The language a page is written in for one request: the host's choice, else Accept-Language, else English.
import type { Request } from 'express';
import type { Logger } from '../options.js';
import { ENGLISH_PAGES, type PageLanguage, type ResolvedPageLanguages } from '../views/page-languages.js';

/** Chosen once per request: a page and its error page agree, and the host's hook runs once. */
const chosen = new WeakMap<Request, PageLanguage>();
const warned = new WeakSet<ResolvedPageLanguages>();

/**
 * The page language of `req`: `choose`'s answer when it names an available language, else the best of Accept-Language
 * among them (q-values, then the header's order; `de-CH` matches `de`), else English, which is also the answer to no
 * header or `*`.
 * @see RFC 9110 §12.5.4 (Accept-Language), RFC 4647 §3.4 (lookup).
 */
export function pageLanguageFor(req: Request | undefined, languages: ResolvedPageLanguages | null, logger: Logger): PageLanguage {
  if (languages === null || req === undefined) return ENGLISH_PAGES;
  const known = chosen.get(req);
  if (known !== undefined) return known;
  let language: PageLanguage | undefined;
  if (languages.choose !== null) {
    try {
      const tag = languages.choose(req, languages.tags);
      if (typeof tag === 'string') language = languages.byTag.get(tag) ?? [...languages.byTag.values()].find((l) => l.tag.toLowerCase() === tag.toLowerCase());
    } catch (err) {
      if (!warned.has(languages)) {
        warned.add(languages);
        logger.error(`express-oauth-router: pageLanguages.choose threw (${err instanceof Error ? err.message : String(err)}); `
          + 'the page language is taken from Accept-Language instead');
      }
    }
  }
  if (language === undefined) {
    // English first: with no Accept-Language, or `*`, the first of the list is the answer.
    const best = req.acceptsLanguages(...languages.tags);
    language = (typeof best === 'string' ? languages.byTag.get(best) : undefined) ?? languages.byTag.get('en')!;
  }
  chosen.set(req, language);
  return language;
}
