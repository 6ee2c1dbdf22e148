// The `pageLanguages` option: the host's translations of the pages, validated once at start-up.
import type { Request } from 'express';
import { OptionsError, onlyKnownKeys } from '../options-error.js';
import { ENGLISH_PAGE_MESSAGES, PAGE_MESSAGE_PLACEHOLDERS, type PageCatalogue, type PageMessages } from './page-messages.js';
import { textDirection } from './text-direction.js';
import { grandfatheredTag } from './grandfathered-tags.js';

/** What `choose` answers: an available tag, or `null`/`undefined` to leave the page to Accept-Language. */
export type PageLanguageChoice = string | null | undefined;

/** Translations of the login, consent, connected-applications, error and sign-out pages. */
export interface PageLanguagesOptions {
  /**
   * A catalogue per language, keyed by its BCP 47 tag (`de`, `fr-CA`, `ar`). English (`en`) is built in and is what
   * every message a catalogue leaves out is shown in; an `en` catalogue rewords it.
   */
  readonly catalogues: Readonly<Record<string, PageCatalogue>>;
  /**
   * Picks the language of a page before Accept-Language is looked at, e.g. from the user's profile or a cookie:
   * one of `available` (the catalogues' tags and `en`), or `null`/`undefined` to negotiate. It runs at most once per
   * request, when a page is written (after the router's session and form are read; the sign-out's, before it ends
   * the sign-in): an answer without a page (a redirect with a code or an error, a `prompt=none` answer) does not run
   * it. It may answer a Promise (an `async` hook reading a profile store): the page waits for it, at most one second;
   * a synchronous answer is taken without waiting. A tag not in `available` is ignored; a throw, a rejection or a timeout is logged once and the
   * page negotiated. A page answered before the request is read (a 405, a form refused as cross-site or unreadable)
   * does not wait for a Promise.
   */
  readonly choose?: (req: Request, available: readonly string[]) => PageLanguageChoice | PromiseLike<PageLanguageChoice>;
}

/** One language of the pages, with every message (English where its catalogue has none). */
export interface PageLanguage {
  readonly tag: string;
  readonly dir: 'ltr' | 'rtl';
  readonly messages: PageMessages;
  /** English: a text the catalogues cannot translate (a developer's error description) is in the page's language. */
  readonly english: boolean;
  /** Chosen among `pageLanguages`: the page then sends Content-Language and Vary. */
  readonly negotiated: boolean;
}

/** `pageLanguages` after validation: `tags` starts with `en`, the answer when nothing better matches. */
export interface ResolvedPageLanguages {
  readonly tags: readonly string[];
  readonly byTag: ReadonlyMap<string, PageLanguage>;
  readonly choose: NonNullable<PageLanguagesOptions['choose']> | null;
}

/** The pages in English, as they are without `pageLanguages`. */
export const ENGLISH_PAGES: PageLanguage = { tag: 'en', dir: 'ltr', messages: ENGLISH_PAGE_MESSAGES, english: true, negotiated: false };

/**
 * What a translation may not leave out: the consent page names the integration and the address the user is sent back
 * to, and says who is signed in, in every language, so that a phishing integration cannot hide behind a catalogue
 * that drops them.
 * @see RFC 6819 §4.2.2 (the user is shown which client asks), RFC 9700 §4.1 (where the browser goes next).
 */
const REQUIRED_PLACEHOLDERS: Readonly<Record<string, readonly string[]>> = {
  // consentErrorTitle: the title of the same page shown again after a click on an expired copy of it.
  consentTitle: ['client'], consentErrorTitle: ['client'], consentWants: ['client'], consentAfterChoice: ['origin'],
  signedInAs: ['user'],
};

/**
 * Checks one catalogue: only known messages, each text (or, for a counted one, a function), with its own `{name}`s,
 * and, with a vocabulary (`knownScopes`, the `scopes` option's keys), sentences only for scopes in it.
 */
function checkCatalogue(key: string, catalogue: unknown, knownScopes: readonly string[]): PageCatalogue {
  if (typeof catalogue !== 'object' || catalogue === null || Array.isArray(catalogue)) {
    throw new OptionsError(key, 'must be an object of message → text (PageCatalogue)');
  }
  onlyKnownKeys(key, catalogue, [...Object.keys(PAGE_MESSAGE_PLACEHOLDERS), 'scopes']);
  for (const [name, value] of Object.entries(catalogue as Record<string, unknown>)) {
    if (name === 'scopes') {
      if (typeof value !== 'object' || value === null || Object.values(value).some((text) => typeof text !== 'string')) {
        throw new OptionsError(`${key}.scopes`, 'must be an object of scope → sentence');
      }
      // The server grants no scope outside a non-empty vocabulary, so a sentence for one (a typo of the scope it
      // meant to translate) is never shown: that scope would stay in English with no sign of why.
      const unknown = knownScopes.length === 0 ? undefined : Object.keys(value).find((scope) => !knownScopes.includes(scope));
      if (unknown !== undefined) {
        throw new OptionsError(`${key}.scopes.${unknown}`, `is not a key of the scopes option (${knownScopes.join(', ')}): `
          + 'the pages would never show its sentence');
      }
      continue;
    }
    const allowed = PAGE_MESSAGE_PLACEHOLDERS[name as keyof typeof PAGE_MESSAGE_PLACEHOLDERS];
    // A counted message's function is checked as it answers: its texts depend on the number.
    if (value === undefined || (typeof value === 'function' && name === 'signInLockedOut')) continue;
    if (typeof value !== 'string') throw new OptionsError(`${key}.${name}`, 'must be a string');
    for (const [, placeholder] of value.matchAll(/\{([A-Za-z]+)\}/g)) {
      if (!allowed.includes(placeholder!)) {
        throw new OptionsError(`${key}.${name}`, `has {${placeholder}}, which it does not take${allowed.length > 0
          ? ` (it takes ${allowed.map((p) => `{${p}}`).join(', ')})` : ''}`);
      }
    }
    const missing = (REQUIRED_PLACEHOLDERS[name] ?? []).filter((placeholder) => !value.includes(`{${placeholder}}`));
    if (missing.length > 0) {
      throw new OptionsError(`${key}.${name}`, `must show ${missing.map((p) => `{${p}}`).join(' and ')}, as the English does`);
    }
  }
  return catalogue as PageCatalogue;
}

