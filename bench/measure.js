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
 *   wrkThreads?: number, serverCpuUsage: () => Promise<NodeJS.CpuUsage> }} load
 * @returns {Promise<{ rps: number, p50: number, p99: number, max: number, requests: number, cpuUs: number }>}
 *   latencies in ms; cpuUs: the server's CPU time (user + system) per request over the measured run, which
 *   other load on the machine disturbs much less than req/s
 */
export async function measure({ warmupSeconds, durationSeconds, serverCpuUsage, generator = 'autocannon', wrkThreads = 2, wrkCodes, ...load }) {
  if (generator === 'wrk') return measureWrk({ warmupSeconds, durationSeconds, serverCpuUsage, wrkThreads, wrkCodes, ...load });
  const options = { pipelining: 1, ...load };
  checkResult(await autocannon({ ...options, duration: warmupSeconds }), load.url, 'warm-up');
  const before = await serverCpuUsage();
  const result = await autocannon({ ...options, duration: durationSeconds });
  const after = await serverCpuUsage();
  checkResult(result, load.url, 'measurement');
  const cpuMicros = after.user - before.user + (after.system - before.system);
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    cpuUs: cpuMicros / result.requests.total,
  };
}

function checkResult(result, url, phase) {
  const bad = result.errors + result.timeouts + result.non2xx;
  if (bad > 0 || result['2xx'] === 0) {
    throw new Error(`${phase} of ${url}: ${result['2xx']} ok, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
}

async function measureWrk({ warmupSeconds, durationSeconds, serverCpuUsage, wrkThreads, wrkCodes, url, method, headers, body, connections }) {
  const load = { url, method, headers, body, codes: wrkCodes, connections, threads: wrkThreads };
  checkWrk(await runWrk({ ...load, seconds: warmupSeconds }), url, 'warm-up');
  const before = await serverCpuUsage();
  const result = await runWrk({ ...load, seconds: durationSeconds });
  const after = await serverCpuUsage();
  checkWrk(result, url, 'measurement');
  const cpuMicros = after.user - before.user + (after.system - before.system);
  return {
    rps: result.requests / result.seconds,
    p50: result.p50,
    p99: result.p99,
    max: result.max,
    requests: result.requests,
    cpuUs: cpuMicros / result.requests,
  };
}

function checkWrk(result, url, phase) {
  if (result.errors + result.non2xx > 0 || result.requests === 0) {
    throw new Error(`${phase} of ${url} (wrk): ${result.requests} answers, ${result.non2xx} non-2xx, ${result.errors} socket errors or timeouts`);
  }
}
