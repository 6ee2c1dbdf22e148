// The CPU time of the local database server's processes (PostgreSQL or Redis), read from /proc for the bench's table.
import { readdirSync, readFileSync } from 'node:fs';

/** Process names (/proc/PID/comm) of each engine's server: PostgreSQL's backends and helpers, Redis's one process. */
const COMMANDS = { postgres: new Set(['postgres']), redis: new Set(['redis-server']) };
/** Linux reports utime and stime in USER_HZ ticks, which is 100 per second on every architecture Node runs on. */
const MICROS_PER_TICK = 1_000_000 / 100;

/**
 * User + system CPU time, in µs, of every process of `engine` on this machine, or of `pid` alone (Linux only:
 * `null` without /proc), with that of their children that have exited: PostgreSQL's backends and autovacuum
 * workers come and go, and a child's time moves to its parent's cutime/cstime when the postmaster reaps it, so
 * the sum only grows. The database serves the bench alone on a bench machine; anything else it serves
 * meanwhile is counted as the bench's.
 * @param {'postgres' | 'redis'} engine
 * @param {number} [pid] the one process to read (the Redis server the bench uses, not a cluster's beside it)
 * @returns {number | null}
 */
export function databaseCpuMicros(engine, pid) {
  const names = COMMANDS[engine];
  let pids;
  try {
    pids = pid === undefined ? readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)) : [String(pid)];
  } catch {
    return null;
  }
  let ticks = 0;
  for (const id of pids) {
    let stat;
    try {
      stat = readFileSync(`/proc/${id}/stat`, 'utf8');
    } catch {
      if (pid !== undefined) return null;
      continue; // exited since the listing
    }
    // pid (comm) state …: comm may hold spaces and parentheses, so split after the last ')'.
    const close = stat.lastIndexOf(')');
    if (!names.has(stat.slice(stat.indexOf('(') + 1, close))) continue;
    const fields = stat.slice(close + 2).split(' ');
    // Fields 14–17 of proc(5), utime, stime, cutime and cstime: 11–14 after the state, which is field 3.
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks * MICROS_PER_TICK;
}

/**
 * The process id of the Redis server at `url` (INFO server), so that only it is read, or `undefined` when it
 * cannot be asked.
 * @param {string} url
 * @returns {Promise<number | undefined>}
 */
export async function redisServerPid(url) {
  const { createClient } = await import('redis');
  const client = createClient({ url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const match = /^process_id:(\d+)/m.exec(await client.info('server'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  } finally {
    if (client.isOpen) await client.quit().catch(() => undefined);
  }
}
