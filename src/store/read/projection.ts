/**
 * Projections: pure functions from committed events to row changes in read tables.
 *
 * A projection declares its tables (dialect-neutral column types) and, for each committed
 * command's events, emits upserts/deletes into a RowSink. The read store collects the changes of
 * many commands, keeps the last change per primary key, and writes them in one transaction
 * together with the last applied seq, on SQLite or PostgreSQL alike.
 *
 * Invariants:
 * - Projections are deterministic and do no I/O: the same events give the same rows, so a
 *   projection can always be rebuilt by replaying the journal.
 * - A row change is keyed by the table's primary key; within a batch the last change wins.
 * - Other modules (portfolios, RFQs) add tables by registering their own Projection; table names
 *   must be unique across projections.
 * - A `keepWhenNull` column keeps its stored value when an upsert brings null (a partial update:
 *   the projection only knows it on some events). RowBatch merges such upserts the same way, so a
 *   batch and the database agree.
 */

export type ColumnType = 'int' | 'text' | 'real';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  /** NOT NULL (default false). */
  readonly required?: boolean;
  /** On upsert, null keeps the stored value instead of overwriting it (default false). */
  readonly keepWhenNull?: boolean;
}

export interface TableSpec {
  readonly name: string;
  readonly columns: readonly ColumnSpec[];
  readonly primaryKey: readonly string[];
  /**
   * Secondary indexes: each a list of columns (append ` DESC` to a column name for descending), or
   * an IndexSpec for a partial one.
   */
  readonly indexes?: readonly (readonly string[] | IndexSpec)[];
  /**
   * Names of indexes earlier builds made on this table and this one no longer has (unused, or
   * replaced by a partial one): dropped at open, after the table's indexes are made.
   */
  readonly retiredIndexes?: readonly string[];
  /**
   * Schema version (default 1). Raised with a backfill when a column is added whose value rows
   * written by an older build must get (schema.ts brings such a table up to date at open).
   */
  readonly version?: number;
  readonly backfills?: readonly ColumnBackfill[];
}

/**
 * A partial index: over only the rows that meet `where` (SQL over the table's columns, written in
 * code), so rows that no query reads through it cost no entry. SQLite uses it only for a query
 * that has `where` as one of its AND-ed terms word for word, or implies an `IS NOT NULL` one
 * (`column = ?`); PostgreSQL proves more, but not less. `name` tells it from a full index on the
 * same columns (`<table>_<columns>_<name>_idx`).
 */
export interface IndexSpec {
  readonly columns: readonly string[];
  readonly where: string;
  readonly name: string;
}

/**
 * How rows written before `version` get `column`: computed from their `from` column alone (one
 * UPDATE per distinct result). Null leaves the column null. Must agree with what the projection
 * writes for new rows.
 */
export interface ColumnBackfill {
  /** The table version that added the column. */
  readonly version: number;
  readonly column: string;
  readonly from: string;
  readonly value: (from: RowValue) => RowValue;
}

export type RowValue = number | string | null;

/**
 * A JSON text column whose value is serialized only when the batch is written: a batch keeps the
 * last upsert per key, so a view replaced within the same batch (an order opened and cancelled by
 * one command) is never stringified.
 *
 * The value is held by reference until the write, up to `writeDelayMs` later: it must be an
 * immutable view (a fresh object per event, as the engine emits them), never state that is
 * mutated afterwards, or the row would record the later state.
 */
export class JsonText {
  private encoded: string | null = null;

  /** `encode` makes the text of `value` (default JSON.stringify; e.g. a packed form of a big view). */
  constructor(
    readonly value: unknown,
    private readonly encode: (value: never) => string = JSON.stringify,
  ) {}

  /** Made once: a value bound in several rows (a trade's, once per side) is encoded once. */
  text(): string {
    this.encoded ??= (this.encode as (value: unknown) => string)(this.value);
    return this.encoded;
  }

  toJSON(): unknown {
    return this.value;
  }
}

/** A column value as projections emit it; `JsonText` becomes text when written. */
export type RowInput = RowValue | JsonText;
export type Row = Readonly<Record<string, RowInput>>;

/** The value bound for a column. */
export function boundValue(value: RowInput | undefined): RowValue {
  if (value === undefined) return null;
  return value instanceof JsonText ? value.text() : value;
}

export interface RowSink {
  upsert(table: string, row: Row): void;
  delete(table: string, key: Row): void;
}

