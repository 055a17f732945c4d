/**
 * Every benchmark that drives the service through its commands or its API still runs, at a
 * token size: they are not part of the suite otherwise, and a rule change once left three of
 * them measuring refusals (or crashing) unnoticed. Each must exit 0 and print its figure line;
 * the benches themselves fail on any refused command. No figure is checked here.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

const SMALL: ReadonlyArray<{ script: string; env: Record<string, string>; prints: RegExp }> = [
  { script: 'bench:rfq', env: { RFQS: '20' }, prints: /20 traded/ },
  { script: 'bench:advanced', env: {}, prints: /advanced present: true/ },
  { script: 'bench:read-store', env: { COMMANDS: '2000', RUNS: '1' }, prints: /trades .* rows and .* bytes/ },
  { script: 'bench:algos', env: { TWAPS: '10', BALANCES: '3', SECONDS: '4' }, prints: /algorithm layer CPU/ },
  {
    script: 'bench:pipeline',
    env: { BENCH_ORDERS: '500', BENCH_WINDOWS: '1,16', BENCH_WARM_UP_ORDERS: '200' },
    prints: /window {3}16 .* errors 0/,
  },
  {
    script: 'bench:replay',
    env: { BENCH_REQUESTS: '2000' },
    prints: /signed public \(fingerprint\): 2000 remembered/,
  },
  {
    script: 'bench:api',
    env: {
      BENCH_SECONDS: '0.5',
      BENCH_RATES: '0',
      BENCH_HTTP_CONNECTIONS: '2',
      BENCH_WS_SESSIONS: '1',
      BENCH_WS_WINDOW: '8',
      BENCH_MARKET_TICK_MS: '3600000',
    },
    prints: /WebSocket \(1 sessions × 8\) .* errors 0/,
  },
];

/** Runs `npm run <script>` in its own process group (killed whole at the end: bench:api starts a server). */
function runScript(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', script], {
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is already gone
      }
    });
    // 'close' comes once the group is gone and the last output chunk is read.
    child.once('close', (code) => resolve({ code, output }));
  });
}

for (const { script, env, prints } of SMALL) {
  test(`${script} runs at a token size`, { timeout: 180_000 }, async () => {
    const { code, output } = await runScript(script, env);
    assert.equal(code, 0, `${script} exited ${code}:\n${output}`);
    assert.match(output, prints, output);
  });
}
