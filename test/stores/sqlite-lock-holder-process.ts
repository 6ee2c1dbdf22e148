// The test's side of sqlite-lock-holder.ts: another process on a SQLite file whose write lock a test takes and lets go.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LockCommand, LockReport } from './sqlite-lock-holder.js';

/** Another process on the same file (the CLI, a backup) that takes the write lock and lets go when told. */
export class LockHolder {
  private readonly child: ChildProcess;
  private readonly queued: LockReport[] = [];
  private readonly waiting: Array<(report: LockReport) => void> = [];

  constructor(file: string) {
    const holder = fileURLToPath(new URL('./sqlite-lock-holder.ts', import.meta.url));
    this.child = fork(holder, [file], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m) => (this.waiting.shift() ?? ((r: LockReport) => this.queued.push(r)))(m as LockReport));
    this.child.once('exit', (code) => { for (const w of this.waiting.splice(0)) w({ error: `lock holder exited (${code})` }); });
  }

  private async tell(command: LockCommand | null): Promise<LockReport> {
    if (command) this.child.send(command);
    const report = this.queued.shift() ?? await new Promise<LockReport>((resolve) => this.waiting.push(resolve));
    if (report.error !== undefined) throw new Error(report.error);
    return report;
  }

  ready(): Promise<LockReport> { return this.tell(null); }
  /** Resolves once the other process holds the lock. */
  lock(mode: 'IMMEDIATE' | 'EXCLUSIVE' = 'IMMEDIATE'): Promise<LockReport> { return this.tell({ lock: mode }); }
  /** Resolves once the other process has rolled back: the lock is free. */
  release(): Promise<LockReport> { return this.tell({ release: true }); }
  stop(): void { this.child.kill(); }
}
