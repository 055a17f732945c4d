/**
 * `public/auth` over a raw WebSocket, signed as SEMANTICS says with the given `timestamp` (any
 * value: a test may send a malformed one), on a new connection closed after the answer.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { signWs } from '../../sdk/index.ts';
import { until } from './until.ts';

export interface WsAuthRefusal {
  readonly code: number;
  readonly message: string;
  readonly data?: { readonly field?: string };
}

/** The answer's error, or undefined once authenticated. */
export async function rawWsAuth(
  wsUrl: string,
  credential: { readonly apiKey: string; readonly apiSecret: string },
  timestamp: unknown,
): Promise<WsAuthRefusal | undefined> {
  const socket = new WebSocket(wsUrl);
  await new Promise((resolve) => socket.on('open', resolve));
  let answer: { error?: WsAuthRefusal } | null = null;
  socket.on('message', (data) => {
    answer = JSON.parse(data.toString());
  });
  const nonce = randomUUID();
  socket.send(
    JSON.stringify({
      rid: 1,
      method: 'public/auth',
      params: {
        apiKey: credential.apiKey,
        timestamp,
        nonce,
        signature: signWs(credential.apiSecret, String(timestamp), nonce),
      },
    }),
  );
  await until(() => answer !== null);
  socket.terminate();
  return (answer as unknown as { error?: WsAuthRefusal }).error;
}
