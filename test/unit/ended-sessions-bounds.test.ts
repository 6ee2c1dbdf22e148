// The memory of ended sessions is bounded, by count and by time: a flood of sign-outs cannot grow it without end.
import type { Request } from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { guardEndedSessions } from '../../src/http/ended-sessions.js';
import { endSignIn, signInEndedAt } from '../../src/http/ended-sign-ins.js';
import { resolveOptions } from '../../src/options.js';

/** A session store that records which ids were written. */
function recordingStore() {
  const written: string[] = [];
  return {
    written,
    set(sid: string, _session: unknown, callback?: (err?: unknown) => void) { written.push(sid); callback?.(); },
    touch(sid: string, _session: unknown, callback?: () => void) { written.push(sid); callback?.(); },
    destroy(_sid: string, callback?: (err?: unknown) => void) { callback?.(); },
  };
}

const write = (store: { set: (sid: string, session: unknown, callback?: () => void) => void }, sid: string) =>
  new Promise<void>((resolve) => { store.set(sid, {}, resolve); });

afterEach(() => { vi.useRealTimers(); });

describe('the router\'s session store drops writes to ids this process ended', () => {
  it('remembers at most 10,000 ended ids: past that the oldest is written again, the newest still dropped', async () => {
    const inner = recordingStore();
    const store = guardEndedSessions(inner, 1800);
    for (let i = 0; i <= 10_000; i += 1) store.destroy(`sid-${i}`);
    await write(store, 'sid-0');
    await write(store, 'sid-1');
    await write(store, 'sid-10000');
    expect(inner.written).toEqual(['sid-0']);
  });

  it('forgets an ended id once the idle lifetime has passed, when a written-back sign-in would have expired anyway', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const inner = recordingStore();
    const store = guardEndedSessions(inner, 60);
    store.destroy('sid-a');
    vi.setSystemTime(Date.now() + 59_999);
    await write(store, 'sid-a');
    expect(inner.written).toEqual([]);
    vi.setSystemTime(Date.now() + 1);
    await write(store, 'sid-a');
    expect(inner.written).toEqual(['sid-a']);
  });
});

describe('the sign-ins this process ended in a host\'s express-session', () => {
  const options = resolveOptions({ issuer: 'http://auth.test', session: { hostSession: true, absoluteTtl: 60, idleTtl: 60 } });
  const req = (sid: string) => ({ sessionID: sid }) as unknown as Request;

  it('are remembered for at most 10,000 sessions: past that the oldest is forgotten', () => {
    const now = Date.now();
    for (let i = 0; i <= 10_000; i += 1) endSignIn(req(`host-sid-${i}`), options, now);
    expect(signInEndedAt(req('host-sid-0'), options, now)).toBeNull();
    expect(signInEndedAt(req('host-sid-1'), options, now)).toBe(now);
    expect(signInEndedAt(req('host-sid-10000'), options, now)).toBe(now);
  });

  it('are forgotten after the absolute lifetime, past which the copy\'s sign-in has expired anyway', () => {
    const now = Date.now();
    endSignIn(req('host-sid-late'), options, now);
    expect(signInEndedAt(req('host-sid-late'), options, now + 59_999)).toBe(now);
    expect(signInEndedAt(req('host-sid-late'), options, now + 60_000)).toBeNull();
  });
});
