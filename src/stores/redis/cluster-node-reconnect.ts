// Reconnects a Redis Cluster's node connections on demand, and drops one that stopped answering.
import { StoreUnavailableError } from '../store-unavailable-error.js';
import { reconnectDelay, withDeadline, type RedisConnectionLogger } from './connection.js';
import { joinAttempt } from './join-attempt.js';
import { tolerateClosedDestroy } from './tolerate-closed-destroy.js';

/** One node's connection in node-redis 5's cluster client: a client of its own, closed ones kept. */
interface NodeClientLike {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  destroy(): void;
  sendCommand(args: string[]): Promise<unknown>;
  on(event: 'connect' | 'ready', listener: () => void): unknown;
}

/** What this reads of node-redis 5's cluster client, which does not type it: its slot map and node connections. */
interface ClusterNodesLike {
  readonly _slots?: {
    readonly masters?: readonly { readonly client?: NodeClientLike }[];
    readonly replicas?: readonly { readonly client?: NodeClientLike }[];
    getClientAndSlotNumber?(firstKey: string, isReadonly: boolean): Promise<{ readonly client: NodeClientLike }>;
  };
}

/** One node connection's reconnection: the attempt under way, the background one waiting, failures in a row. */
interface NodeReconnection {
  attempt: Promise<void> | null;
  background: ReturnType<typeof setTimeout> | undefined;
  retries: number;
  /** Set when the handshake deadline dropped the connection: what the attempt failed of. */
  expired: StoreUnavailableError | null;
  handshake: ReturnType<typeof setTimeout> | undefined;
  probing: boolean;
}

/** What the cluster store calls around each command, and what the cluster's events call. */
export interface ClusterNodeReconnector {
  /**
   * Whether the cluster client has what this reads (node-redis 5's slot map and node connections): when not, nothing
   * is reconnected here, and node-redis's own backoff must stay on.
   */
  readonly supported: boolean;
  /**
   * Reconnects now the connection of the node that serves `firstKey` if it was lost: the attempt (via the slot map's
   * lookup), or the one under way followed by one begun after it if it fails (joinAttempt); `null` for a keyless
   * command.
   */
  reconnect(firstKey: string | undefined, isReadonly: boolean): Promise<void> | null;
  /** Call after a command for `firstKey` timed out: a PING under the same deadline, and a hung connection dropped. */
  probe(firstKey: string | undefined, isReadonly: boolean): void;
  /**
   * Every node connection of the slot map that is closed reconnects in the background, on the backoff: a `node-error`
   * listener, and called once connected for the masters whose first connection failed.
   */
  reconnectLost(): void;
  /** No attempt starts from now on, none waits, and one under way is dropped. */
  stop(): void;
}

/**
 * The cluster's counterpart of connectResilientRedis's reconnection, one per node connection. node-redis's own loop
 * sleeps through its backoff (50 ms doubling to 2 s), which nothing can wake, after a handshake that a hang swallowed
 * had run out its socket timeout; and a connection black-holed under steady calls was never dropped at all (each
 * command written reset its socket timeout): every call for that node's slots timed out, 20 s after the hang's end as
 * at its start. Here a node connection that is lost stays closed (the reconnect strategy gives up) and is made again
 * by the next command for its slots, one attempt at a time per node, or by the same backoff in the background when
 * no command comes; a handshake with no answer within `timeoutMs` is dropped; and a command that timed out has its
 * node PINGed under the same deadline, a hung connection dropped and made again. Each failed attempt emits
 * `node-error`, as node-redis's own did, so a dead master's slots still make the slot map be read again.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/
 */
