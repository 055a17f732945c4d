/**
 * The small SQL surface shared by the SQLite and PostgreSQL read databases: DDL from TableSpec,
 * multi-row upserts, and `?` placeholders (rewritten to `$n` for PostgreSQL).
 *
 * Invariants:
 * - Identifiers come from TableSpecs written in code, never from requests; they are still
 *   checked against a strict pattern.
 * - Values are always bound parameters.
 */
import {
  boundValue,
  type ColumnSpec,
  type ColumnType,
  type IndexSpec,
  type Row,
  type RowChange,
  type RowValue,
  type TableSpec,
} from './projection.ts';

export type Dialect = 'sqlite' | 'postgres';

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export function ident(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`bad SQL identifier ${name}`);
  return name;
}

function columnType(type: ColumnType, dialect: Dialect): string {
  switch (type) {
    case 'int':
      return dialect === 'postgres' ? 'BIGINT' : 'INTEGER';
    case 'text':
      return 'TEXT';
    case 'real':
      return dialect === 'postgres' ? 'DOUBLE PRECISION' : 'REAL';
    default: {
      const _exhaustive: never = type;
      return _exhaustive;
    }
  }
}

export function createTableSql(spec: TableSpec, dialect: Dialect): string {
  const columns = spec.columns.map(
    (c) => `${ident(c.name)} ${columnType(c.type, dialect)}${c.required === true ? ' NOT NULL' : ''}`,
  );
  return `CREATE TABLE IF NOT EXISTS ${ident(spec.name)} (${columns.join(', ')}, PRIMARY KEY (${spec.primaryKey
    .map(ident)
    .join(', ')}))`;
}

/**
 * Adds a column an older build's table lacks. Always nullable: the rows already there have no
 * value until a backfill gives them one (`required` holds for tables created with the column).
 */
export function addColumnSql(table: string, column: ColumnSpec, dialect: Dialect): string {
  return `ALTER TABLE ${ident(table)} ADD COLUMN ${ident(column.name)} ${columnType(column.type, dialect)}`;
}

/** The names of a table's columns (no rows when it does not exist); one `?`, the table name. */
export function tableColumnsSql(dialect: Dialect): string {
  return dialect === 'sqlite'
    ? 'SELECT name FROM pragma_table_info(?)'
    : 'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?';
}

/**
 * The table's indexes, named after their columns (`orders_account_id_currency_updated_seq_idx`);
 * a partial index's name adds its own (`…_present_idx`), so a full index an older build made under
 * the plain name is never taken for it. PostgreSQL cuts names at 63 bytes: keep them shorter.
 */
export function createIndexSql(spec: TableSpec): string[] {
  const statements: string[] = [];
  for (const index of spec.indexes ?? []) {
    const partial: IndexSpec | null = 'where' in index ? index : null;
    const columns = partial?.columns ?? (index as readonly string[]);
    const parts = columns.map((c) => {
      const [name = '', order] = c.split(' ');
      return order === 'DESC' ? `${ident(name)} DESC` : ident(name);
    });
    const named = columns.map((c) => c.split(' ')[0]).join('_');
    const indexName = `${spec.name}_${named}${partial === null ? '' : `_${partial.name}`}_idx`;
    const where = partial === null ? '' : ` WHERE ${partial.where}`;
    statements.push(
      `CREATE INDEX IF NOT EXISTS ${ident(indexName)} ON ${ident(spec.name)} (${parts.join(', ')})${where}`,
    );
  }
  return statements;
}

/** Drops the indexes an older build made that the spec retired. */
export function dropRetiredIndexSql(spec: TableSpec): string[] {
  return (spec.retiredIndexes ?? []).map((name) => `DROP INDEX IF EXISTS ${ident(name)}`);
}

/** Rewrites `?` placeholders to `$1, $2, ...` (no `?` may appear inside literals). */
export function toPostgresPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export interface Statement {
  readonly sql: string;
  readonly params: RowValue[];
}

