import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CATALOGUE } from '../domain/errors.ts';
import { ERRORS_DOC_PATH, renderErrorsMarkdown } from './errors-doc.ts';

test('docs/errors.md matches the catalogue (regenerate with npm run docs:errors)', () => {
  assert.equal(readFileSync(ERRORS_DOC_PATH, 'utf8'), renderErrorsMarkdown());
});

test('catalogue codes are unique', () => {
  const codes = Object.values(ERROR_CATALOGUE).map((entry) => entry.code);
  assert.equal(new Set(codes).size, codes.length);
});

test('no catalogue entry travels with a 5xx status', () => {
  for (const [name, entry] of Object.entries(ERROR_CATALOGUE)) assert.ok(entry.httpStatus < 500, name);
});
