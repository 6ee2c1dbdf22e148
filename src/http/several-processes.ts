// Whether this process is one of several serving the same app (node:cluster, pm2), for the in-memory sessions warning.
import cluster from 'node:cluster';

/**
 * Names how this process is one of several behind one address, or `null` when nothing says so: a node:cluster worker
 * (pm2's cluster mode runs its instances as such), or a pm2 instance other than the first (`NODE_APP_INSTANCE`, which
 * pm2 sets to 0, 1, … in fork mode too; the first is not told apart from a single instance, so only the others say it).
 * Login sessions kept in one process's memory are unknown to the others: a sign-in at one, then the consent posted to
 * another, meets the sign-in page again. @see RFC 6749 §3.1 (the authorization server authenticates the resource owner).
 */
export function oneOfSeveralProcesses(env: NodeJS.ProcessEnv = process.env, isWorker = cluster.isWorker): string | null {
  if (isWorker) return 'a node:cluster worker';
  const instance = env.NODE_APP_INSTANCE;
  return instance !== undefined && instance !== '' && instance !== '0' ? `pm2 instance ${instance.slice(0, 20)}` : null;
}
