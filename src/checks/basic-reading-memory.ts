// Which reading of a Basic header holding `%` or `+` authenticated each integration last, so it is tried first.

/**
 * Integrations a process remembers. Only a successful authentication adds one, so the registry fills it, never a
 * caller: about 20–30 bytes each beside the id. 10,000 that then started over made every imported integration whose secret holds `%`
 * or `+` pay a failed slow check of the other reading again (a scrypt, ~67 ms) once a registry passed it.
 */
export const MAX_READ_AS_SENT = 1_000_000;

/**
 * The client_ids whose Basic header last authenticated as sent (SPEC §4.2's reading) rather than form-decoded
 * (RFC 6749 §2.3.1's). Past the bound the id remembered longest ago goes, never all of them at once.
 * @see RFC 6749 §2.3.1; SPEC §2, §4.2.
 */
export class BasicReadingMemory {
  readonly #asSent = new Set<string>();

  constructor(readonly maxEntries: number = MAX_READ_AS_SENT) {}

  /** Whether `clientId` last authenticated with its header read as sent. */
  readAsSent(clientId: string): boolean {
    return this.#asSent.has(clientId);
  }

  /** Records the reading that authenticated `clientId`. */
  remember(clientId: string, asSent: boolean): void {
    if (!asSent) {
      this.#asSent.delete(clientId);
      return;
    }
    if (this.#asSent.has(clientId)) return;
    if (this.#asSent.size >= this.maxEntries) this.#asSent.delete(this.#asSent.values().next().value as string);
    this.#asSent.add(clientId);
  }
}
