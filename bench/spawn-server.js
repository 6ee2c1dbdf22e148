// Starts bench/server.js in a child process, waits for its JSON ready line on stdout (no sleeps), and stops it.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
// A code-exchange server mints every code of its run before it is ready (84,000 by default): on the slowest VMs
// of this type that took over 20 s on PostgreSQL, and the row was skipped.
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * @param {string[]} args argv of server.js, e.g. ['--app', 'oauth', '--store', 'sqlite']
 * @param {{ nodeArgs?: string[], wrapper?: string[], readyTimeoutMs?: number }} [options] extra node flags, e.g.
 *   ['--cpu-prof']; a command that runs node, e.g. ['valgrind', '--tool=callgrind'] (bench/instructions.js); how long
 *   to wait for the ready line (default 120 s)
 * @returns {Promise<{ url: string, port: number, pid: number, clientId?: string, clientSecret?: string,
 *   cpuUsage(): Promise<NodeJS.CpuUsage>, memoryUsage(): Promise<NodeJS.MemoryUsage>, stop(): Promise<void>,
 *   child: import('node:child_process').ChildProcess }>}
 *   cpuUsage: the child's user+system CPU time; child: for other IPC messages (bench/soak.js)
 */
export async function startServer(args, { nodeArgs = [], wrapper = [], readyTimeoutMs = READY_TIMEOUT_MS } = {}) {
  const command = [...wrapper, process.execPath, ...nodeArgs, SERVER, ...args];
  const child = spawn(command[0], command.slice(1), {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  const lines = createInterface({ input: child.stdout });
  try {
    const report = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server ${args.join(' ')} not ready within ${readyTimeoutMs} ms`)), readyTimeoutMs);
      lines.on('line', (line) => {
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          return; // not ours
        }
        clearTimeout(timer);
        if (message.ready) resolve(message);
        else reject(new Error(`server ${args.join(' ')} failed to start: ${message.error}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`server ${args.join(' ')} exited before it was ready (${code ?? signal})`));
      });
    });
    return {
      ...report, url: `http://127.0.0.1:${report.port}`, cpuUsage: () => childCpuUsage(child),
      memoryUsage: () => childMemoryUsage(child), stop: () => stopChild(child), child,
    };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

function childCpuUsage(child) {
  return new Promise((resolve, reject) => {
    // Generous: a store's sweep (bench/scale.js) may hold the child's event loop for seconds.
    const timer = setTimeout(() => reject(new Error('server did not report its CPU usage')), 60_000);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message.cpuUsage);
    });
    child.send('cpu-usage');
  });
}

/** The child's process.memoryUsage() (rss, heapUsed, …), asked over IPC as its CPU time is. */
function childMemoryUsage(child) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not report its memory usage')), 60_000);
    const listener = (message) => {
      if (!message.memoryUsage) return;
      clearTimeout(timer);
      child.off('message', listener);
      resolve(message.memoryUsage);
    };
    child.on('message', listener);
    child.send('memory-usage');
  });
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
