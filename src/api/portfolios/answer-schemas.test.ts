import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Static, TSchema } from '@sinclair/typebox';
import { compileValidator } from '../validation.ts';
import {
  CancelAllPortfoliosValue,
  PortfolioInfoValue,
  SubmitPortfolioValue,
  type TradeNewsMessage,
} from './answer-schemas.ts';
import type { PortfolioInfoWire, tradeNewsToWire } from './wire.ts';

// The wire type fits the documented schema field by field (a renamed or retyped field fails to
// compile); test/algo/chaos.property.test.ts checks real answers against it, closed objects and
// all, so a field the schema leaves out fails there.
// Arrays the core hands out are readonly; the schema's are not: compare both read-only.
type Frozen<T> = T extends readonly (infer E)[]
  ? readonly Frozen<E>[]
  : T extends object
    ? { readonly [K in keyof T]: Frozen<T[K]> }
    : T;
type Fits<A, B> = Frozen<A> extends Frozen<B> ? true : false;
const infoFits: Fits<PortfolioInfoWire, Static<typeof PortfolioInfoValue>> = true;
const newsFits: Fits<ReturnType<typeof tradeNewsToWire>, Static<typeof TradeNewsMessage>> = true;

/** True when `value` passes the schema's compiled validator (the service's Ajv). */
function accepts(schema: TSchema, value: unknown): boolean {
  try {
    compileValidator(schema, 'value')(value);
    return true;
  } catch {
    return false;
  }
}

test('portfolio answers: the documented shapes take what the routes answer and nothing else', () => {
  assert.equal(infoFits, true);
  assert.equal(newsFits, true);
  assert.ok(accepts(SubmitPortfolioValue, { portfolioId: 7 }));
  assert.ok(!accepts(SubmitPortfolioValue, { portfolioId: 7, extra: 1 }));
  assert.ok(accepts(CancelAllPortfoliosValue, { portfolioIds: [] }));
  assert.ok(!accepts(PortfolioInfoValue, {}), 'info has required fields');
});
