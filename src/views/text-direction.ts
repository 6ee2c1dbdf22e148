// Which way a language's pages run: the `dir` of their <html>.

/** Languages written right to left when their tag names no script (BCP 47 primary subtags). */
const RTL_LANGUAGES = new Set(['ar', 'arc', 'ckb', 'dv', 'fa', 'he', 'iw', 'ks', 'ps', 'sd', 'syr', 'ug', 'ur', 'yi']);
/** Right-to-left scripts (ISO 15924), for a tag that names one: `az-Arab`, `pa-Arab`. */
const RTL_SCRIPTS = new Set(['adlm', 'arab', 'hebr', 'nkoo', 'rohg', 'syrc', 'thaa']);

/**
 * `rtl` for a language tag written right to left, by its script subtag if it has one, else by its language.
 * @see HTML Living Standard §3.2.6.4 (the dir attribute), BCP 47 (RFC 5646) §2.1 (syntax), §2.2.3 (script subtag).
 */
export function textDirection(tag: string): 'ltr' | 'rtl' {
  const [language = '', ...rest] = tag.toLowerCase().split('-');
  // Only subtags before the first singleton (`-u-`, `-x-`) can be the script: after it, four letters are an extension's
  // value (`ar-u-nu-latn`, Arabic with Latin digits) or private use, and before it no other subtag is four letters.
  const singleton = rest.findIndex((subtag) => subtag.length === 1);
  const script = (singleton === -1 ? rest : rest.slice(0, singleton)).find((subtag) => /^[a-z]{4}$/.test(subtag));
  if (script !== undefined) return RTL_SCRIPTS.has(script) ? 'rtl' : 'ltr';
  return RTL_LANGUAGES.has(language) ? 'rtl' : 'ltr';
}
