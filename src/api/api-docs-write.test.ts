import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { API_DOCS_DIR, renderApiDocs } from './api-docs-write.ts';

test('docs/api matches the schemas (regenerate with npm run docs:api)', () => {
  const docs = renderApiDocs();
  assert.equal(readFileSync(`${API_DOCS_DIR}/openapi.json`, 'utf8'), docs.openapi);
  assert.equal(readFileSync(`${API_DOCS_DIR}/asyncapi.json`, 'utf8'), docs.asyncapi);
});

test('the OpenAPI document is 3.1: every envelope method has a request schema, every route a summary', () => {
  const openapi = JSON.parse(renderApiDocs().openapi) as {
    openapi: string;
    paths: Record<
      string,
      {
        post?: {
          summary: string;
          requestBody?: { content: Record<string, { schema: { properties: object } }> };
        };
        get?: { summary: string; parameters?: { name: string; in: string; required: boolean }[] };
      }
    >;
  };
  assert.equal(openapi.openapi, '3.1.0');
  const paths = Object.keys(openapi.paths);
  assert.ok(paths.length >= 30);
  assert.ok(paths.includes('/api/block/rfqs/create_rfq'));
  assert.ok(paths.includes('/tt/core-broker/openapi/portfolios/submit'));
  for (const [path, item] of Object.entries(openapi.paths)) {
    const operation = item.post ?? item.get;
    assert.ok(operation?.summary, path);
    if (path.startsWith('/api/')) {
      assert.ok(item.post?.requestBody?.content['application/json']?.schema.properties, path);
    }
  }
});

test('every operation has an operationId, and no two share one (client generators need them)', () => {
  const openapi = JSON.parse(renderApiDocs().openapi) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const ids = Object.entries(openapi.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([verb, operation]) => {
      assert.ok(operation.operationId, `${verb} ${path}`);
      return operation.operationId;
    }),
  );
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(ids.includes('portfolios_submit'));
  assert.ok(ids.includes('get_portfolios_info'));
});

test('every flat /tt/ route documents its input: a request body schema on POST, query parameters on GET', () => {
  type Schema = { properties?: Record<string, unknown>; anyOf?: Schema[] };
  const openapi = JSON.parse(renderApiDocs().openapi) as {
    paths: Record<
      string,
      {
        post?: { requestBody?: { content: Record<string, { schema: Schema }> } };
        get?: { parameters?: { name: string; in: string; required: boolean }[] };
      }
    >;
  };
  const flat = Object.entries(openapi.paths).filter(([path]) => path.startsWith('/tt/'));
  assert.equal(flat.length, 4);
  const propertiesOf = (schema: Schema): string[] =>
    schema.properties ? Object.keys(schema.properties) : (schema.anyOf ?? []).flatMap(propertiesOf);
  for (const [path, item] of flat) {
    if (item.post) {
      const schema = item.post.requestBody?.content['application/json']?.schema;
      assert.ok(schema, path);
      assert.ok(propertiesOf(schema).length > 0, path);
    }
    if (item.get) {
      assert.ok(
        item.get.parameters?.some((p) => p.in === 'query'),
        path,
      );
    }
  }
  const base = '/tt/core-broker/openapi/portfolios';
  const body = (name: string) =>
    openapi.paths[`${base}/${name}`]?.post?.requestBody?.content['application/json']?.schema;
  const submit = body('submit')!;
  assert.deepEqual(
    submit.anyOf?.map(
      (variant) => (variant.properties?.portfolioType as { const?: string } | undefined)?.const,
    ),
    ['BALANCE', 'TWAP', 'COMMON', 'ICEBERG'],
  );
  for (const field of [
    'accountId',
    'portfolioType',
    'strategy',
    'legs',
    'customizedNote',
    'sendToDummyAccountIds',
  ]) {
    assert.ok(propertiesOf(submit).includes(field), field);
  }
  for (const block of ['balanceTrade', 'twapTrade', 'icebergTrade'])
    assert.ok(propertiesOf(submit).includes(block), block);
  assert.deepEqual(propertiesOf(body('cancel')!), ['portfolioId', 'accountId']);
  assert.deepEqual(propertiesOf(body('cancel-all')!), ['accountId', 'portfolioType']);
  assert.equal(openapi.paths[`${base}/info`]?.get?.parameters?.length, 1);
  assert.equal(openapi.paths[`${base}/info`]?.get?.parameters?.[0]?.name, 'portfolioId');
  assert.equal(openapi.paths[`${base}/info`]?.get?.parameters?.[0]?.required, true);
});

test('the OpenAPI schemas are JSON Schema 2020-12: tuples are prefixItems, never draft-07 items arrays', () => {
  const openapi = JSON.parse(renderApiDocs().openapi) as Record<string, unknown>;
  const found: string[] = [];
  let tuples = 0;
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      node.forEach((child, index) => {
        walk(child, `${path}[${index}]`);
      });
    }
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const schema = node as Record<string, unknown>;
    if (Array.isArray(schema.items) || 'additionalItems' in schema) found.push(path);
    if (Array.isArray(schema.prefixItems)) tuples++;
    for (const [key, child] of Object.entries(schema)) walk(child, `${path}.${key}`);
  };
  walk(openapi, '');
  assert.deepEqual(found, []);
  assert.ok(tuples >= 2, 'the order book levels are tuples');
});

test('the AsyncAPI document describes each channel snapshot besides its changes, from the same schemas', () => {
  interface Message {
    name: string;
    payload: { type?: string; $id?: string; items?: unknown; properties?: Record<string, unknown> };
  }
  const asyncapi = JSON.parse(renderApiDocs().asyncapi) as {
    channels: Record<string, { subscribe: { message: Message | { oneOf: Message[] } } }>;
  };
  const messages = (pattern: string): Record<string, Message['payload']> => {
    const message = asyncapi.channels[pattern]!.subscribe.message;
    const all = 'oneOf' in message ? message.oneOf : [message];
    return Object.fromEntries(all.map((m) => [m.name, m.payload]));
  };
  const orders = messages('user.orders.{kind}.{currency}');
  assert.equal(orders.snapshot?.type, 'array');
  assert.deepEqual(orders.snapshot?.items, orders.change, 'user.orders: the snapshot is an array of orders');
  const orderChange = messages('order.change.any');
  assert.deepEqual(
    orderChange.snapshot?.properties,
    { openOrders: { type: 'array', items: orderChange.change } },
    'order.change.any: the snapshot is {openOrders: [...]} of the changed orders',
  );
  assert.ok(orderChange.change?.properties?.portfolioId && orderChange.change.properties.riskReducing);
  for (const pattern of ['book.{instrument}', 'ticker.{instrument}']) {
    const { snapshot, change } = messages(pattern);
    assert.ok(snapshot?.properties?.instrumentName, `${pattern}: a snapshot`);
    assert.deepEqual(snapshot, change, `${pattern}: the snapshot is a full change`);
  }
  for (const pattern of ['user.trades.{kind}.{currency}', 'trade-news']) {
    assert.deepEqual(Object.keys(messages(pattern)), ['change'], `${pattern}: no snapshot`);
  }
});
