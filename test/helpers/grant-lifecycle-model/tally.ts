// What the sequences covered: answers by endpoint, status and error, and the situations the model reached.

/** Answers seen, by endpoint, status and error: what the sequences covered. */
export const tally = new Map<string, number>();

/** Counts a situation the model reached, for the tally. */
export function fact(name: string): void {
  tally.set(`fact: ${name}`, (tally.get(`fact: ${name}`) ?? 0) + 1);
}
