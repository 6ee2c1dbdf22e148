// Child process for the SQLite lock tests (sqlite-lock-holder-process.ts): another process (the CLI, a backup) holding SQLite's write lock until told to let go.
import Database from 'better-sqlite3';

/** What the test sends: take the lock (`BEGIN IMMEDIATE` or `BEGIN EXCLUSIVE`), or release it. */
export interface LockCommand {
  readonly lock?: 'IMMEDIATE' | 'EXCLUSIVE';
  readonly release?: true;
}

/** What the holder answers, once the lock is held or released. */
export interface LockReport {
  readonly ready?: true;
  readonly locked?: true;
  readonly released?: true;
  readonly error?: string;
}

const filename = process.argv[2];
if (!filename || !process.send) throw new Error('usage: fork(sqlite-lock-holder.ts, [filename])');
const send = (report: LockReport): void => void process.send?.(report);

// No busy wait: the test takes the lock only when the store is idle, and must hear at once if it cannot.
const db = new Database(filename, { fileMustExist: true, timeout: 0 });
send({ ready: true });

process.on('message', (command: LockCommand) => {
  try {
    if (command.lock) {
      db.exec(`BEGIN ${command.lock}`);
      // A write makes the transaction a real writer in every journal mode, as a CLI command's would.
      db.exec("INSERT INTO revoked_grants (grant_id, expires_at) VALUES ('lock-holder', 0) ON CONFLICT DO NOTHING");
      send({ locked: true });
    } else if (command.release) {
      db.exec('ROLLBACK');
      send({ released: true });
    }
  } catch (err) {
    send({ error: String(err) });
  }
});

process.on('disconnect', () => {
  db.close();
  process.exit(0);
});