/** `base` with a catalogue's messages over it; a message given as undefined (a partly filled JSON, under
 * exactOptionalPropertyTypes) is left out, so the base shows. */
function withCatalogue(base: PageMessages, catalogue: PageCatalogue): PageMessages {
  const translated = Object.entries(catalogue).filter(([, text]) => text !== undefined);
  const scopes = base.scopes !== undefined || catalogue.scopes !== undefined ? { scopes: { ...base.scopes, ...catalogue.scopes } } : {};
  return { ...base, ...Object.fromEntries(translated), ...scopes };
}

/** A private-use tag (`x-klingon`): `x` and one or more subtags of 1 to 8 letters or digits. */
const PRIVATE_USE_TAG = /^x(?:-[a-z0-9]{1,8})+$/i;

/**
 * The canonical form of a catalogue's tag. A private-use tag is well-formed BCP 47 that `Intl` refuses (it is no
 * locale), so it is checked by its own grammar and written in lower case; private-use subtags after a language
 * (`en-x-corp`) `Intl` takes as they are. A grandfathered tag, which `Intl` refuses too, is its registry's
 * Preferred-Value (`i-klingon` is `tlh`, `zh-guoyu` is `cmn`, which `Intl` writes `zh`), or, without one
 * (`i-default`), itself in lower case.
 * @throws RangeError for an ill-formed tag.
 * @see RFC 5646 §2.1 (privateuse, grandfathered), §2.1.1 (case), §2.2.7 (private use subtags), §2.2.8, §4.5.
 */
function canonicalTag(given: string): string {
  if (PRIVATE_USE_TAG.test(given)) return given.toLowerCase();
  const grandfathered = grandfatheredTag(given);
  if (grandfathered !== undefined) return grandfathered === given.toLowerCase() ? grandfathered : canonicalTag(grandfathered);
  const [tag] = Intl.getCanonicalLocales(given);
  if (tag === undefined) throw new RangeError(given);
  return tag;
}

/**
 * Validates `pageLanguages`; `null` when absent (the pages in English, without Content-Language or Vary).
 * `knownScopes` is the `scopes` option's keys: when there are any, a catalogue's `scopes` may translate only them.
 * @throws OptionsError naming the bad tag, message or scope.
 * @see RFC 9110 §12.5.4 (Accept-Language), BCP 47 (RFC 5646).
 */
export function resolvePageLanguages(value: unknown, knownScopes: readonly string[] = []): ResolvedPageLanguages | null {
  if (value === undefined) return null;
  if (typeof value !== 'object' || value === null) throw new OptionsError('pageLanguages', 'must be { catalogues, choose? }');
  onlyKnownKeys('pageLanguages', value, ['catalogues', 'choose']);
  const { catalogues, choose } = value as PageLanguagesOptions;
  if (typeof catalogues !== 'object' || catalogues === null || Array.isArray(catalogues)) {
    throw new OptionsError('pageLanguages.catalogues', 'must be an object of language tag → catalogue');
  }
  if (choose !== undefined && typeof choose !== 'function') throw new OptionsError('pageLanguages.choose', 'must be a function');
  const checked: [tag: string, catalogue: PageCatalogue][] = [];
  const seen = new Set<string>();
  for (const [given, catalogue] of Object.entries(catalogues)) {
    let tag: string;
    try {
      tag = canonicalTag(given);
    } catch {
      throw new OptionsError(`pageLanguages.catalogues.${given}`, 'is not a BCP 47 language tag');
    }
    const key = `pageLanguages.catalogues.${given}`;
    if (seen.has(tag)) throw new OptionsError(key, `is ${tag} again`);
    seen.add(tag);
    checked.push([tag, checkCatalogue(key, catalogue, knownScopes)]);
  }
  // What a catalogue leaves out is shown in English as the host's `en` catalogue words it (message by message, and
  // scope by scope), whichever order the catalogues come in.
  const english = withCatalogue(ENGLISH_PAGE_MESSAGES, checked.find(([tag]) => tag === 'en')?.[1] ?? {});
  const byTag = new Map<string, PageLanguage>([['en', { ...ENGLISH_PAGES, messages: english, negotiated: true }]]);
  for (const [tag, catalogue] of checked) {
    if (tag === 'en') continue;
    byTag.set(tag, { tag, dir: textDirection(tag), messages: withCatalogue(english, catalogue), english: tag.startsWith('en-'), negotiated: true });
  }
  return { tags: [...byTag.keys()], byTag, choose: choose ?? null };
}
