/**
 * A TCP proxy in front of a server, for tests that lose a connection at a chosen moment: the
 * next chunk in one direction that contains a given text is not forwarded, and both sides of its
 * connection are destroyed (the client sees its connection lost; the server, its client gone).
 * Cut on the server's answer, the request was served and its answer lost; cut on the client's
 * request, it never reached the server. With `serverStays` only the client's side is destroyed:
 * the server's session lives on, as after a network cut the server has not noticed yet.
 * `refuse` closes new connections at once (a server away).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CuttingProxy {
  readonly port: number;
  /** `url` (a postgres:// connection string) through the proxy. */
  via(url: string): string;
  /** New connections are closed at once while true. */
  refuse: boolean;
  /** Resolves once a chunk from the server containing `text` was dropped and its connection cut. */
  cutAnswer(text: string, options?: { serverStays?: boolean }): Promise<void>;
  /** Resolves once a chunk from the client containing `text` was dropped and its connection cut. */
  cutRequest(text: string): Promise<void>;
  close(): Promise<void>;
}

interface Cut {
  readonly text: string;
  readonly serverStays: boolean;
  readonly done: () => void;
}

export async function startCuttingProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<CuttingProxy> {
  const cuts: { answer: Cut | null; request: Cut | null } = { answer: null, request: null };
  const sockets = new Set<Socket>();
  const pipe = (from: Socket, to: Socket, direction: 'answer' | 'request', link: { severed: boolean }) => {
    from.on('data', (chunk: Buffer) => {
      if (link.severed) return;
      const cut = cuts[direction];
      if (cut !== null && chunk.includes(cut.text)) {
        cuts[direction] = null;
        const [server, client] = direction === 'answer' ? [from, to] : [to, from];
        if (cut.serverStays) link.severed = true;
        else server.destroy();
        client.destroy();
        cut.done();
        return;
      }
      to.write(chunk);
    });
    const end = () => {
      if (!link.severed) to.destroy();
    };
    from.on('close', end);
    from.on('error', end);
  };
  const proxy: { refuse: boolean } = { refuse: false };
  const server: Server = createServer((client) => {
    if (proxy.refuse) {
      client.destroy();
      return;
    }
    const upstream = connect({ port: targetPort, host: targetHost });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    const link = { severed: false };
    pipe(client, upstream, 'request', link);
    pipe(upstream, client, 'answer', link);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const arm = (direction: 'answer' | 'request', text: string, serverStays = false) =>
    new Promise<void>((resolve) => {
      cuts[direction] = { text, serverStays, done: resolve };
    });
  return {
    port,
    via(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      parsed.searchParams.delete('host');
      return parsed.toString();
    },
    get refuse() {
      return proxy.refuse;
    },
    set refuse(value: boolean) {
      proxy.refuse = value;
    },
    cutAnswer: (text, options) => arm('answer', text, options?.serverStays === true),
    cutRequest: (text) => arm('request', text),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
