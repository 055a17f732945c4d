/** RFQ lots as the wire's decimals: each RFQ's quantity grid is its `quantityStep`. */
import { DecimalGrid } from '../domain/decimal.ts';

const grids = new Map<string, DecimalGrid>();

/** The grid of an RFQ lot size (cached: RFQs share a handful of step sizes). */
export function rfqLotGrid(quantityStep: string): DecimalGrid {
  let grid = grids.get(quantityStep);
  if (grid === undefined) {
    grid = new DecimalGrid(quantityStep);
    grids.set(quantityStep, grid);
  }
  return grid;
}

export function formatRfqLots(rfq: { readonly quantityStep: string }, lots: number): string {
  return rfqLotGrid(rfq.quantityStep).format(lots);
}