/**
 * Row counts of one multi-row upsert: as many full statements as fit `perStatement`, then the
 * powers of two that add up to the rest (373 → 256, 64, 32, 16, 4, 1). Only about log2(max)
 * distinct statement texts exist per table, so they are built once and stay prepared in the
 * database, where one text per batch size had to be parsed afresh for every batch.
 */
export function upsertChunkSizes(rows: number, perStatement: number): number[] {
  const sizes: number[] = [];
  let left = rows;
  while (left >= perStatement) {
    sizes.push(perStatement);
    left -= perStatement;
  }
  for (let size = 2 ** Math.floor(Math.log2(Math.max(1, left))); left > 0; size /= 2) {
    if (size <= left) {
      sizes.push(size);
      left -= size;
    }
  }
  return sizes;
}

/** Statement texts by table spec, built once: `delete`, or `upsert:<rows>`. */
const statementTexts = new WeakMap<TableSpec, Map<string, string>>();

function cachedSql(spec: TableSpec, key: string, build: () => string): string {
  let texts = statementTexts.get(spec);
  if (texts === undefined) {
    texts = new Map();
    statementTexts.set(spec, texts);
  }
  let sql = texts.get(key);
  if (sql === undefined) {
    sql = build();
    texts.set(key, sql);
  }
  return sql;
}

function upsertSql(spec: TableSpec, rows: number): string {
  return cachedSql(spec, `upsert:${rows}`, () => {
    const placeholders = `(${spec.columns.map(() => '?').join(', ')})`;
    const updates = spec.columns
      .filter((c) => !spec.primaryKey.includes(c.name))
      .map((c) =>
        c.keepWhenNull === true
          ? `${ident(c.name)} = COALESCE(excluded.${ident(c.name)}, ${ident(spec.name)}.${ident(c.name)})`
          : `${ident(c.name)} = excluded.${ident(c.name)}`,
      )
      .join(', ');
    return (
      `INSERT INTO ${ident(spec.name)} (${spec.columns.map((c) => ident(c.name)).join(', ')}) VALUES ${Array(rows).fill(placeholders).join(', ')} ` +
      `ON CONFLICT (${spec.primaryKey.map(ident).join(', ')}) DO ${updates === '' ? 'NOTHING' : `UPDATE SET ${updates}`}`
    );
  });
}

function deleteSql(spec: TableSpec): string {
  return cachedSql(
    spec,
    'delete',
    () =>
      `DELETE FROM ${ident(spec.name)} WHERE ${spec.primaryKey.map((c) => `${ident(c)} = ?`).join(' AND ')}`,
  );
}

/** Groups changes into multi-row upserts and single deletes, preserving per-key order. */
export function changeStatements(
  changes: readonly RowChange[],
  tables: ReadonlyMap<string, TableSpec>,
  maxParams: number,
): Statement[] {
  const statements: Statement[] = [];
  // Deletes run before every upsert: RowBatch drains a row deleted and upserted again in one batch
  // as a delete and then that upsert, and otherwise keys are distinct, so no other order matters.
  const upserts = new Map<string, Row[]>();
  for (const change of changes) {
    if (change.op === 'delete') {
      const spec = tables.get(change.table)!;
      statements.push({
        sql: deleteSql(spec),
        params: spec.primaryKey.map((c) => boundValue(change.key[c])),
      });
    } else {
      let rows = upserts.get(change.table);
      if (rows === undefined) {
        rows = [];
        upserts.set(change.table, rows);
      }
      rows.push(change.row);
    }
  }
  for (const [table, rows] of upserts) {
    const spec = tables.get(table)!;
    const columns = spec.columns.map((c) => c.name);
    const perStatement = Math.max(1, Math.floor(maxParams / columns.length));
    let next = 0;
    for (const size of upsertChunkSizes(rows.length, perStatement)) {
      const params: RowValue[] = new Array(size * columns.length);
      let p = 0;
      for (const end = next + size; next < end; next++) {
        const row = rows[next]!;
        for (const c of columns) params[p++] = boundValue(row[c]);
      }
      statements.push({ sql: upsertSql(spec, size), params });
    }
  }
  return statements;
}
