import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { WebSocket } from 'ws';
import { VirtualClock } from '../app/clock.ts';
import { ChannelRegistry, Fanout } from './channels.ts';
import type { Dispatcher, DispatchOutcome } from './dispatcher.ts';
import type { CommandPort } from './ports.ts';
import { WsGateway } from './ws-gateway.ts';

/** A socket that records what the session sends. */
class RecordingSocket extends EventEmitter {
  readonly bufferedAmount = 0;
  readonly sent: string[] = [];

  send(data: string | Buffer, options?: { binary?: boolean }): void {
    assert.equal(options?.binary ?? typeof data !== 'string', false, 'messages go out as text frames');
    this.sent.push(data.toString());
  }

  close(): void {
    this.emit('close');
  }

  terminate(): void {
    this.emit('close');
  }
}

function gatewayAnswering(dispatch: () => Promise<DispatchOutcome>, unexpected: unknown[]) {
  const channels = new ChannelRegistry();
  return new WsGateway(
    {
      dispatcher: { dispatch } as unknown as Dispatcher,
      channels,
      fanout: new Fanout(channels),
      commands: {} as CommandPort,
      reads: { openOrders: () => [], accountCancelOnDisconnect: () => false },
      clock: new VirtualClock(0),
      onUnexpected: (error) => unexpected.push(error),
    },
    { maxMessageBytes: 65_536 },
  );
}

test('an answer that cannot be serialised becomes an internal_error with its rid, not a crash', async () => {
  const unexpected: unknown[] = [];
  const gateway = gatewayAnswering(
    async () => ({ httpStatus: 200, answer: { rid: 7, result: { amount: 10n } } }),
    unexpected,
  );
  const socket = new RecordingSocket();
  gateway.accept(socket as unknown as WebSocket);
  socket.emit('message', Buffer.from('{"rid":7,"method":"public/test","params":{}}'), false);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(socket.sent.length, 1);
  const answer = JSON.parse(socket.sent[0]!) as { rid: number; error?: { message: string } };
  assert.equal(answer.rid, 7);
  assert.match(answer.error?.message ?? '', /internal/);
  assert.equal(unexpected.length, 1);
});

test('a dispatcher that rejects is answered with an error, not an unhandled rejection', async () => {
  const unexpected: unknown[] = [];
  const gateway = gatewayAnswering(() => Promise.reject(new Error('boom')), unexpected);
  const socket = new RecordingSocket();
  gateway.accept(socket as unknown as WebSocket);
  socket.emit('message', Buffer.from('{"rid":8,"method":"public/test","params":{}}'), false);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(socket.sent.length, 1);
  assert.ok((JSON.parse(socket.sent[0]!) as { error?: unknown }).error);
  assert.equal(unexpected.length, 1);
});
