// Bidirectional isolation for names in plain text, where `<bdi>` cannot go (a page's `<title>`).

/** The name's own isolate controls (LRI, RLI, FSI, PDI): each would pair with the FSI or PDI put around it. */
const ISOLATE_CONTROLS = /[\u2066-\u2069]/g;

/**
 * A name between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: without them a right-to-left name carries the
 * punctuation after it to its other side, as `<bdi>` prevents in the page's body. The name's own isolate controls are
 * left out: a PDI in it would close the FSI early (an RLO after it then reversed the rest of the title) and an LRI would
 * take the closing PDI, where `<bdi>` contains whatever the name holds. Embeddings and overrides stay, closed by the PDI
 * (X6a). Names registered now have none of these (checkClientName); a name stored before, or a productName, may.
 * @see Unicode UAX #9 §2.7, X6a.
 */
export function isolate(name: string): string {
  return `\u2068${name.replace(ISOLATE_CONTROLS, '')}\u2069`;
}
