#!/usr/bin/env node
// Finds every *.test.ts under src/, sdk/ and test/ (or the paths given) and runs them with
// node's test runner through tsx, so the closing summary is node's own.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['src', 'sdk', 'test'];
const files = [];
for (const root of roots) {
  if (statSync(root, { throwIfNoEntry: false })?.isFile()) {
    files.push(root);
    continue;
  }
  for (const entry of readdirSync(root, { recursive: true })) {
    const path = join(root, String(entry));
    if (path.endsWith('.test.ts') && !path.includes('node_modules')) files.push(path);
  }
}
files.sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// A failing bare `assert.ok(x)` can hang under tsx (node builds its message by reading the
// source): assert-messages.mjs supplies the message instead. Whatever else hangs fails at the
// timeout instead of holding CI until its time limit; the longest file takes about 7 minutes on a
// loaded 2-core machine.
const timeoutMs = process.env.TEST_TIMEOUT_MS ?? '1200000';
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--import',
    fileURLToPath(new URL('./assert-messages.mjs', import.meta.url)),
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeoutMs}`,
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
