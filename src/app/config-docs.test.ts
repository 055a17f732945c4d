/**
 * docs/configuration.md lists every setting as the code has it: each environment variable with
 * its config file key and default, and each config file key (those without a variable too).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEFAULT_CONFIG, ENV_BINDINGS } from './config.ts';

const DOC = new URL('../../docs/configuration.md', import.meta.url);

interface Row {
  readonly variable: string;
  readonly key: string;
  readonly shown: string;
}

function rows(): Row[] {
  const found: Row[] = [];
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length < 5 || !cells[2]!.startsWith('`')) continue;
    found.push({
      variable: cells[1]!.replaceAll('`', ''),
      key: cells[2]!.replaceAll('`', ''),
      shown: cells[3]!,
    });
  }
  return found;
}

/** Every leaf of the config, by its dotted key. */
function leaves(value: object, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [name, inner] of Object.entries(value)) {
    const key = `${prefix}${name}`;
    if (inner !== null && typeof inner === 'object') {
      for (const [k, v] of leaves(inner, `${key}.`)) out.set(k, v);
    } else out.set(key, inner);
  }
  return out;
}

/** How the table writes a default; an unset value by what it means for its setting. */
function shown(key: string, value: unknown): string {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'number') return value.toLocaleString('en-US');
  if (value === null) {
    if (key.endsWith('RetentionDays')) return 'off';
    if (key.endsWith('PerKey')) return 'auto';
    return 'unset';
  }
  return String(value);
}

test('docs/configuration.md lists every environment variable with its key and default', () => {
  const byVariable = new Map(rows().map((row) => [row.variable, row]));
  const defaults = leaves(DEFAULT_CONFIG);
  for (const [variable, path] of ENV_BINDINGS) {
    const row = byVariable.get(variable);
    assert.ok(row, `${variable} is not in docs/configuration.md`);
    const key = path.join('.');
    assert.equal(row.key, key, variable);
    assert.equal(row.shown, shown(key, defaults.get(key)), `${variable}'s default`);
  }
  const bound = new Set(ENV_BINDINGS.map(([variable]) => variable));
  for (const row of rows()) {
    if (row.variable !== '—')
      assert.ok(bound.has(row.variable), `${row.variable} is documented but not read`);
  }
});

test('docs/configuration.md lists every config file key with its default', () => {
  const byKey = new Map(rows().map((row) => [row.key, row]));
  for (const [key, value] of leaves(DEFAULT_CONFIG)) {
    const row = byKey.get(key);
    assert.ok(row, `${key} is not in docs/configuration.md`);
    assert.equal(row.shown, shown(key, value), `${key}'s default`);
  }
});
