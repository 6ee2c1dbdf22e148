// One request to a test server on a connection of its own, with any method and body: node:http sends a GET's body, fetch refuses to.
import { request } from 'node:http';

/** What came back: status, headers (lower-case names), body as text. */
export interface HostAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

/** Sends `method path` to `origin` (`http://127.0.0.1:PORT`), with `body` framed by Content-Length when given. */
export function hostRequest(
  origin: string, method: string, path: string, body?: string,
  { type = 'application/json', headers = {} }: { readonly type?: string; readonly headers?: Readonly<Record<string, string>> } = {},
): Promise<HostAnswer> {
  const { hostname, port } = new URL(origin);
  const framing = body === undefined ? {} : { 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, agent: false, method, path, headers: { ...framing, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
