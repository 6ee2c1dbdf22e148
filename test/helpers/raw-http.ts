// HTTP/1.1 over a plain TCP socket, for what supertest cannot send: repeated headers, a body that stops half-way.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type express from 'express';

/** What came back before the server closed the connection (or `closeAfterResponse` cut it). */
export interface RawResponse {
  readonly status: number;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: string;
  /** The server closed the connection (FIN or reset) rather than waiting for more. */
  readonly closedByServer: boolean;
}

/** A running server for `app` on a free port, and how to stop it. */
export async function listen(app: express.Express): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function parse(raw: string, closedByServer: boolean): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = lines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
  });
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers, body: split < 0 ? '' : raw.slice(split + 4), closedByServer };
}

/**
 * Writes `head` (request line and headers, without the blank line) and `body`, then waits for one response.
 * With `keepOpen`, the socket is not ended after writing: a body shorter than its Content-Length then stays
 * unfinished, and the answer is whatever the server decides. With `later`, `later.data` is written once
 * `later.when` resolves (a body in two parts, the second sent after the server has seen the first). Resolves
 * when the server closes the connection, or once a complete response (by Content-Length) has arrived.
 */
export function rawRequest(
  port: number, head: string, body = '', options: { keepOpen?: boolean; later?: { when: Promise<unknown>; data: string } } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let done = false;
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      resolve(parse(received, closedByServer));
      socket.destroy();
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const split = received.indexOf('\r\n\r\n');
      if (split < 0) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, split))?.[1];
      // A complete response on a connection the server keeps open: done, without waiting for a close.
      if (length !== undefined && received.length - split - 4 >= Number(length) && !/\r\nconnection: *close/i.test(received.slice(0, split))) {
        finish(false);
      }
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (err) => (received ? finish(true) : reject(err)));
    socket.write(`${head}\r\n\r\n${body}`);
    const { later } = options;
    if (later) void later.when.then(() => socket.write(later.data));
    if (!options.keepOpen) socket.end();
  });
}

/** A kept-alive connection for requests written as raw bytes, and the responses read back from it. */
export interface RawConnection {
  /** Writes `data` as it is, at once (usable inside a server's handler: the bytes are on loopback when it returns). */
  send(data: string): void;
  /** Resolves once `count` whole responses (head and Content-Length body) have arrived on the connection. */
  responses(count: number): Promise<{ readonly statusLines: string[]; readonly text: string }>;
  close(): void;
}

/** Connects to `port` on 127.0.0.1; responses are counted by their Content-Length, so pipelined ones too. */
export async function openConnection(port: number): Promise<RawConnection> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => { socket.off('error', reject); resolve(); });
  });
  let received = '';
  let waiting: (() => void) | null = null;
  socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1'); waiting?.(); });
  /** How many whole responses have arrived, and their status lines. */
  const whole = (): string[] => {
    const statusLines: string[] = [];
    for (let at = 0; ;) {
      const end = received.indexOf('\r\n\r\n', at);
      if (end < 0) return statusLines;
      const head = received.slice(at, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < end + 4 + length) return statusLines;
      statusLines.push(head.split('\r\n')[0]!);
      at = end + 4 + length;
    }
  };
  return {
    send: (data) => { socket.write(data); },
    responses: (count) => new Promise((resolve) => {
      waiting = () => {
        const statusLines = whole();
        if (statusLines.length < count) return;
        waiting = null;
        resolve({ statusLines, text: received });
      };
      waiting();
    }),
    close: () => { socket.destroy(); },
  };
}
