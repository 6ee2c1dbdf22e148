// The issuing millisecond as a fixed-width, text-sortable prefix: what makes ids and token keys grow at one end of an index.
/** Characters of the prefix: base32hex of the ms since the epoch, zero-padded (today 9 are used; 11 last a million years). */
export const TIME_PREFIX_LENGTH = 11;

/**
 * Whether `value` begins with a prefix as `timePrefix` writes it: 11 characters of 0-9 and a-v. Tested in
 * place, character by character: every bearer check and token save asks, and a sliced copy run through a
 * regular expression cost more than the rest of the test.
 */
export function startsWithTimePrefix(value: string): boolean {
  if (value.length < TIME_PREFIX_LENGTH) return false;
  for (let i = 0; i < TIME_PREFIX_LENGTH; i += 1) {
    const c = value.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x76))) return false;
  }
  return true;
}

let lastMs = Number.NaN;
let lastPrefix = '';

/**
 * The current millisecond in 11 base32hex characters; prefixes sort as text in the order they were made.
 * A b-tree keyed by values that start with it takes each new key on its last leaf instead of a random one.
 * @see RFC 6749 §10.10 (the random part that follows is what makes a value unguessable).
 */
export function timePrefix(now: number = Date.now()): string {
  // A busy endpoint makes several per millisecond (a token pair and a grant id per request): the last one is
  // kept, since toString(32) of a 13-digit number costs more than the comparison.
  if (now !== lastMs) {
    lastMs = now;
    lastPrefix = now.toString(32).padStart(TIME_PREFIX_LENGTH, '0');
  }
  return lastPrefix;
}
