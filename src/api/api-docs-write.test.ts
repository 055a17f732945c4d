import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { API_DOCS_DIR, renderApiDocs } from './api-docs-write.ts';

test('docs/api matches the schemas (regenerate with npm run docs:api)', () => {
  const docs = renderApiDocs();
  assert.equal(readFileSync(`${API_DOCS_DIR}/openapi.json`, 'utf8'), docs.openapi);
  assert.equal(readFileSync(`${API_DOCS_DIR}/asyncapi.json`, 'utf8'), docs.asyncapi);
});

test('the OpenAPI document is 3.1 and every path has a request schema with params', () => {
  const openapi = JSON.parse(renderApiDocs().openapi) as {
    openapi: string;
    paths: Record<
      string,
      { post: { requestBody: { content: Record<string, { schema: { properties: object } }> } } }
    >;
  };
  assert.equal(openapi.openapi, '3.1.0');
  assert.ok(Object.keys(openapi.paths).length >= 20);
  for (const [path, item] of Object.entries(openapi.paths)) {
    assert.ok(item.post.requestBody.content['application/json']?.schema.properties, path);
  }
});
