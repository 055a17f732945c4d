import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../domain/errors.ts';
import { Dispatcher, spelledAsSent } from './dispatcher.ts';
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

test('a refusal names the time-in-force key the client sent, top level and in otocoConfig', () => {
  const error = (field: string) => ({ code: 11029, message: 'm', data: { field } });
  const field = (wire: ReturnType<typeof spelledAsSent>) => wire.data?.field;
  assert.equal(field(spelledAsSent(error('timeInForce'), { timeInforce: 'good_til_day' })), 'timeInforce');
  assert.equal(field(spelledAsSent(error('timeInForce'), { timeInForce: 'good_til_day' })), 'timeInForce');
  assert.equal(field(spelledAsSent(error('timeInforce'), { timeInForce: 'good_til_day' })), 'timeInForce');
  // Both sent (refused as disagreeing), or neither: as named.
  assert.equal(
    field(spelledAsSent(error('timeInForce'), { timeInforce: 'fill_or_kill', timeInForce: 'good_til_day' })),
    'timeInForce',
  );
  assert.equal(field(spelledAsSent(error('timeInForce'), {})), 'timeInForce');
  const linked = { otocoConfig: [{ side: 'buy' }, { side: 'sell', timeInforce: 'good_til_day' }] };
  assert.equal(
    field(spelledAsSent(error('otocoConfig[1].timeInForce'), linked)),
    'otocoConfig[1].timeInforce',
  );
  assert.equal(
    field(spelledAsSent(error('otocoConfig[0].timeInForce'), linked)),
    'otocoConfig[0].timeInForce',
  );
  assert.equal(
    field(spelledAsSent(error('otocoConfig[5].timeInForce'), linked)),
    'otocoConfig[5].timeInForce',
  );
  // Other fields and the rest of data are untouched.
  assert.equal(field(spelledAsSent(error('price'), { timeInforce: 'x' })), 'price');
  const wire = spelledAsSent(
    { code: 1, message: 'm', data: { field: 'timeInForce', limit: 3 } },
    { timeInforce: 'x' },
  );
  assert.deepEqual(wire.data, { field: 'timeInforce', limit: 3 });
});

test('dispatch answers a refusal with the time-in-force spelling of the request', async () => {
  const limiter = { take: () => {} } as unknown as RateLimiter;
  const refusing = {
    name: 'public/buy',
    access: 'public',
    validate: () => {},
    handler: () => Promise.reject(new VenueError('invalid_arguments', 'no', { field: 'timeInForce' })),
  };
  const registry = { get: (name: string) => (name === 'public/buy' ? refusing : undefined) } as never;
  const dispatcher = new Dispatcher(
    registry,
    limiter,
    () => 0,
    () => {},
  );
  const context = { principal: null, transport: 'http', session: null, anonymousKey: 'a' } as never;
  const sent = await dispatcher.dispatch(
    { rid: 1, method: 'public/buy', params: { timeInforce: 'good_til_day' } },
    context,
  );
  assert.ok('error' in sent.answer);
  assert.equal(sent.answer.error.data?.field, 'timeInforce');
});
