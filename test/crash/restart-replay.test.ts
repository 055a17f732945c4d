/**
 * Restarts and the authenticator's nonces (SEMANTICS, Authentication), and one service per data
 * directory:
 *
 * 1. after a clean stop, a byte-identical retry of an acknowledged order returns the original
 *    answer and places nothing, and its nonce with another body is still `nonce_reused`
 *    (in process, virtual clock);
 * 2. after SIGKILL, the memory is lost: the retry is refused (`unavailable`, with when to sign
 *    again) instead of placing the order a second time, and a request signed after that time runs;
 * 3. a second service on the same DATA_DIR is refused with a clear message before it writes
 *    anything, and the running one is unharmed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { HttpClient } from '../../sdk/http-client.ts';
import type { DemoCredential } from '../../src/api/bootstrap.ts';
import { killHard, serviceEnv, startServiceChild } from '../support/service-child.ts';
import { startTestService } from '../support/service-harness.ts';

const INSTRUMENT = 'BTC-PERPETUAL';

function buyBody(label: string, quantity = '10'): string {
  return JSON.stringify({
    rid: 7,
    method: 'private/buy',
    params: { instrumentName: INSTRUMENT, quantity, price: '50000', label },
  });
}

async function labelled(client: HttpClient, label: string): Promise<number> {
  const open = await client.call('private/get_open_orders', {});
  return open.filter((order) => order.label === label).length;
}

describe('nonces across a restart', () => {
  test('after a clean stop a retry gets the original answer and runs nothing; a reused nonce is refused', async () => {
    let running = await startTestService({ config: { simulator: false } });
    try {
      const request = running.http(0).sign('POST', '/api/private/buy', buyBody('clean'));
      const first = await running.http(0).send(request);
      assert.equal(first.status, 200);
      assert.ok((first.body as { result?: unknown }).result !== undefined, first.text);

      running = await running.restart();
      const retry = await running.http(0).send(request);
      assert.equal(retry.status, first.status);
      assert.equal(retry.text, first.text, 'the original answer, byte for byte');
      assert.equal(await labelled(running.http(0), 'clean'), 1, 'placed once');

      const client = running.http(0);
      const other = client.sign(
        'POST',
        '/api/private/buy',
        buyBody('clean', '20'),
        request.headers['service-api-nonce'],
        Number(request.headers['service-api-timestamp']),
      );
      const reused = await client.send(other);
      assert.equal(reused.status, 401);
      assert.equal((reused.body as { error: { code: number } }).error.code, 13012, reused.text);
      assert.equal(await labelled(running.http(0), 'clean'), 1);
    } finally {
      await running.close();
      rmSync(running.dataDir, { recursive: true, force: true });
    }
  });

  test('after SIGKILL a retry is refused rather than run twice; a second service on the directory is refused', {
    timeout: 180_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'restart-replay-'));
    let child = await startServiceChild(dataDir);
    const credentials = JSON.parse(
      readFileSync(join(dataDir, 'credentials.json'), 'utf8'),
    ) as DemoCredential[];
    const credential = { apiKey: credentials[0]!.apiKey, apiSecret: credentials[0]!.apiSecret };
    const client = (port: number, now?: () => number) =>
      new HttpClient({
        baseUrl: `http://127.0.0.1:${port}`,
        credentials: credential,
        ...(now ? { now } : {}),
      });
    try {
      // A second service on the same directory: refused before it journals anything.
      const second = await runToExit(dataDir);
      assert.notEqual(second.code, 0);
      assert.match(second.stderr, /DATA_DIR .* is in use by another running service \(pid \d+\)/);
      assert.equal(await labelled(client(child.port), 'crash'), 0, 'the running service still answers');

      // Signed 10 s ahead (inside the window), so the retry after the restart is still in time
      // on a busy machine: the window then lasts 25 s from here.
      const ahead = () => Date.now() + 10_000;
      const request = client(child.port, ahead).sign('POST', '/api/private/buy', buyBody('crash'));
      const first = await client(child.port).send(request);
      assert.ok((first.body as { result?: unknown }).result !== undefined, first.text);

      await killHard(child.process);
      child = await startServiceChild(dataDir);
      const retry = await client(child.port).send(request);
      const error = (retry.body as { error?: { code: number; data: { retryAfterMs: number } } }).error;
      assert.equal(error?.code, 13503, `refused, not run again: ${retry.text}`);
      assert.ok(error.data.retryAfterMs > 0 && error.data.retryAfterMs <= 15_001);

      // A client whose clock reads past the refused window is served: the order exists once.
      const later = () => Date.now() + error.data.retryAfterMs + 50;
      assert.equal(await labelled(client(child.port, later), 'crash'), 1, 'placed once');
    } finally {
      await killHard(child.process);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

function runToExit(dataDir: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
    env: serviceEnv(dataDir),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // Without the lock it would serve on; stopped after 30 s so the test fails instead of hanging.
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}
