// Fixed-window counters in a Map: the memory store's rateLimits tier, and the in-process fallback of the limits.
import type { RateLimitCount, RateLimitStore } from '../contract.js';
import { SWEEP_BATCH } from '../sweep-loop.js';

interface Window {
  count: number;
  readonly resetAt: number;
}

/** Keys kept before a hit first drops ended windows, then those that counted least: a flood of new keys cannot grow memory for ever. */
const DEFAULT_MAX_KEYS = 100_000;
/** What a full map is brought down to, so the scan that makes room runs once per many new keys, not for each. */
const ROOM_AFTER_EVICTION = 0.9;
/**
 * Windows looked at, for an end, each time a window starts. More than one, so the look-through outpaces the keys it
 * must cover: a window ended is gone within one pass, and a pass takes half as many new windows as the map holds, so
 * the map holds at most twice the live windows (without a sweep timer, which the router's own counters do not have).
 */
const LOOKS_PER_NEW_WINDOW = 2;

/**
 * Counters made here: in one process's memory, so their keys reach no database, log or APM span of a store call.
 * A WeakSet, not a flag on the object, so a custom store cannot claim it by accident.
 */
const IN_PROCESS = new WeakSet<RateLimitStore>();

/** Whether `rateLimits` are counters of this file (or `markInProcess` wrappers of them): kept in this process only. */
export function isInProcessRateLimits(rateLimits: RateLimitStore): boolean {
  return IN_PROCESS.has(rateLimits);
}

/** Marks `wrapper` as in-process when it only wraps `original` counters that are (the metrics' timing). */
export function markInProcess(wrapper: RateLimitStore, original: RateLimitStore): void {
  if (IN_PROCESS.has(original)) IN_PROCESS.add(wrapper);
}

/** The counters and the sweep their owner runs (the memory store's timer, or nobody: sweeping also happens on hits). */
export interface MemoryRateLimits {
  readonly rateLimits: RateLimitStore;
  /** Drops every window ended at `now`. */
  sweep(now: number): void;
  /** The same, yielding after every `SWEEP_BATCH` windows looked at (the memory store's sweep loop). */
  sweepChunks(now: number): Generator<void, void, unknown>;
  /** Windows held, ended ones included until swept. */
  size(): number;
}

/**
 * Counters in one Map. Each method reads and writes in one synchronous block after `ready` (the memory
 * store's gate: a later event-loop turn, refused once closed), so hits are atomic within the process. At most
 * `maxKeys` keys are kept: past that, a hit first sweeps ended windows and then forgets the live windows that
 * counted least (down to nine tenths, so the scan is paid once per many keys; see `evict`), so an attacker cycling
 * through usernames, client_ids or addresses cannot exhaust memory, nor push out a count that holds a guesser back
 * (a forgotten key counts afresh). Below the cap, each window started also looks at the next two in turn and drops
 * those ended (`lookThrough`), so with no sweep timer (the router's own counters have none) ended windows do not pile
 * up to the cap: the map holds at most about twice the live windows. A window released back to zero is dropped at once: an
 * attempt refused before its check (a blocked source trying made-up usernames) leaves no key behind, so such a
 * flood cannot push out the counters that block it.
 * @see RFC 6819 §5.1.4.2.3 (lock accounts), RFC 6585 §4.
 */
