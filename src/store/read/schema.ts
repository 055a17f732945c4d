/**
 * The read tables across builds: creates them, and brings a table an older build wrote up to its
 * spec, so an existing DATA_DIR (or PostgreSQL database) keeps answering correctly after an
 * upgrade, on SQLite and PostgreSQL alike.
 *
 * Invariants:
 * - Each table's schema version (`TableSpec.version`, default 1) is recorded in `read_meta` as
 *   `schema:<table>`. A table with no record was written by a build before versions: version 1.
 * - At open, a column the spec has and the table lacks is added (nullable), then each backfill
 *   newer than the recorded version fills it in for the rows already there, then the spec's
 *   version is recorded, and last the indexes are made and those the spec retired dropped. Every
 *   step repeats harmlessly, so a start cut off in between is finished by the next one.
 * - `lastAppliedSeq` is not touched: the rows stay where they were, now complete; rows projected
 *   from then on carry the new column from the projection itself.
 *
 * Why a backfill and not a rebuild from the journal: recovery re-feeds the store only from a
 * snapshot no newer than its last applied seq, so a rebuild would mean replaying the whole
 * journal from seq 1 (and would bring back history the retention settings pruned), where a
 * column computed from another column costs one UPDATE per distinct value.
 */
import type { ColumnBackfill, RowValue, TableSpec } from './projection.ts';
import type { ReadDb } from './read-db.ts';
import {
  addColumnSql,
  createIndexSql,
  createTableSql,
  dropRetiredIndexSql,
  ident,
  tableColumnsSql,
} from './sql.ts';

const GET_META = 'SELECT value FROM read_meta WHERE key = ?';
const SET_META =
  'INSERT INTO read_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value';

function versionKey(table: string): string {
  return `schema:${table}`;
}

/** The version a table's rows are complete for: recorded, or 1 for an unversioned old table. */
export async function tableVersion(db: ReadDb, table: string): Promise<number> {
  const rows = await db.query<{ value: number }>(GET_META, [versionKey(table)]);
  return rows[0]?.value ?? 1;
}

/** Creates the tables, or brings those an older build made up to their specs; then indexes them. */
export async function prepareTables(db: ReadDb, tables: readonly TableSpec[]): Promise<void> {
  const ddl: string[] = [];
  const existing: TableSpec[] = [];
  for (const spec of tables) {
    const columns = await db.query<{ name: string }>(tableColumnsSql(db.dialect), [spec.name]);
    if (columns.length === 0) {
      ddl.push(createTableSql(spec, db.dialect));
      continue;
    }
    existing.push(spec);
    const present = new Set(columns.map((c) => c.name));
    for (const column of spec.columns) {
      if (!present.has(column.name)) ddl.push(addColumnSql(spec.name, column, db.dialect));
    }
  }
  await db.init(ddl);
  for (const spec of tables) {
    const version = spec.version ?? 1;
    const recorded = existing.includes(spec) ? await tableVersion(db, spec.name) : null;
    if (recorded === version) continue;
    for (const backfill of spec.backfills ?? []) {
      if (recorded !== null && backfill.version > recorded) await runBackfill(db, spec.name, backfill);
    }
    await db.execute(SET_META, [versionKey(spec.name), version]);
  }
  // New indexes first, so a query never finds neither the old one nor its replacement.
  await db.init([...tables.flatMap(createIndexSql), ...tables.flatMap(dropRetiredIndexSql)]);
}

async function runBackfill(db: ReadDb, table: string, backfill: ColumnBackfill): Promise<void> {
  const sources = await db.query<{ source: RowValue }>(
    `SELECT DISTINCT ${ident(backfill.from)} AS source FROM ${ident(table)} WHERE ${ident(backfill.from)} IS NOT NULL`,
    [],
  );
  const byValue = new Map<RowValue, RowValue[]>();
  for (const { source } of sources) {
    const value = backfill.value(source);
    if (value === null) continue;
    let group = byValue.get(value);
    if (group === undefined) {
      group = [];
      byValue.set(value, group);
    }
    group.push(source);
  }
  const perStatement = Math.max(1, Math.min(1_000, db.maxParams - 1));
  for (const [value, group] of byValue) {
    for (let i = 0; i < group.length; i += perStatement) {
      const chunk = group.slice(i, i + perStatement);
      await db.execute(
        `UPDATE ${ident(table)} SET ${ident(backfill.column)} = ? WHERE ${ident(backfill.from)} IN (${chunk
          .map(() => '?')
          .join(', ')})`,
        [value, ...chunk],
      );
    }
  }
}
