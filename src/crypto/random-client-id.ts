// Random client_ids that an operator can paste after any command (never starting with "-").
import { randomBytes } from 'node:crypto';

/** Where the random bytes come from; tests inject a scripted source, production uses the CSPRNG. */
export type RandomSource = (size: number) => Buffer;

/** Draws after which the source is declared broken: 32 redraws in a row happen with probability 2^-192. */
const MAX_DRAWS = 32;

/**
 * A fresh client_id: 32 random bytes (256 bits) in base64url (43 characters), never starting with `-`.
 *
 * RFC 6749 §2.2 lets the server choose the identifier's form ("a unique string", size undefined). One
 * base64url value in 64 begins with `-`, which command-line parsers (oauth-admin, shells' tools) read as an
 * option, so the operator could not paste it as printed.
 *
 * Why redraw rather than map the `-` to another character: a mapping folds two values onto one and makes
 * the replacement character twice as likely in first position, so ids would no longer be uniform. A redraw
 * of the whole value keeps every id uniformly drawn from the 63/64 of values that do not start with `-`,
 * i.e. 256 + log2(63/64) ≈ 255.98 bits, still far beyond the guessing resistance RFC 6749 §10.10 and
 * RFC 9700 §4.1 ask for (the client_id is not a secret anyway). It costs 64/63 draws on average.
 *
 * Only ids made here are constrained: ids that already start with `-` stay valid everywhere.
 * @param randomSource bytes for each draw; default `crypto.randomBytes`.
 * @throws Error if the source yields a `-` id 32 times in a row: it is not random, and looping would hang.
 * @see RFC 6749 §2.2 (client identifier), §10.10 (credentials guessing); RFC 9700 §4.1.
 */
export function createRandomClientId(randomSource: RandomSource = randomBytes): string {
  for (let draw = 0; draw < MAX_DRAWS; draw += 1) {
    const id = randomSource(32).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
  throw new Error('the random source keeps producing client_ids that start with "-"; it is not random');
}
