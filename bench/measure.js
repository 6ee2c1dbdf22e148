// Drives one running server with autocannon or wrk: a warm-up run that is thrown away, then the measured run.
import autocannon from 'autocannon';
import { runWrk } from './wrk.js';

/**
 * Any error, timeout or non-2xx answer fails the run: a fast error path must never pass for throughput.
 * `generator` 'wrk' runs wrk (`wrkThreads` threads) instead of autocannon: a load generator in C, out of this
 * process, as the issue's own harness uses; per-request bodies then come from `wrkCodes`
 * (bench/token-request.js codeExchangeRequests) instead of autocannon's `requests`.
 * @param {{ url: string, method?: string, headers?: Record<string, string>, body?: string,
 *   connections: number, warmupSeconds: number, durationSeconds: number, generator?: 'autocannon' | 'wrk',
 *   wrkThreads?: number, serverCpuUsage: () => Promise<NodeJS.CpuUsage>, databaseCpuMicros?: () => number | null }} load
 * @returns {Promise<{ rps: number, p50: number, p99: number, max: number, requests: number, cpuUs: number,
 *   dbCpuUs: number | null }>}
 *   latencies in ms; cpuUs: the server's CPU time (user + system) per request over the measured run, which
 *   other load on the machine disturbs much less than req/s; dbCpuUs: the same for the database server's
 *   processes (bench/database-cpu.js), when `databaseCpuMicros` is given and could read them
 */
export async function measure({ warmupSeconds, durationSeconds, serverCpuUsage, databaseCpuMicros, generator = 'autocannon', wrkThreads = 2, wrkCodes, ...load }) {
  const run = generator === 'wrk' ? wrkRun(load, wrkThreads, wrkCodes) : autocannonRun(load);
  await run(warmupSeconds, 'warm-up');
  const before = await serverCpuUsage();
  const dbBefore = databaseCpuMicros?.() ?? null;
  const result = await run(durationSeconds, 'measurement');
  const dbAfter = databaseCpuMicros?.() ?? null;
  const after = await serverCpuUsage();
  const cpuMicros = after.user - before.user + (after.system - before.system);
  return {
    dbCpuUs: dbBefore === null || dbAfter === null ? null : (dbAfter - dbBefore) / result.requests,
    rps: result.requests / result.seconds,
    p50: result.p50,
    p99: result.p99,
    max: result.max,
    requests: result.requests,
    cpuUs: cpuMicros / result.requests,
  };
}

/** One autocannon run of `seconds`, rejected on any error, timeout or non-2xx answer. */
function autocannonRun(load) {
  return async (seconds, phase) => {
    const result = await autocannon({ pipelining: 1, ...load, duration: seconds });
    const bad = result.errors + result.timeouts + result.non2xx;
    if (bad > 0 || result['2xx'] === 0) {
      throw new Error(`${phase} of ${load.url}: ${result['2xx']} ok, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    }
    const { latency } = result;
    return { requests: result.requests.total, seconds: result.duration, p50: latency.p50, p99: latency.p99, max: latency.max };
  };
}

/** One wrk run of `seconds` (bench/wrk.js), rejected on any socket error, timeout or non-2xx answer. */
function wrkRun({ url, method, headers, body, connections }, threads, codes) {
  return async (seconds, phase) => {
    const result = await runWrk({ url, method, headers, body, codes, connections, threads, seconds });
    if (result.errors + result.non2xx > 0 || result.requests === 0) {
      throw new Error(`${phase} of ${url} (wrk): ${result.requests} answers, ${result.non2xx} non-2xx, ${result.errors} socket errors or timeouts`);
    }
    return result;
  };
}
