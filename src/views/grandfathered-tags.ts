// The grandfathered language tags of BCP 47, which its grammar lists one by one, and what the registry replaces them by.

/**
 * Every grandfathered tag (RFC 5646 §2.2.8: the `irregular` ones, which no other rule of the grammar produces, and the
 * `regular` ones), lower case, with the registry's Preferred-Value, or null where it gives none (`i-default`,
 * `i-enochian`, `i-mingo`, `cel-gaulish`, `zh-min`). The list is closed: §2.2.8 says no tag is added to it.
 * @see RFC 5646 §2.1 (`grandfathered`), §2.2.8, §3.1.7 (Preferred-Value); the IANA Language Subtag Registry.
 */
const GRANDFATHERED_TAGS: ReadonlyMap<string, string | null> = new Map([
  ['en-gb-oed', 'en-GB-oxendict'], ['i-ami', 'ami'], ['i-bnn', 'bnn'], ['i-default', null], ['i-enochian', null],
  ['i-hak', 'hak'], ['i-klingon', 'tlh'], ['i-lux', 'lb'], ['i-mingo', null], ['i-navajo', 'nv'], ['i-pwn', 'pwn'],
  ['i-tao', 'tao'], ['i-tay', 'tay'], ['i-tsu', 'tsu'], ['sgn-be-fr', 'sfb'], ['sgn-be-nl', 'vgt'], ['sgn-ch-de', 'sgg'],
  ['art-lojban', 'jbo'], ['cel-gaulish', null], ['no-bok', 'nb'], ['no-nyn', 'nn'], ['zh-guoyu', 'cmn'], ['zh-hakka', 'hak'],
  ['zh-min', null], ['zh-min-nan', 'nan'], ['zh-xiang', 'hsn'],
]);

/**
 * What a grandfathered `tag` (any case, RFC 5646 §2.1.1) stands for: its Preferred-Value, which a canonical tag uses
 * instead (§4.5), or, where the registry gives none, the tag itself in lower case, a tag of its own that only the
 * whole of it matches; undefined for any other tag.
 * @see RFC 5646 §2.2.8, §4.5 (canonicalization).
 */
export function grandfatheredTag(tag: string): string | undefined {
  const key = tag.toLowerCase();
  const preferred = GRANDFATHERED_TAGS.get(key);
  return preferred === undefined ? undefined : preferred ?? key;
}
