// Starts two operations in both orders and at a sweep of offsets, so a check-then-write gap shows every run.

/**
 * How the second operation of a race starts after the first (RFC 6749 §4.1.2, RFC 7009 §2.1: the races):
 * - `same-tick`: both from separate promise callbacks of one tick, the order being `first`'s;
 * - `microtask`: `steps` microtask turns (`await Promise.resolve()`) after the first;
 * - `macrotask`: `steps` event-loop turns (`setImmediate`) after the first.
 */
export interface RaceSchedule {
  readonly first: 'a' | 'b';
  readonly unit: 'same-tick' | 'microtask' | 'macrotask';
  readonly steps: number;
}

/** Microtask offsets swept one by one: cheap, and an in-process `await` chain is a few microtasks per step. */
const MICROTASK_STEPS = 32;
/** Macrotask offsets swept one by one: every event-loop turn of an in-process store's round trips. */
const MACROTASK_STEPS = 16;
/** Wider macrotask offsets, for networked stores whose round trip spans many event-loop turns. */
const WIDE_MACROTASK_STEPS: readonly number[] = [24, 32, 48, 64, 96, 128, 192, 256];

function buildSchedules(): RaceSchedule[] {
  const schedules: RaceSchedule[] = [
    { first: 'a', unit: 'same-tick', steps: 0 },
    { first: 'b', unit: 'same-tick', steps: 0 },
  ];
  for (let steps = 0; steps <= Math.max(MICROTASK_STEPS, MACROTASK_STEPS); steps++) {
    if (steps <= MICROTASK_STEPS) schedules.push({ first: 'a', unit: 'microtask', steps }, { first: 'b', unit: 'microtask', steps });
    if (steps <= MACROTASK_STEPS) schedules.push({ first: 'a', unit: 'macrotask', steps }, { first: 'b', unit: 'macrotask', steps });
  }
  for (const steps of WIDE_MACROTASK_STEPS) schedules.push({ first: 'a', unit: 'macrotask', steps }, { first: 'b', unit: 'macrotask', steps });
  return schedules;
}

/**
 * The sweep every race rule runs through, round after round (118 schedules): both orders started in the
 * same tick; then both orders with the second operation started 0..32 microtasks and 0..16 macrotasks
 * after the first, one step at a time; then wider macrotask offsets up to 256 turns. On an in-process
 * store the event loop is deterministic, so the round that opens a store's check-then-write window opens it
 * on every run.
 * @see RFC 6749 §4.1.2 (single use), RFC 7009 §2.1 (revocation takes effect at once).
 */
export const RACE_SCHEDULES: readonly RaceSchedule[] = buildSchedules();

/** Default rounds of a race rule: the whole sweep, once. @see StoreConformanceOptions.rounds, RFC 7009 §2.1 */
export const DEFAULT_RACE_ROUNDS = RACE_SCHEDULES.length;

/** The schedule of a round: the sweep in order, starting over after its end. @see RFC 7009 §2.1 */
export function scheduleOfRound(round: number): RaceSchedule {
  return RACE_SCHEDULES[round % RACE_SCHEDULES.length]!;
}

async function pause(unit: 'microtask' | 'macrotask', steps: number): Promise<void> {
  for (let i = 0; i < steps; i++) {
    if (unit === 'microtask') await Promise.resolve();
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Runs `a` and `b` as `schedule` says and resolves both results once both have settled; rejects with the
 * first failure (the other is still awaited, so nothing is left running into the next round).
 * @see RFC 6749 §4.1.2, RFC 7009 §2.1 (the races the rules check).
 */
export async function race<A, B>(a: () => Promise<A>, b: () => Promise<B>, schedule: RaceSchedule): Promise<[A, B]> {
  let pa: Promise<A>;
  let pb: Promise<B>;
  if (schedule.unit === 'same-tick') {
    // Two callbacks of one resolved promise: neither starts inside the other's synchronous part.
    const tick = Promise.resolve();
    if (schedule.first === 'a') {
      pa = tick.then(a);
      pb = tick.then(b);
    } else {
      pb = tick.then(b);
      pa = tick.then(a);
    }
  } else if (schedule.first === 'a') {
    pa = a();
    void pa.catch(() => undefined);
    await pause(schedule.unit, schedule.steps);
    pb = b();
  } else {
    pb = b();
    void pb.catch(() => undefined);
    await pause(schedule.unit, schedule.steps);
    pa = a();
  }
  const [ra, rb] = await Promise.allSettled([pa!, pb!]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

/** Runs `round(r)` for r = 0..rounds-1, one after the other. @see RFC 6749 §4.1.2 */
export async function forEachRound(rounds: number, round: (index: number, schedule: RaceSchedule) => Promise<void>): Promise<void> {
  for (let index = 0; index < rounds; index++) await round(index, scheduleOfRound(index));
}

/** A short description of a round, for failure messages: which round, which order, which offset. @see RFC 7009 §2.1 */
export function describeRound(index: number, schedule: RaceSchedule): string {
  const order = schedule.first === 'a' ? 'A then B' : 'B then A';
  const offset = schedule.unit === 'same-tick' ? 'in the same tick' : `${schedule.steps} ${schedule.unit}s apart`;
  return `round ${index} (${order}, ${offset})`;
}
