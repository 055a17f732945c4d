/**
 * Renders `docs/errors.md` from the error catalogue (`src/domain/errors.ts`), so the docs and the
 * code cannot drift: `errors-doc.test.ts` fails when the committed file differs from the render.
 * Regenerate with `npm run docs:errors`.
 */
import { writeFileSync } from 'node:fs';
import { ERROR_CATALOGUE, type ErrorName } from '../domain/errors.ts';

export const ERRORS_DOC_PATH = 'docs/errors.md';

export function renderErrorsMarkdown(): string {
  const rows = (Object.keys(ERROR_CATALOGUE) as ErrorName[])
    .map((name) => ({ name, ...ERROR_CATALOGUE[name] }))
    .sort((a, b) => a.code - b.code);
  const lines = [
    '# Error catalogue',
    '',
    '<!-- Generated from src/domain/errors.ts by `npm run docs:errors`; do not edit by hand. -->',
    '',
    'Envelope failures are `{rid, error: {code, message, data}}`; `data.field` names the input at',
    'fault when there is one. Portfolio answers carry the same `code` with `succ: false`.',
    'HTTP status: 200 for a well-formed envelope the service refuses (a missing role or permission',
    'included), 400 for a body that is not an envelope, 401 for failed authentication, 404 for a',
    'path or HTTP method no route serves (`method_not_found`, `data.field` `path`), 413 for an',
    'oversized body, 429 for rate limiting (`data.field` `method`, with `bucket` and `retryAfterMs`;',
    "the replay memory's names the nonce, too many connections `connection`), 431 for headers over",
    'the size limit (`data.field` `headers`), 408 for a request that did not arrive in time and 400',
    'for one that is not valid HTTP (`data.field` `request`). Nothing the client sends returns 5xx:',
    'only a request that arrives while the service shuts down gets 503 (`unavailable`, not run,',
    'safe to send again).',
    '',
    '| Code | Name | HTTP | Message |',
    '|---:|---|---:|---|',
    ...rows.map((row) => `| ${row.code} | \`${row.name}\` | ${row.httpStatus} | ${row.message} |`),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('errors-doc.ts') && process.argv.includes('--write')) {
  writeFileSync(ERRORS_DOC_PATH, renderErrorsMarkdown());
  console.log(`wrote ${ERRORS_DOC_PATH}`);
}
