// A real express-session store whose next save or destroy waits for the test, to put a sign-in's interleaving in its hands.
import { MemorySessionStore } from '../../src/http/memory-session-store.js';

/** A session store method a sign-in waits on. */
export type HeldMethod = 'set' | 'destroy';

/**
 * MemorySessionStore (a real express-session Store subclass) whose next call of `method`, once `holdNext` armed it, waits
 * until `release()`: a busy Redis at one step of a sign-in. `reached` resolves with the session id of the held call;
 * `release(err)` fails it with `err` instead (the store's outage), leaving the store as it was. Later calls pass through.
 */
export class HeldSessionStore extends MemorySessionStore {
  private held: { method: HeldMethod; reached: (sid: string) => void; released: Promise<Error | undefined> } | null = null;

  holdNext(method: HeldMethod): { reached: Promise<string>; release(err?: Error): void } {
    let reached!: (sid: string) => void;
    let release!: (err?: Error) => void;
    const reachedAt = new Promise<string>((resolve) => { reached = resolve; });
    this.held = { method, reached, released: new Promise<Error | undefined>((resolve) => { release = resolve; }) };
    return { reached: reachedAt, release };
  }

  /** What the store holds under `sid`, or null. */
  read(sid: string): Promise<Record<string, unknown> | null> {
    return new Promise((resolve, reject) => this.get(sid, (err, found) => (err ? reject(err) : resolve(found ?? null))));
  }

  override set(sid: string, data: Parameters<MemorySessionStore['set']>[1], callback?: (err?: unknown) => void): void {
    if (!this.take('set', sid, callback, () => super.set(sid, data, callback))) super.set(sid, data, callback);
  }

  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    if (!this.take('destroy', sid, callback, () => super.destroy(sid, callback))) super.destroy(sid, callback);
  }

  /** Holds this call (`go`, once released; its callback hears the error instead, if released with one) if it is the armed one. */
  private take(method: HeldMethod, sid: string, callback: ((err?: unknown) => void) | undefined, go: () => void): boolean {
    const held = this.held;
    if (held?.method !== method) return false;
    this.held = null;
    held.reached(sid);
    void held.released.then((err) => (err ? callback?.(err) : go()));
    return true;
  }
}
