// Drives one running server with wrk (the C load generator the issue's own harness uses): one run, its figures.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const lua = (value) => JSON.stringify(String(value)); // a JSON string of these characters is a valid Lua string

/**
 * The Lua script of one run. Every answer outside 2xx is counted per thread and summed in `done`, so the
 * runner can fail the run (wrk itself only counts statuses above 399). With `codes` (bench/mint-codes.js's
 * codes), each request redeems the next code: thread t of T sends codes first + t, first + t + T, …, so
 * threads never share one, and `done` reports how many each took, for the next run to start after them. With
 * `bearers` (access tokens), each request sends the next one in turn as its Authorization header, so a bearer
 * cache holds as many tokens as a server with that many clients would.
 */
function script({ method, headers, body, codes, bearers, threads }) {
  const lines = [
    `wrk.method = ${lua(method)}`,
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`),
    ...(body !== undefined ? [`wrk.body = ${lua(body)}`] : []),
    'local all, made = {}, 0',
    'function setup(thread) thread:set("id", made); made = made + 1; table.insert(all, thread) end',
    'bad, sent = 0, 0',
    'function response(status) if status < 200 or status > 299 then bad = bad + 1 end end',
  ];
  if (codes) {
    lines.push(
      `local prefix, base, first, step = ${lua(codes.prefix)}, ${codes.baseMs}, ${codes.first}, ${threads}`,
      `local head, tail = "grant_type=authorization_code&code=", ${lua(`&redirect_uri=${encodeURIComponent(codes.redirectUri)}`)}`,
      'local digits = "0123456789abcdefghijklmnopqrstuv"',
      // bench/mint-codes.js benchCode: the code's millisecond in 11 base32hex characters, a dot, prefix and number.
      'local function b32(ms) local s = "" while ms > 0 do local d = ms % 32; s = digits:sub(d + 1, d + 1) .. s; ms = (ms - d) / 32 end return string.rep("0", 11 - #s) .. s end',
      'function request()',
      '  local i = first + id + sent * step',
      '  sent = sent + 1',
      '  return wrk.format(nil, nil, nil, head .. b32(base + i) .. "." .. prefix .. string.format("%d", i) .. tail)',
      'end',
    );
  }
  if (bearers) {
    lines.push(
      `local bearers, step = { ${bearers.map((token) => lua(`Bearer ${token}`)).join(', ')} }, ${threads}`,
      'function request()',
      '  local headers = {}',
      '  for name, value in pairs(wrk.headers) do headers[name] = value end',
      '  headers["Authorization"] = bearers[((id + sent * step) % #bearers) + 1]',
      '  sent = sent + 1',
      '  return wrk.format(nil, nil, headers)',
      'end',
    );
  }
  lines.push(
    'function done(summary, latency)',
    '  local nonOk, codes = 0, 0',
    '  for _, thread in ipairs(all) do nonOk = nonOk + thread:get("bad"); codes = math.max(codes, thread:get("sent")) end',
    '  local e = summary.errors',
    '  io.write(string.format("WRK %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, nonOk,',
    '    latency:percentile(50), latency:percentile(99), latency.max, codes))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * One wrk run against `url`. `codes`, when given, is advanced past the codes this run used.
 * @param {{ url: string, method?: string, headers?: Record<string, string>, body?: string,
 *   codes?: { prefix: string, baseMs: number, first: number, redirectUri: string }, bearers?: string[],
 *   connections: number, threads: number, seconds: number }} load
 * @returns {Promise<{ requests: number, seconds: number, errors: number, non2xx: number, p50: number, p99: number, max: number }>}
 *   latencies in ms
 */
export async function runWrk({ url, method = 'GET', headers = {}, body, codes, bearers, connections, threads, seconds }) {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-bench-wrk-'));
  try {
    const file = join(dir, 'load.lua');
    const used = Math.max(1, Math.min(threads, connections));
    writeFileSync(file, script({ method, headers, body, codes, bearers, threads: used }));
    const stdout = await new Promise((resolve, reject) => {
      execFile('wrk', [`-t${used}`, `-c${connections}`, `-d${seconds}s`, '-s', file, url], (error, out, err) => {
        if (error) reject(new Error(`wrk failed (is it installed? apt-get install wrk): ${error.message}\n${err}`));
        else resolve(out);
      });
    });
    const match = /^WRK (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/m.exec(stdout);
    if (!match) throw new Error(`wrk printed no summary:\n${stdout}`);
    const [requests, micros, errors, non2xx, p50, p99, max, codesSent] = match.slice(1).map(Number);
    if (codes) codes.first += codesSent * used;
    const ms = (us) => Math.round(us / 10) / 100;
    return { requests, seconds: micros / 1e6, errors, non2xx, p50: ms(p50), p99: ms(p99), max: ms(max) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
