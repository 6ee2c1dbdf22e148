// A command that finds a reconnection under way waits for it, and if it fails, for an attempt begun after the command came.

/**
 * What a command about to go out on a lost connection waits for when an attempt is already under way. That attempt
 * may have begun before Redis answered again (its connection refused, or swallowed, by the outage the command comes
 * after): if it fails, the command waits for `next()`, an attempt begun after that failure (a new one, or the one
 * another waiting command began), not for the earlier failure. `next()` answering `undefined` (closed by `close()`, or
 * connected meanwhile) lets the command go as it is. Bounded, like every wait of a command, by the command's deadline.
 */
export function joinAttempt(underWay: Promise<void>, next: () => Promise<void> | undefined): Promise<void> {
  return underWay.catch(() => next());
}
