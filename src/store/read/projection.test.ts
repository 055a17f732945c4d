import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RowBatch, type TableSpec } from './projection.ts';
import { changeStatements, upsertChunkSizes } from './sql.ts';

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
  batch.upsert('t', { id: 1, status: 'later', created_at: null });
  batch.upsert('t', { id: 2, status: 'other', created_at: 1 });
  // The database may still hold the row, so it is deleted before the upsert lands.
  assert.deepEqual(batch.drain(), [
    { op: 'delete', table: 't', key: { id: 1 } },
    { op: 'upsert', table: 't', row: { id: 1, status: 'later', created_at: null } },
    { op: 'upsert', table: 't', row: { id: 2, status: 'other', created_at: 1 } },
  ]);
});

test("RowBatch: a failed write's changes put back ahead of later ones give the batch never drained", () => {
  const changes = (batch: RowBatch) => {
    batch.upsert('t', { id: 1, status: 'new', created_at: 5 });
    batch.upsert('t', { id: 2, status: 'new', created_at: 6 });
    batch.upsert('t', { id: 3, status: 'new', created_at: 7 });
  };
  const later = (batch: RowBatch) => {
    batch.upsert('t', { id: 1, status: 'done', created_at: null });
    batch.delete('t', { id: 2 });
    batch.upsert('t', { id: 4, status: 'new', created_at: 8 });
  };
  const never = new RowBatch(tables);
  changes(never);
  later(never);
  const restored = new RowBatch(tables);
  changes(restored);
  const failed = restored.drain();
  later(restored);
  restored.restore(failed);
  assert.deepEqual(restored.drain(), never.drain());
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

test('upsert chunks: full statements, then powers of two, covering every row once', () => {
  assert.deepEqual(upsertChunkSizes(0, 100), []);
  assert.deepEqual(upsertChunkSizes(1, 100), [1]);
  assert.deepEqual(upsertChunkSizes(373, 1000), [256, 64, 32, 16, 4, 1]);
  assert.deepEqual(upsertChunkSizes(250, 100), [100, 100, 32, 16, 2]);
  for (let rows = 0; rows < 600; rows++) {
    const sizes = upsertChunkSizes(rows, 150);
    assert.equal(
      sizes.reduce((sum, size) => sum + size, 0),
      rows,
    );
    assert.ok(sizes.every((size) => size === 150 || (size < 150 && Number.isInteger(Math.log2(size)))));
  }
});

test('SQL upsert: rows split in chunk statements keep every value in order, texts reused', () => {
  const changes = Array.from({ length: 5 }, (_, i) => ({
    op: 'upsert' as const,
    table: 't',
    row: { id: i, status: `s${i}`, created_at: i * 10 },
  }));
  const statements = changeStatements(changes, tables, 1000);
  assert.deepEqual(
    statements.map((statement) => statement.params.length / 3),
    [4, 1],
  );
  assert.deepEqual(
    statements.flatMap((statement) => statement.params),
    changes.flatMap((change) => [change.row.id, change.row.status, change.row.created_at]),
  );
  const again = changeStatements(changes.slice(0, 4), tables, 1000);
  assert.equal(again[0]!.sql, statements[0]!.sql);
  assert.equal((statements[0]!.sql.match(/\?/g) ?? []).length, 12);
});
