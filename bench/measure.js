// Drives one running server with autocannon: a warm-up run that is thrown away, then the measured run.
import autocannon from 'autocannon';

/**
 * Any error, timeout or non-2xx answer fails the run: a fast error path must never pass for throughput.
 * @param {{ url: string, method?: string, headers?: Record<string, string>, body?: string,
 *   connections: number, warmupSeconds: number, durationSeconds: number,
 *   serverCpuUsage: () => Promise<NodeJS.CpuUsage> }} load
 * @returns {Promise<{ rps: number, p50: number, p99: number, max: number, requests: number, cpuUs: number }>}
 *   latencies in ms; cpuUs: the server's CPU time (user + system) per request over the measured run, which
 *   other load on the machine disturbs much less than req/s
 */
export async function measure({ warmupSeconds, durationSeconds, serverCpuUsage, ...load }) {
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
