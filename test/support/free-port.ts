/**
 * Free loopback ports for servers the tests start (PostgreSQL, nats-server). A port is picked
 * free and bound a moment later by the server, so another process can take it in between: a
 * start that finds its port taken is tried again on new ports (`withFreshPorts`).
 */
import { createServer } from 'node:net';

/** A loopback port nothing listens on at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs `start` again, up to 3 times, while it fails because a port it was given was taken between
 * `freePort()` and the server binding it.
 */
export async function withFreshPorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt === 3 || !/address already in use/i.test(String(error))) throw error;
    }
  }
}