export function clusterNodeReconnector(cluster: unknown, options: {
  readonly timeoutMs: number;
  readonly logger: RedisConnectionLogger;
  readonly label: string;
  /**
   * Called each time a connection made again here is ready: the end of an outage. node-redis's own `node-ready`
   * tells of a connection's first 'ready' only.
   */
  readonly onReady?: () => void;
}): ClusterNodeReconnector {
  const { timeoutMs, logger, label } = options;
  const slots = (cluster as ClusterNodesLike)._slots;
  const states = new Map<NodeClientLike, NodeReconnection>();
  let stopped = false;

  /** The node connections of the slot map now: a connection no longer in it (its node left the map) is let go. */
  function current(): NodeClientLike[] {
    return [...(slots?.masters ?? []), ...(slots?.replicas ?? [])].flatMap((node) => (node.client ? [node.client] : []));
  }

  function stateOf(client: NodeClientLike): NodeReconnection {
    let state = states.get(client);
    if (state !== undefined) return state;
    const created: NodeReconnection = { attempt: null, background: undefined, retries: 0, expired: null, handshake: undefined, probing: false };
    state = created;
    states.set(client, created);
    // Dropped here (a hung handshake or PING), it is closed without the error that reconnectLost() sees.
    tolerateClosedDestroy(client);
    // The TCP connect is bounded by `connectTimeout`; the handshake after it only by the socket timeout, three times
    // longer, which a connection the outage swallowed (accepted, never answered) runs out.
    client.on('connect', () => {
      clearTimeout(created.handshake);
      created.handshake = setTimeout(() => {
        if (stopped || client.isReady || !client.isOpen) return;
        created.expired = new StoreUnavailableError(`Redis store unavailable (no answer to the connection handshake within ${timeoutMs} ms)`);
        client.destroy();
      }, timeoutMs);
    });
    client.on('ready', () => {
      clearTimeout(created.handshake);
      options.onReady?.();
    });
    return state;
  }

  function reconnectNode(client: NodeClientLike): Promise<void> | null {
    if (stopped) return null;
    // A command that came while an attempt runs was refused at once ("The client is offline") though the node was back.
    const underWay = states.get(client)?.attempt;
    if (underWay) return joinAttempt(underWay, () => (stopped ? undefined : states.get(client)?.attempt ?? begin(client) ?? undefined));
    return begin(client);
  }

  /** A new attempt for a lost node connection, unless it is open (connected, or being connected) or left the map. */
  function begin(client: NodeClientLike): Promise<void> | null {
    if (client.isOpen) return null;
    const state = stateOf(client);
    clearTimeout(state.background);
    state.background = undefined;
    // A connection its node's departure from the map closed is not made again (node-redis made another if it came back).
    if (!current().includes(client)) {
      states.delete(client);
      return null;
    }
    state.expired = null;
    const started = (async () => {
      try {
        await client.connect();
        state.retries = 0;
      } catch (err) {
        throw state.expired ?? err;
      } finally {
        // The deadline of this attempt's handshake must not fire into the next attempt's TCP connect.
        clearTimeout(state.handshake);
        state.attempt = null;
      }
    })();
    state.attempt = started;
    // A failed attempt leaves the connection closed: the next command for its slots, or the backoff, tries again.
    started.catch(() => retryLater(client));
    return started;
  }

  /** Schedules a background attempt after the backoff, unless one is under way or waiting. */
  function retryLater(client: NodeClientLike): void {
    const state = stateOf(client);
    if (stopped || state.attempt !== null || state.background !== undefined) return;
    state.background = setTimeout(() => {
      state.background = undefined;
      reconnectNode(client)?.catch(() => undefined);
    }, reconnectDelay(state.retries));
    state.retries += 1;
    // Housekeeping only: a host that has let go of everything else may exit.
    state.background.unref();
  }

  /**
   * Whether any node connection of the slot map is closed or being made again, read without allocating: while none
   * is, which is almost always, a command needs no slot lookup (an extra promise and deadline timer per command) to
   * learn so. Not ready, not merely closed: a command for a node whose attempt is under way waits for it.
   */
  function anyUnready(): boolean {
    for (const node of slots?.masters ?? []) if (node.client !== undefined && !node.client.isReady) return true;
    for (const node of slots?.replicas ?? []) if (node.client !== undefined && !node.client.isReady) return true;
    return false;
  }

  /** The connection of the node that serves `firstKey` (its slot's master, as the command is routed). */
  async function nodeFor(firstKey: string, isReadonly: boolean): Promise<NodeClientLike | undefined> {
    if (typeof slots?.getClientAndSlotNumber !== 'function') return undefined;
    return (await slots.getClientAndSlotNumber(firstKey, isReadonly)).client;
  }

  return {
    supported: typeof slots?.getClientAndSlotNumber === 'function' && Array.isArray(slots.masters),
    reconnect(firstKey, isReadonly) {
      // A keyless command goes to any node: there is no node of its own to wait for.
      if (stopped || firstKey === undefined || !anyUnready()) return null;
      // The lookup waits only for a connection node-redis is making for a node it just found.
      return nodeFor(firstKey, isReadonly).then((client) => (client ? reconnectNode(client) ?? undefined : undefined));
    },
    probe(firstKey, isReadonly) {
      if (stopped || firstKey === undefined) return;
      void nodeFor(firstKey, isReadonly).then(async (client) => {
        if (client === undefined) return;
        const state = stateOf(client);
        if (state.probing) return;
        state.probing = true;
        try {
          await withDeadline(client.sendCommand(['PING']), timeoutMs);
        } catch (err) {
          // A quick rejection means the connection is known lost (and reconnects); only no answer at all shows a hang.
          if (stopped || !(err instanceof StoreUnavailableError)) return;
          logger.warn(`${label} cluster node unresponsive, reconnecting`);
          if (client.isReady) client.destroy();
          await reconnectNode(client);
        } finally {
          state.probing = false;
        }
      }).catch(() => undefined);
    },
    reconnectLost() {
      if (stopped) return;
      const clients = current();
      // Each connection closes with an error that calls this, before node-redis can drop it from a new slot map.
      for (const client of clients) tolerateClosedDestroy(client);
      for (const client of clients) if (!client.isOpen) retryLater(client);
      // Connections of nodes that left the map are forgotten (node-redis destroyed them).
      for (const [client, state] of states) {
        if (clients.includes(client)) continue;
        clearTimeout(state.background);
        states.delete(client);
      }
    },
    stop() {
      stopped = true;
      for (const [client, state] of states) {
        clearTimeout(state.background);
        clearTimeout(state.handshake);
        // A connection still being made holds no call (none is queued while it is not ready): with its deadline
        // cleared, only the socket timeout (3 × timeoutMs) would end it, after the close, holding the host open.
        if (state.attempt !== null && client.isOpen) client.destroy();
      }
      states.clear();
    },
  };
}