export function createMemoryRateLimits(ready: () => Promise<void> = async () => undefined, maxKeys = DEFAULT_MAX_KEYS): MemoryRateLimits {
  const windows = new Map<string, Window>();
  /** Where the look-through stands: a Map's iterator goes on past deletions and reaches windows added behind it. */
  let cursor: Iterator<[string, Window]> | null = null;

  /** Looks at the next few windows in turn and drops those ended: amortized, so no hit scans the map. */
  function lookThrough(now: number): void {
    for (let i = 0; i < LOOKS_PER_NEW_WINDOW; i++) {
      cursor ??= windows.entries();
      const next = cursor.next();
      if (next.done === true) {
        cursor = null;
        return;
      }
      if (next.value[1].resetAt <= now) windows.delete(next.value[0]);
    }
  }

  function sweep(now: number): void {
    for (const [key, window] of windows) if (window.resetAt <= now) windows.delete(key);
  }

  /**
   * Drops `count` live windows, those that counted least first and, among equals, those ending soonest (then the
   * oldest). A flood of new keys (cheap failures with made-up client_ids or usernames, from many sources) then costs
   * the map its own one-hit windows, not an account's count past `maxPerAccount`: forgetting oldest first let ~100,000
   * such failures from ~1,000 sources reset it, and the distributed guessing it stops went on. To push out a count,
   * as many windows must have counted at least as much. A long window of one hit (a source known for an account)
   * outlives the short ones of a flood. Three passes over the map and a sort of one count's end times.
   */
  function evict(count: number): void {
    const atCount = new Map<number, number>();
    for (const window of windows.values()) atCount.set(window.count, (atCount.get(window.count) ?? 0) + 1);
    // The smallest count whose windows, with every smaller count's, are enough.
    let threshold = 0;
    let below = 0;
    for (const c of [...atCount.keys()].sort((a, b) => a - b)) {
      threshold = c;
      if (below + atCount.get(c)! >= count) break;
      below += atCount.get(c)!;
    }
    // Of the windows at the threshold, the `needed` ending soonest: all before `cutoff`, and enough ending at it.
    const needed = count - below;
    const ends = new Float64Array(atCount.get(threshold) ?? 0);
    let n = 0;
    for (const window of windows.values()) if (window.count === threshold) ends[n++] = window.resetAt;
    ends.sort();
    const cutoff = needed > 0 ? ends[needed - 1]! : -Infinity;
    let atCutoff = needed;
    for (let i = 0; i < needed - 1 && ends[i]! < cutoff; i++) atCutoff -= 1;
    // Map order is insertion order: windows ending at the cutoff go oldest first.
    for (const [key, window] of windows) {
      if (window.count > threshold) continue;
      if (window.count < threshold || window.resetAt < cutoff) windows.delete(key);
      else if (window.resetAt === cutoff && atCutoff > 0) {
        windows.delete(key);
        atCutoff -= 1;
      }
    }
  }

  function live(key: string, now: number): Window | null {
    const window = windows.get(key);
    return window && window.resetAt > now ? window : null;
  }

  const view = (window: Window): RateLimitCount => ({ count: window.count, resetAt: new Date(window.resetAt) });

  const counters: MemoryRateLimits = {
    sweep,
    size: () => windows.size,
    *sweepChunks(now) {
      let seen = 0;
      for (const [key, window] of windows) {
        if (window.resetAt <= now) windows.delete(key);
        if (++seen % SWEEP_BATCH === 0) yield;
      }
    },
    rateLimits: {
      async hit(key, windowMs, now) {
        await ready();
        const at = now.getTime();
        const current = live(key, at);
        if (current) {
          current.count += 1;
          return view(current);
        }
        lookThrough(at);
        if (!windows.has(key) && windows.size >= maxKeys) {
          sweep(at);
          if (windows.size >= maxKeys) evict(windows.size - Math.floor(maxKeys * ROOM_AFTER_EVICTION));
        }
        const started: Window = { count: 1, resetAt: at + windowMs };
        windows.delete(key);
        windows.set(key, started);
        return view(started);
      },
      async get(key, now) {
        await ready();
        const current = live(key, now.getTime());
        return current ? view(current) : null;
      },
      async release(key, resetAt) {
        await ready();
        const window = windows.get(key);
        if (!window || window.resetAt !== resetAt.getTime() || window.count <= 0) return;
        window.count -= 1;
        // Zero says what no key says (the next hit counts 1), so it takes no room.
        if (window.count === 0) windows.delete(key);
      },
      async reset(key) {
        await ready();
        windows.delete(key);
      },
    },
  };
  IN_PROCESS.add(counters.rateLimits);
  return counters;
}
