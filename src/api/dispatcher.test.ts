import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dispatcher } from './dispatcher.ts';
import type { RateLimiter } from './rate-limit.ts';

function setup() {
  const takes: Array<[string, boolean]> = [];
  const limiter = {
    take: (key: string, matching: boolean) => void takes.push([key, matching]),
  } as unknown as RateLimiter;
  const method = (access: 'public' | 'private') => ({
    name: `${access}/buy`,
    access,
    matching: true,
    roles: undefined,
    validate: () => {},
    handler: () => 'ok',
  });
  const methods = new Map<string, unknown>([
    ['private/buy', method('private')],
    ['public/buy', method('public')],
  ]);
  const registry = { get: (name: string) => methods.get(name) } as never;
  const observed: string[] = [];
  const dispatcher = new Dispatcher(
    registry,
    limiter,
    () => 0,
    () => {},
    (name) => void observed.push(name),
  );
  return { takes, dispatcher, observed };
}

test('a matching method is charged to the matching bucket (private and public)', async () => {
  const { takes, dispatcher } = setup();
  const principal = { apiKey: 'k', roles: new Set(['trade']), rateLimits: null } as never;
  const a = await dispatcher.dispatch({ rid: 1, method: 'private/buy', params: {} }, {
    principal,
    transport: 'http',
    session: null,
    anonymousKey: 'addr',
  } as never);
  assert.equal(a.httpStatus, 200);
  await dispatcher.dispatch({ rid: 2, method: 'public/buy', params: {} }, {
    principal: null,
    transport: 'http',
    session: null,
    anonymousKey: 'addr',
  } as never);
  assert.deepEqual(takes, [
    ['k', true],
    ['addr', true],
  ]);
});

test('a WebSocket session principal is used over the context principal', async () => {
  const { takes, dispatcher } = setup();
  const session = { principal: { apiKey: 'sess', roles: new Set(['trade']), rateLimits: null } };
  const a = await dispatcher.dispatch({ rid: 1, method: 'private/buy', params: {} }, {
    principal: null,
    transport: 'ws',
    session,
    anonymousKey: 'conn',
  } as never);
  assert.equal(a.httpStatus, 200);
  assert.deepEqual(takes, [['sess', true]]);
});

test('the request observer names an unregistered method "unknown", so clients cannot mint metric labels', async () => {
  const { dispatcher, observed } = setup();
  const context = { principal: null, transport: 'http', session: null, anonymousKey: 'addr' } as never;
  await dispatcher.dispatch({ rid: 1, method: 'private/made_up_by_a_client', params: {} }, context);
  await dispatcher.dispatch({ rid: 2, method: 'public/buy', params: {} }, context);
  assert.deepEqual(observed, ['unknown', 'public/buy']);
});
