import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RowBatch, type TableSpec } from './projection.ts';
import { changeStatements } from './sql.ts';

const TABLE: TableSpec = {
  name: 't',
  columns: [
    { name: 'id', type: 'int', required: true },
    { name: 'status', type: 'text', required: true },
    { name: 'created_at', type: 'int', keepWhenNull: true },
  ],
  primaryKey: ['id'],
};
const tables = new Map([[TABLE.name, TABLE]]);

test('RowBatch: a later upsert keeps earlier keepWhenNull values it lacks, other columns are replaced', () => {
  const batch = new RowBatch(tables);
  batch.upsert('t', { id: 1, status: 'new', created_at: 5 });
  batch.upsert('t', { id: 1, status: 'done', created_at: null });
  batch.upsert('t', { id: 2, status: 'new', created_at: null });
  batch.upsert('t', { id: 2, status: 'x', created_at: 9 });
  assert.deepEqual(batch.drain(), [
    { op: 'upsert', table: 't', row: { id: 1, status: 'done', created_at: 5 } },
    { op: 'upsert', table: 't', row: { id: 2, status: 'x', created_at: 9 } },
  ]);
});

test('RowBatch: an upsert after a delete does not resurrect old values', () => {
  const batch = new RowBatch(tables);
  batch.upsert('t', { id: 1, status: 'new', created_at: 5 });
  batch.delete('t', { id: 1 });
  batch.upsert('t', { id: 1, status: 'again', created_at: null });
  assert.deepEqual(batch.drain(), [
    { op: 'upsert', table: 't', row: { id: 1, status: 'again', created_at: null } },
  ]);
});

test('SQL upsert: keepWhenNull columns coalesce with the stored value', () => {
  const [statement] = changeStatements(
    [{ op: 'upsert', table: 't', row: { id: 1, status: 'a', created_at: null } }],
    tables,
    1000,
  );
  assert.match(statement!.sql, /status = excluded\.status/);
  assert.match(statement!.sql, /created_at = COALESCE\(excluded\.created_at, t\.created_at\)/);
});
