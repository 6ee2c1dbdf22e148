// Bidirectional isolation for names in plain text, where `<bdi>` cannot go (a page's `<title>`).

/**
 * A name between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: without them a right-to-left name carries the
 * punctuation after it to its other side, as `<bdi>` prevents in the page's body. @see Unicode UAX #9 §2.7
 */
export function isolate(name: string): string {
  return `\u2068${name}\u2069`;
}
