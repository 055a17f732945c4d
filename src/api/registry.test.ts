import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { type MethodDefinition, MethodRegistry } from './registry.ts';

const method = (name: string, summary = 'a test method'): MethodDefinition => ({
  name,
  summary,
  access: 'public',
  params: Type.Object({}),
  result: Type.Boolean(),
  handler: () => true,
});

test('a method name is registered once: a second definition is refused, the first kept', () => {
  const registry = new MethodRegistry();
  registry.register(method('public/test', 'the first'));
  assert.throws(
    () => registry.register(method('public/test', 'the second')),
    /public\/test is already registered/,
  );
  assert.equal(registry.get('public/test')?.summary, 'the first');
  assert.deepEqual(
    registry.list().map((m) => m.name),
    ['public/test'],
  );
});

test('method names follow <scope>/<name>', () => {
  const registry = new MethodRegistry();
  for (const name of ['test', 'admin/test', 'public/Test', 'block/rfqs/get_rfqs/x'])
    assert.throws(() => registry.register(method(name)), /does not follow/, name);
  registry.register(method('block/rfqs/get_rfqs'));
  assert.ok(registry.get('block/rfqs/get_rfqs') !== undefined, 'a block method is a valid name');
});
