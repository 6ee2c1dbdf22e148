// Slow secret checks take turns per source (RFC 6819 §4.3.5): one at a time, in arrival order, a bounded queue.
import { describe, expect, it } from 'vitest';
import { createOneAtATime, TooManyWaitingError } from '../../src/checks/one-at-a-time.js';

describe('one at a time per key', () => {
  it('runs the turns of one key in arrival order, each after the one before ends, and other keys at once', async () => {
    const turns = createOneAtATime(10);
    const order: string[] = [];
    const first = await turns.turn('a');
    const later = [1, 2, 3].map((n) => turns.turn('a').then((end) => { order.push(`a${n}`); end(); }));
    await turns.turn('b').then((end) => { order.push('b'); end(); });
    expect(order, 'nothing of key a runs while its first turn is held').toEqual(['b']);
    first();
    await Promise.all(later);
    expect(order).toEqual(['b', 'a1', 'a2', 'a3']);
    expect(turns.size, 'no key is kept once its queue drains').toBe(0);
  });

  it('refuses at once past maxWaiting, and ending a turn twice passes only one turn on', async () => {
    const turns = createOneAtATime(2);
    const end = await turns.turn('k');
    const waiting = [turns.turn('k'), turns.turn('k')];
    await expect(turns.turn('k')).rejects.toBeInstanceOf(TooManyWaitingError);
    end();
    end();
    const second = await waiting[0]!;
    let thirdStarted = false;
    void waiting[1]!.then(() => { thirdStarted = true; });
    await Promise.resolve();
    expect(thirdStarted).toBe(false);
    second();
    (await waiting[1]!)();
    expect(turns.size).toBe(0);
  });
});
