// Which of the host's page languages an Accept-Language header asks for: RFC 4647 lookup, range by range.
import { grandfatheredTag } from '../views/grandfathered-tags.js';

/** Ranges read from one header: a browser sends a handful, so more than this is noise, not preference. */
const MAX_RANGES = 64;

/** A language range as RFC 9110 §12.5.4 allows it: `*`, or 1–8 letters followed by `-` and 1–8 letters or digits. */
const RANGE = /^(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$/;
const WEIGHT = /^q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

interface Range {
  readonly range: string;
  readonly q: number;
  readonly order: number;
}

/**
 * Ranges canonicalized before, lower case, by their lower-case spelling: a browser sends the same few on every page, so
 * each costs a Map lookup instead of `Intl`'s (about 5 µs, 18 µs for a range it refuses). Bounded, since anyone writes
 * the header: the oldest entry goes when a new one finds it full.
 */
const canonicalRanges = new Map<string, string>();
const MAX_CANONICAL_RANGES = 512;
/**
 * Ranges of one header that are canonicalized (from the memory, or by `Intl`): a browser sends a handful, and a header
 * of 64 made-up ranges would otherwise cost about 0.5 ms per page. The others are looked up as they are. Counted
 * whether the memory holds a range or not, so which ranges are canonicalized depends on the header alone: counting
 * only those `Intl` was asked about made the same header's page language depend on what other requests had sent
 * (two instances, or one before and after, answered it in two languages).
 */
const MAX_CANONICALIZED_RANGES = 16;
/**
 * The longest range canonicalized. What `Intl` renames is in the first subtags (a deprecated language, a region alias),
 * which a catalogue's tag is no longer than; a range of thousands of subtags (a 16 KB header) cost `Intl` about 8 ms
 * per request, and each such range kept in `canonicalRanges` up to 16 KB (8 MB for the 512). RFC 5646 §4.4.1 asks room
 * for tags of 35 characters; this is nearly twice that.
 */
const MAX_CANONICALIZED_LENGTH = 64;

/** What is left of one header's `MAX_CANONICALIZED_RANGES`. */
interface Budget {
  left: number;
}

/**
 * A range as the catalogues' tags are written (`canonicalTag`), in lower case: what `Intl` makes of it, so a deprecated
 * tag it renames finds the catalogue it renamed (`iw` is `he`, `in` `id`, `ji` `yi`, `mo` `ro`, `deu` `de`); a
 * grandfathered tag its Preferred-Value (`i-klingon` looks up `tlh`, `en-GB-oed` looks up `en-GB-oxendict`, then
 * `en-GB`), or, without one (`i-default`), itself, which the lookup then cuts to nothing (`i` is a singleton), so only
 * that whole tag matches it. A range `Intl` refuses (private use, `x-klingon`, which a catalogue's tag is written in
 * lower case for; a singleton with nothing after it) is looked up as it is, in lower case, as is one past the header's
 * `budget` of ranges canonicalized, and one longer than `MAX_CANONICALIZED_LENGTH`.
 * @see RFC 5646 §2.2.8, §4.5; RFC 4647 §3.4.
 */
function rangeOf(range: string, budget: Budget): string {
  const grandfathered = grandfatheredTag(range);
  // Without a Preferred-Value the tag stands for itself, as its catalogue's tag does (canonicalTag): not what `Intl`
  // makes of it, which for `cel-gaulish` (read as `cel` and a variant) is `xtg`, a tag no catalogue keyed so has.
  if (grandfathered !== undefined) return grandfathered === range.toLowerCase() ? grandfathered : canonicalOrItself(grandfathered);
  const lower = range.toLowerCase();
  // `*` and private use: nothing `Intl` would change.
  if (lower === '*' || lower.startsWith('x-')) return lower;
  if (budget.left === 0 || lower.length > MAX_CANONICALIZED_LENGTH) return lower;
  budget.left -= 1;
  let canonical = canonicalRanges.get(lower);
  if (canonical === undefined) {
    canonical = canonicalOrItself(lower);
    if (canonicalRanges.size >= MAX_CANONICAL_RANGES) canonicalRanges.delete(canonicalRanges.keys().next().value!);
    canonicalRanges.set(lower, canonical);
  }
  return canonical;
}

/** `tag` as `Intl` canonicalizes it, in lower case; `tag` itself when `Intl` refuses it. */
function canonicalOrItself(tag: string): string {
  try {
    return (Intl.getCanonicalLocales(tag)[0] ?? tag).toLowerCase();
  } catch {
    return tag;
  }
}

/** The header's ranges with their weights, best first (q, then the header's order); malformed entries are skipped. */
function rangesOf(header: string): Range[] {
  const ranges: Range[] = [];
  const budget: Budget = { left: MAX_CANONICALIZED_RANGES };
  for (const entry of header.split(',', MAX_RANGES)) {
    const [rangePart = '', ...params] = entry.split(';');
    const range = rangePart.trim();
    if (!RANGE.test(range)) continue;
    let q = 1;
    for (const param of params) {
      const weight = WEIGHT.exec(param.trim());
      if (weight === null) { q = -1; break; }
      q = Number(weight[1]);
    }
    if (q >= 0) ranges.push({ range: rangeOf(range, budget), q, order: ranges.length });
  }
  return ranges.sort((a, b) => b.q - a.q || a.order - b.order);
}

/**
 * The tag of `available` (canonical BCP 47 tags; the first one is the default) that `header` asks for, or null when it
 * names none of them. Each acceptable range, best first, is looked up as RFC 4647 §3.4 says: the range itself, then
 * with its last subtag cut off (and a singleton left at the end cut with it), so `zh-Hant-TW` finds `zh-Hant`,
 * `de-CH-1996` finds `de` and `en-x-corp-london` finds `en-x-corp`, then `en`. A range that finds nothing that way takes
 * a tag of the same primary language (`de` finds `de-CH`), as browsers' users expect and Express's negotiation did,
 * except a private-use one (`x-vulcan`), whose tags share nothing but the `x`. `*` is the default. A range with q=0 is not
 * acceptable (RFC 9110 §12.4.2): its exact tag is never chosen.
 * @see RFC 9110 §12.5.4, RFC 4647 §3.4 (lookup), RFC 5646 §2.2.7 (private use).
 */
export function lookUpLanguage(header: string | undefined, available: readonly string[]): string | null {
  if (header === undefined || available.length === 0) return null;
  const byLower = new Map(available.map((tag) => [tag.toLowerCase(), tag]));
  const ranges = rangesOf(header);
  const refused = new Set(ranges.filter((r) => r.q === 0).map((r) => r.range));
  const acceptable = (tag: string | undefined): tag is string => tag !== undefined && !refused.has(tag.toLowerCase());
  const longest = Math.max(...available.map((tag) => tag.length));
  for (const { range, q } of ranges) {
    if (q === 0) continue;
    if (range === '*') return acceptable(available[0]) ? available[0] : null;
    const subtags = range.split('-');
    let length = range.length;
    while (subtags.length > 0) {
      // A prefix longer than every tag names none: only its length is followed, so a range of thousands of subtags
      // (a 16 KB header) is one pass, not a join of the rest per subtag cut (0.3 s of a core per page).
      if (length <= longest) {
        const tag = byLower.get(subtags.join('-'));
        if (acceptable(tag)) return tag;
      }
      length -= subtags.pop()!.length + 1;
      // A singleton (`x`, `u`) goes with the subtag after it: `en-x-corp` is looked up as `en`, never `en-x`.
      if (subtags.length > 0 && subtags[subtags.length - 1]!.length === 1) length -= subtags.pop()!.length + 1;
    }
    const primary = range.split('-')[0]!;
    // A private-use range (`x-klingon`), or a grandfathered `i-…` one, names no language that another tag could share.
    if (primary.length === 1) continue;
    const sameLanguage = available.find((tag) => tag.toLowerCase().split('-')[0] === primary && acceptable(tag));
    if (sameLanguage !== undefined) return sameLanguage;
  }
  return null;
}
