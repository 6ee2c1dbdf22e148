// Sends a write script and its WAIT to the Redis Cluster node that runs the script, following MOVED and ASK as a pair.
import { sendWithWaitOn, type SendWithWait } from './replica-wait.js';

/** One node's connection in node-redis 5's cluster client. */
interface NodeClientLike {
  sendCommand(args: string[], options?: object): Promise<unknown>;
}

/**
 * What this reads of node-redis 5's cluster client, which does not type it: the loop that sends a command to its
 * slot's master and follows MOVED (re-reading the slot map) and ASK (ASKING first, in one chain) up to
 * `maxCommandRedirections` times. `cluster.sendCommand` is that loop around one command.
 */
interface ExecutingClusterLike {
  readonly _self?: ExecutingClusterLike;
  readonly _commandOptions?: object;
  _execute?(
    firstKey: string, isReadonly: boolean, options: object,
    fn: (client: NodeClientLike, options?: object) => Promise<unknown>,
  ): Promise<unknown>;
}

/**
 * The cluster's `SendWithWait`, or null for a client without node-redis 5's redirect loop (another driver).
 *
 * `cluster.sendCommand` follows a MOVED or ASK itself, so a script sent with it could run on another node than the
 * one its keyless WAIT, routed by the slot map of the moment, went to: after a reshard (the map not yet re-read) the
 * WAIT went to the slot's old master, which, still a primary with its replicas, counted them and so confirmed a
 * write it never took. Here each attempt sends the script and the WAIT together on one node's connection, and only
 * a MOVED or ASK answer to the script (which Redis gives before running anything) makes the loop send the pair again,
 * to the next node: a script runs at most once, and its WAIT is answered by the node that ran it, on the connection
 * that wrote it. The WAIT an old node answered for a script it redirected is dropped.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/ (MOVED and ASK redirection)
 * @see https://redis.io/docs/latest/commands/wait/
 */
export function clusterScriptWithWait(cluster: unknown): SendWithWait | null {
  const self = (cluster as ExecutingClusterLike)._self ?? (cluster as ExecutingClusterLike);
  if (typeof self._execute !== 'function') return null;
  return async (routingKey, script, wait) => {
    // The loop sets the slot number on these options (and, after an ASK, the chain ASKING opens): both commands
    // carry them, so they stay together wherever node-redis moves a slot's queued commands.
    const options = { ...self._commandOptions };
    const sent = await self._execute!(routingKey, false, options, (client, given) =>
      sendWithWaitOn((args) => client.sendCommand([...args], given), script, wait));
    return sent as Awaited<ReturnType<SendWithWait>>;
  };
}
