// The PostgreSQL store's batcher: calls batch by back-pressure (never by a timer), each answered once by its own batch.
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { createBatcher, type BatchOutcome } from '../../src/stores/postgres/batcher.js';

/** A runner whose batches the test answers by hand, recording what each carried. */
function manualRunner() {
  const batches: {
    items: readonly number[]; sendBy: readonly number[];
    answer: (outcomes: readonly BatchOutcome<string>[]) => void; fail: (e: unknown) => void;
  }[] = [];
  const run = (items: readonly number[], sendBy: readonly number[]) =>
    new Promise<readonly BatchOutcome<string>[]>((resolve, reject) => {
      batches.push({ items, sendBy, answer: resolve, fail: reject });
    });
  const echo = (items: readonly number[]): BatchOutcome<string>[] => items.map((n) => ({ ok: true, value: `#${n}` }));
  return { batches, run, echo };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('batcher (DESIGN §3a: one round trip for the calls of a busy moment)', () => {
  it('a call made while nothing is at the database is sent at once, alone', async () => {
    const { batches, run, echo } = manualRunner();
    const call = createBatcher(run, { inFlight: 1, maxItems: 10 });
    const answer = call(1);
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    batches[0]!.answer(echo([1]));
    expect(await answer).toBe('#1');
  });

  it('calls made while a batch is out wait, then go together, in order, when it returns', async () => {
    const { batches, run, echo } = manualRunner();
    const call = createBatcher(run, { inFlight: 1, maxItems: 10 });
    const answers = [1, 2, 3, 4].map((n) => call(n));
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    batches[0]!.answer(echo([1]));
    await turn();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    batches[1]!.answer(echo([2, 3, 4]));
    expect(await Promise.all(answers)).toEqual(['#1', '#2', '#3', '#4']);
  });

  it('no batch carries more than maxItems calls, and no more than inFlight batches are out at once', async () => {
    const { batches, run, echo } = manualRunner();
    const call = createBatcher(run, { inFlight: 2, maxItems: 2 });
    const answers = [1, 2, 3, 4, 5, 6, 7].map((n) => call(n));
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
    batches[0]!.answer(echo([1]));
    await turn();
    expect(batches.map((b) => b.items)).toEqual([[1], [2], [3, 4]]);
    batches[1]!.answer(echo([2]));
    await turn();
    expect(batches.map((b) => b.items)).toEqual([[1], [2], [3, 4], [5, 6]]);
    batches[2]!.answer(echo([3, 4]));
    await turn();
    batches[3]!.answer(echo([5, 6]));
    await turn();
    batches[4]!.answer(echo([7]));
    expect(await Promise.all(answers)).toEqual(['#1', '#2', '#3', '#4', '#5', '#6', '#7']);
    expect(batches.map((b) => b.items)).toEqual([[1], [2], [3, 4], [5, 6], [7]]);
  });

  it('a batch that fails rejects each of its calls with its error, and the calls made after it still go', async () => {
    const { batches, run, echo } = manualRunner();
    const call = createBatcher(run, { inFlight: 1, maxItems: 10 });
    const first = call(1);
    const [second, third] = [call(2), call(3)];
    const outage = new Error('connection lost');
    batches[0]!.fail(outage);
    await expect(first).rejects.toBe(outage);
    await turn();
    batches[1]!.fail(outage);
    await expect(second).rejects.toBe(outage);
    await expect(third).rejects.toBe(outage);
    const fourth = call(4);
    batches[2]!.answer(echo([4]));
    expect(await fourth).toBe('#4');
  });

  it('one call failing within its batch fails alone; an answer still on its way is adopted', async () => {
    const { batches, run } = manualRunner();
    const call = createBatcher(run, { inFlight: 1, maxItems: 10 });
    const answers = [call(1), call(2), call(3)];
    batches[0]!.answer([{ ok: true, value: '#1' }]);
    await turn();
    const own = new Error('duplicate');
    batches[1]!.answer([{ ok: false, error: own }, { ok: true, value: Promise.resolve('#3 later') }]);
    expect(await answers[0]).toBe('#1');
    await expect(answers[1]).rejects.toBe(own);
    expect(await answers[2]).toBe('#3 later');
  });

  it('a runner that answers a different number of calls, or throws at once, rejects every call of that batch', async () => {
    const short = createBatcher<number, string>(async () => [], { inFlight: 1, maxItems: 10 });
    await expect(short(1)).rejects.toThrow('batch answered 0 calls of 1');
    const broken = createBatcher<number, string>(() => {
      throw new TypeError('bad item');
    }, { inFlight: 1, maxItems: 10 });
    await expect(broken(1)).rejects.toThrow('bad item');
  });

  it('a call still queued sendWithinMs after it was made is taken out and rejected, never sent; the rest go on', async () => {
    const { batches, run, echo } = manualRunner();
    const call = createBatcher(run, { inFlight: 1, maxItems: 10, sendWithinMs: 40 });
    const stalled = call(1);
    const made = performance.now();
    const early = [call(2), call(3)];
    await new Promise((resolve) => setTimeout(resolve, 25));
    const later = call(4);
    // The batch ahead never answers until the test answers it below: they are rejected by their moment alone.
    const [two, three] = await Promise.allSettled(early);
    expect(performance.now() - made, 'not before their moment').toBeGreaterThanOrEqual(38);
    expect(batches.map((b) => b.items), 'neither was sent').toEqual([[1]]);
    for (const outcome of [two, three]) {
      expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'StoreUnavailableError' } });
      expect((outcome as PromiseRejectedResult).reason.message).toMatch(/not sent within 40 ms.*nothing of this call was sent/);
    }
    // The stalled batch answers: only the call still within its moment goes next.
    batches[0]!.answer(echo([1]));
    await turn();
    expect(batches.map((b) => b.items)).toEqual([[1], [4]]);
    batches[1]!.answer(echo([4]));
    expect([await stalled, await later]).toEqual(['#1', '#4']);
  });

  it('each call of a batch comes with the moment it must be sent by: sendWithinMs after it was made', async () => {
    const { batches, run, echo } = manualRunner();
    const before = performance.now();
    const call = createBatcher(run, { inFlight: 1, maxItems: 10, sendWithinMs: 1000 });
    const answers = [call(1), call(2)];
    const after = performance.now();
    batches[0]!.answer(echo([1]));
    await turn();
    for (const batch of batches) {
      for (const sendBy of batch.sendBy) {
        expect(sendBy).toBeGreaterThanOrEqual(before + 1000);
        expect(sendBy).toBeLessThanOrEqual(after + 1000);
      }
    }
    batches[1]!.answer(echo([2]));
    await Promise.all(answers);
    // Without sendWithinMs a call may wait for as long as the batch ahead does.
    const unbounded = manualRunner();
    createBatcher(unbounded.run, { inFlight: 1, maxItems: 10 })(1).catch(() => undefined);
    expect(unbounded.batches[0]!.sendBy).toEqual([Infinity]);
  });
  it('a queued batch is sent in the async context of its oldest call, not of the call whose batch came back', async () => {
    // What a tracer (OpenTelemetry's context manager is an AsyncLocalStorage) or a host's per-request logger reads
    // while the statement is sent: sent from the previous batch's continuation, every queued batch was filed under
    // the request whose call opened the first batch, often one already answered.
    const requests = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const { batches, run: manual, echo } = manualRunner();
    const run = (items: readonly number[], sendBy: readonly number[]) => {
      seen.push(requests.getStore());
      return manual(items, sendBy);
    };
    const call = createBatcher(run, { inFlight: 1, maxItems: 2 });
    // Each caller also resumes in its own context, whichever batch answered it.
    const answers = ['a', 'b', 'c', 'd'].map((request, n) => requests.run(request, async () => `${await call(n)}@${requests.getStore()}`));
    batches[0]!.answer(echo([0]));
    await turn();
    batches[1]!.answer(echo([1, 2]));
    await turn();
    batches[2]!.answer(echo([3]));
    expect(await Promise.all(answers)).toEqual(['#0@a', '#1@b', '#2@c', '#3@d']);
    expect(batches.map((b) => b.items)).toEqual([[0], [1, 2], [3]]);
    expect(seen).toEqual(['a', 'b', 'd']);
  });
});
