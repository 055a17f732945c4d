// Preloaded into every test process by run-tests.mjs. A failing `assert.ok(value)` with no message
// makes node build one by reading and parsing the test's source; under tsx's loader hooks that can
// take minutes or hang the file (nodejs/node#52962). Here a missing message is supplied instead:
// the failure names the falsy value, and its stack the line.
import assert from 'node:assert';
import { inspect } from 'node:util';

const original = assert.ok;

function ok(...args) {
  const [value, message] = args;
  if (message !== undefined || args.length === 0) return original(...args);
  if (value) return;
  throw new assert.AssertionError({
    message: `expected a truthy value, got ${inspect(value)}`,
    actual: value,
    expected: true,
    operator: '==',
    stackStartFn: ok,
  });
}

assert.ok = ok;
assert.strict.ok = ok;
