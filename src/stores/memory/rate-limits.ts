// Fixed-window counters in a Map: the memory store's rateLimits tier, and the in-process fallback of the limits.
import type { RateLimitCount, RateLimitStore } from '../contract.js';
import { SWEEP_BATCH } from '../sweep-loop.js';

interface Window {
  count: number;
  readonly resetAt: number;
}

/** Keys kept before a hit first drops ended windows, then the oldest: a flood of new keys cannot grow memory for ever. */
const DEFAULT_MAX_KEYS = 100_000;
/** What a full map is brought down to, so the scan that makes room runs once per many new keys, not for each. */
const ROOM_AFTER_EVICTION = 0.9;

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
 * `maxKeys` keys are kept: past that, a hit first sweeps ended windows and then forgets the oldest keys (down to
 * nine tenths, so the scan is paid once per many keys), so an attacker cycling through usernames or addresses
 * cannot exhaust memory (a forgotten key counts afresh). A window released back to zero is dropped at once: an
 * attempt refused before its check (a blocked source trying made-up usernames) leaves no key behind, so such a
 * flood cannot push out the counters that block it.
 * @see RFC 6819 §5.1.4.2.3 (lock accounts), RFC 6585 §4.
 */
export function createMemoryRateLimits(ready: () => Promise<void> = async () => undefined, maxKeys = DEFAULT_MAX_KEYS): MemoryRateLimits {
  const windows = new Map<string, Window>();

  function sweep(now: number): void {
    for (const [key, window] of windows) if (window.resetAt <= now) windows.delete(key);
  }

  function live(key: string, now: number): Window | null {
    const window = windows.get(key);
    return window && window.resetAt > now ? window : null;
  }

  const view = (window: Window): RateLimitCount => ({ count: window.count, resetAt: new Date(window.resetAt) });

  return {
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
        if (!windows.has(key) && windows.size >= maxKeys) {
          sweep(at);
          // Map order is insertion order: the first keys are the oldest windows.
          const room = Math.floor(maxKeys * ROOM_AFTER_EVICTION);
          if (windows.size >= maxKeys) {
            for (const old of windows.keys()) {
              if (windows.size <= room) break;
              windows.delete(old);
            }
          }
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
}
