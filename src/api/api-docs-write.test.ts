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
        get?: { summary: string };
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
