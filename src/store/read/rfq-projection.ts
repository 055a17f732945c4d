/**
 * Projection of the Block RFQ desk's events (sub-machine `rfq`) into the `rfqs`, `rfq_quotes`
 * and `rfq_trades` read tables.
 *
 * Invariants:
 * - `rfqs`: one row per taker-side RFQ (the taker's `blockRfqId`), its latest record; every
 *   `rfq_changed` event carries the whole record, so the last one wins.
 * - `rfq_quotes`: one row per quote, its latest record (from `rfq_quote_changed` and from the
 *   quotes listed on `rfq_changed`; both carry whole records).
 * - `rfq_trades`: one row per traded RFQ (an accept closes the RFQ, so it trades once), keyed by
 *   the taker's `blockRfqId`, with its timestamp and RFQ number so the 7-day `get_trades` window
 *   and its `<timestamp>:<blockRfqId>` continuation are one indexed range scan.
 * - Records are stored whole as JSON next to the indexed columns; only `subEvents` is read.
 */
import type { QuoteRecord, RfqEvent, RfqRecord, RfqTradeRecord } from '../../rfq/types.ts';
import {
  type CommittedEvents,
  JsonText,
  type Projection,
  type RowSink,
  type TableSpec,
} from './projection.ts';

/** The core machine's name for the RFQ desk sub-machine (src/app/core-factory.ts). */
export const RFQ_SUBMACHINE = 'rfq';

export const RFQS_TABLE: TableSpec = {
  name: 'rfqs',
  columns: [
    { name: 'block_rfq_id', type: 'text', required: true },
    { name: 'number', type: 'int', required: true },
    { name: 'taker_account_id', type: 'int', required: true },
    { name: 'currency', type: 'text', required: true },
    { name: 'status', type: 'text', required: true },
    { name: 'label', type: 'text', required: true },
    { name: 'quantity', type: 'int', required: true },
    { name: 'filled_quantity', type: 'int', required: true },
    { name: 'created_at', type: 'int', required: true },
    { name: 'expires_at', type: 'int', required: true },
    { name: 'last_updated_at', type: 'int', required: true },
    { name: 'updated_seq', type: 'int', required: true },
    { name: 'legs', type: 'text', required: true },
    { name: 'view', type: 'text', required: true },
  ],
  primaryKey: ['block_rfq_id'],
  indexes: [['taker_account_id', 'number DESC'], ['last_updated_at']],
};

export const RFQ_QUOTES_TABLE: TableSpec = {
  name: 'rfq_quotes',
  columns: [
    { name: 'quote_id', type: 'text', required: true },
    { name: 'number', type: 'int', required: true },
    { name: 'rfq_id', type: 'text', required: true },
    { name: 'maker_rfq_id', type: 'text', required: true },
    { name: 'desk', type: 'text', required: true },
    { name: 'account_id', type: 'int', required: true },
    { name: 'status', type: 'text', required: true },
    { name: 'created_at', type: 'int', required: true },
    { name: 'last_updated_at', type: 'int', required: true },
    { name: 'updated_seq', type: 'int', required: true },
    { name: 'view', type: 'text', required: true },
  ],
  primaryKey: ['quote_id'],
  indexes: [['desk', 'number DESC'], ['rfq_id'], ['last_updated_at']],
};

export const RFQ_TRADES_TABLE: TableSpec = {
  name: 'rfq_trades',
  columns: [
    { name: 'block_rfq_id', type: 'text', required: true },
    { name: 'number', type: 'int', required: true },
    { name: 'timestamp', type: 'int', required: true },
    { name: 'currency', type: 'text', required: true },
    { name: 'taker_account_id', type: 'int', required: true },
    { name: 'side', type: 'text', required: true },
    { name: 'quantity', type: 'int', required: true },
    { name: 'seq', type: 'int', required: true },
    { name: 'view', type: 'text', required: true },
  ],
  primaryKey: ['block_rfq_id'],
  indexes: [
    ['timestamp DESC', 'number DESC'],
    ['currency', 'timestamp DESC', 'number DESC'],
  ],
};

function projectRfq(rfq: RfqRecord, seq: number, out: RowSink): void {
  out.upsert('rfqs', {
    block_rfq_id: rfq.blockRfqId,
    number: rfq.number,
    taker_account_id: rfq.takerAccountId,
    currency: rfq.currency,
    status: rfq.status,
    label: rfq.label,
    quantity: rfq.quantity,
    filled_quantity: rfq.filledQuantity,
    created_at: rfq.createdAt,
    expires_at: rfq.expiresAt,
    last_updated_at: rfq.lastUpdatedAt,
    updated_seq: seq,
    legs: JSON.stringify(rfq.legs),
    view: new JsonText(rfq),
  });
}

function projectQuote(quote: QuoteRecord, seq: number, out: RowSink): void {
  out.upsert('rfq_quotes', {
    quote_id: quote.quoteId,
    number: quote.number,
    rfq_id: quote.rfqId,
    maker_rfq_id: quote.makerRfqId,
    desk: quote.desk,
    account_id: quote.accountId,
    status: quote.status,
    created_at: quote.createdAt,
    last_updated_at: quote.lastUpdatedAt,
    updated_seq: seq,
    view: new JsonText(quote),
  });
}

function projectTrade(trade: RfqTradeRecord, seq: number, out: RowSink): void {
  out.upsert('rfq_trades', {
    block_rfq_id: trade.blockRfqId,
    number: trade.number,
    timestamp: trade.timestamp,
    currency: trade.currency,
    taker_account_id: trade.takerAccountId,
    side: trade.side,
    quantity: trade.quantity,
    seq,
    view: new JsonText(trade),
  });
}

function isRfqEvent(event: unknown): event is RfqEvent {
  const type = typeof event === 'object' && event !== null ? (event as { type?: unknown }).type : null;
  return type === 'rfq_changed' || type === 'rfq_quote_changed' || type === 'rfq_traded';
}

/** RFQs, quotes and RFQ trades from the `rfq` sub-machine's events. */
export function rfqProjection(subMachine: string = RFQ_SUBMACHINE): Projection {
  return {
    name: 'rfq',
    tables: [RFQS_TABLE, RFQ_QUOTES_TABLE, RFQ_TRADES_TABLE],
    project(committed: CommittedEvents, out: RowSink): void {
      const events = committed.subEvents?.get(subMachine);
      if (events === undefined) return;
      for (const event of events) {
        if (!isRfqEvent(event)) continue;
        switch (event.type) {
          case 'rfq_changed':
            projectRfq(event.rfq, committed.seq, out);
            for (const quote of event.quotes) projectQuote(quote, committed.seq, out);
            break;
          case 'rfq_quote_changed':
            projectQuote(event.quote, committed.seq, out);
            break;
          case 'rfq_traded':
            projectTrade(event.trade, committed.seq, out);
            break;
          default: {
            const _exhaustive: never = event;
            void _exhaustive;
          }
        }
      }
    },
  };
}
