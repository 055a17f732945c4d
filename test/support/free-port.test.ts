import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePort, withFreshPorts } from './free-port.ts';

test('a start whose port was taken meanwhile is tried again, up to three times', async () => {
  let tries = 0;
  const started = await withFreshPorts(async () => {
    if (++tries < 3) throw new Error('listen tcp 127.0.0.1:4222: bind: address already in use');
    return 'up';
  });
  assert.equal(started, 'up');
  assert.equal(tries, 3);
  tries = 0;
  await assert.rejects(
    withFreshPorts(async () => {
      tries++;
      throw new Error('could not bind IPv4 address "127.0.0.1": Address already in use');
    }),
    /Address already in use/,
  );
  assert.equal(tries, 3, 'gives up after the third');
});

test('any other failure of a start is not tried again', async () => {
  let tries = 0;
  await assert.rejects(
    withFreshPorts(async () => {
      tries++;
      throw new Error('initdb failed');
    }),
    /initdb failed/,
  );
  assert.equal(tries, 1);
});

test('a free port can be bound', async () => {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  await new Promise((resolve) => server.close(resolve));
});
