// Which way a language's pages run: the `dir` of their <html>.

/** Languages written right to left when their tag names no script and `Intl` knows none for it (BCP 47 primary subtags). */
const RTL_LANGUAGES = new Set(['ar', 'arc', 'ckb', 'dv', 'fa', 'he', 'iw', 'ks', 'ps', 'sd', 'syr', 'ug', 'ur', 'yi']);
/**
 * Right-to-left scripts (ISO 15924, Unicode's Bidi_Class R and AL), for a tag that names one (`az-Arab`, `pa-Arab`)
 * or whose language and region imply one (`pa-PK` is Shahmukhi, `arc` Imperial Aramaic).
 */
const RTL_SCRIPTS = new Set([
  'adlm', 'arab', 'aran', 'armi', 'avst', 'chrs', 'cprt', 'elym', 'hatr', 'hebr', 'hung', 'khar', 'lydi', 'mand', 'mani',
  'mend', 'merc', 'mero', 'narb', 'nbat', 'nkoo', 'orkh', 'ougr', 'palm', 'phli', 'phlp', 'phnx', 'prti', 'rohg', 'samr',
  'sarb', 'sogd', 'sogo', 'syrc', 'thaa', 'yezi',
  // Garay (Unicode 16); and the three forms of Syriac ISO 15924 codes apart (Estrangelo, Western, Eastern), one Unicode script.
  'gara', 'syre', 'syrj', 'syrn',
]);

/**
 * The script a tag without a script subtag is written in, as CLDR's likely subtags give it (`Intl.Locale#maximize`:
 * `pa-PK` → `pa-Arab-PK`, `sd-IN` → `sd-Deva-IN`), in lower case; undefined where `Intl` refuses the tag (private use,
 * grandfathered without a preferred value) or knows no script for it.
 */
function likelyScript(tag: string): string | undefined {
  try {
    return new Intl.Locale(tag).maximize().script?.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * `rtl` for a language tag written right to left: by its script subtag if it has one, else by the script its language
 * (and region) implies, else by its language.
 * @see HTML Living Standard §3.2.6.4 (the dir attribute), BCP 47 (RFC 5646) §2.1 (syntax), §2.2.3 (script subtag),
 *   §3.1.9 and §4.1 (a script left out where it is implied); Unicode CLDR likely subtags.
 */
export function textDirection(tag: string): 'ltr' | 'rtl' {
  const [language = '', ...rest] = tag.toLowerCase().split('-');
  // Only subtags before the first singleton (`-u-`, `-x-`) can be the script: after it, four letters are an extension's
  // value (`ar-u-nu-latn`, Arabic with Latin digits) or private use, and before it no other subtag is four letters.
  const singleton = rest.findIndex((subtag) => subtag.length === 1);
  const script = (singleton === -1 ? rest : rest.slice(0, singleton)).find((subtag) => /^[a-z]{4}$/.test(subtag)) ?? likelyScript(tag);
  if (script !== undefined) return RTL_SCRIPTS.has(script) ? 'rtl' : 'ltr';
  return RTL_LANGUAGES.has(language) ? 'rtl' : 'ltr';
}