export interface CommittedEvents<E = unknown> {
  readonly seq: number;
  readonly ts: number;
  readonly events: readonly E[];
  /** Sub-machine events by sub-machine name (`rfq`, `portfolios`), as the core machine returns them. */
  readonly subEvents?: ReadonlyMap<string, readonly unknown[]>;
}

export interface Projection<E = unknown> {
  readonly name: string;
  readonly tables: readonly TableSpec[];
  project(committed: CommittedEvents<E>, out: RowSink): void;
}

export type RowChange =
  | { readonly op: 'upsert'; readonly table: string; readonly row: Row }
  | { readonly op: 'delete'; readonly table: string; readonly key: Row };

/** A batch's change to one row: an upsert may stand for a delete of that row followed by it. */
type PendingChange =
  | { readonly op: 'upsert'; readonly table: string; readonly row: Row; readonly deleteFirst?: Row }
  | { readonly op: 'delete'; readonly table: string; readonly key: Row };

/**
 * Collects row changes, last change per (table, primary key) wins, in first-seen key order. An
 * upsert after a delete of its row in the same batch drains as that delete and then the upsert,
 * so the database does not merge its keepWhenNull columns with the row the batch deleted.
 */
export class RowBatch implements RowSink {
  private changes = new Map<string, PendingChange>();

  constructor(private readonly tables: ReadonlyMap<string, TableSpec>) {}

  private keyOf(table: string, row: Row): string {
    const spec = this.tables.get(table);
    if (spec === undefined) throw new Error(`no projection declares table ${table}`);
    let key = table;
    for (const column of spec.primaryKey) {
      const value = row[column];
      if (value === undefined || value === null)
        throw new Error(`row of ${table} lacks key column ${column}`);
      key += `\u0000${value}`;
    }
    return key;
  }

  upsert(table: string, row: Row): void {
    const key = this.keyOf(table, row);
    const previous = this.changes.get(key);
    if (previous === undefined) {
      this.changes.set(key, { op: 'upsert', table, row });
    } else if (previous.op === 'delete') {
      this.changes.set(key, { op: 'upsert', table, row, deleteFirst: previous.key });
    } else {
      const merged = this.keepStored(table, previous.row, row);
      const deleteFirst = previous.deleteFirst;
      this.changes.set(
        key,
        deleteFirst === undefined
          ? { op: 'upsert', table, row: merged }
          : { op: 'upsert', table, row: merged, deleteFirst },
      );
    }
  }

  /** `row` with its null keepWhenNull columns taken from `stored`. */
  private keepStored(table: string, stored: Row, row: Row): Row {
    let merged: Record<string, RowInput> | null = null;
    for (const column of this.tables.get(table)!.columns) {
      if (column.keepWhenNull !== true) continue;
      const value = row[column.name];
      const kept = stored[column.name];
      if ((value === null || value === undefined) && kept !== null && kept !== undefined) {
        merged ??= { ...row };
        merged[column.name] = kept;
      }
    }
    return merged ?? row;
  }

  delete(table: string, key: Row): void {
    this.changes.set(this.keyOf(table, key), { op: 'delete', table, key });
  }

  get size(): number {
    return this.changes.size;
  }

  /**
   * Puts back the changes of a drained batch whose write failed (and rolled back), ahead of those
   * collected since: the batch then holds what it would had it never been drained, later changes
   * winning (and merging) as usual.
   */
  restore(earlier: readonly RowChange[]): void {
    const later = this.changes;
    this.changes = new Map();
    for (const change of earlier) this.apply(change);
    for (const change of later.values()) this.apply(change);
  }

  private apply(change: RowChange): void {
    if (change.op === 'upsert') this.upsert(change.table, change.row);
    else this.delete(change.table, change.key);
  }

  drain(): RowChange[] {
    const all: RowChange[] = [];
    for (const change of this.changes.values()) {
      if (change.op === 'upsert' && change.deleteFirst !== undefined) {
        all.push({ op: 'delete', table: change.table, key: change.deleteFirst });
        all.push({ op: 'upsert', table: change.table, row: change.row });
      } else {
        all.push(change);
      }
    }
    // A new Map rather than clear(): V8 links a cleared table, entries and all, to its successor,
    // so once one batch's table is old every later batch's rows would outlive scavenges.
    this.changes = new Map();
    return all;
  }
}
