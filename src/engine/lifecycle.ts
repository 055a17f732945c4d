/**
 * Accounts, instruments, prices, expiry, settlement and block trades.
 *
 * Settlement: every open order of the instrument is cancelled (`settlement`), then each position
 * is closed at the settlement price as if traded (futures book the realised PnL; options pay
 * the settlement value, i.e. the option's payoff in its own price units, long receives, short
 * pays), no fees; the instrument is then expired.
 *
 * Block trades: all legs are validated first (accounts, instruments open, amounts, prices on
 * tick, funds of both sides per currency); only then is one trade per leg booked. Block trades
 * are not bound by the price band; both sides get a filled order with `blockTrade` set.
 */
import type {
  BlockTrade,
  CoreCommandType,
  CreateAccount,
  Deposit,
  ListInstrument,
  SetAccountSettings,
  SettleInstrument,
  UpdatePrices,
  Withdraw,
} from '../core/commands.ts';
import type { CommandResult, CoreError, TradeView } from '../core/events.ts';
import { Instrument } from '../domain/instrument.ts';
import { Account, applyFill } from './accounts.ts';
import { Economics } from './economics.ts';
import { cancelResting, closeOrder, settleTrade } from './matching.ts';
import { FLAG_BLOCK_TRADE, Order } from './order.ts';
import { availableFunds, orderReserve } from './risk.ts';
import { InstrumentState, refusal, type VenueState } from './state.ts';

function fail(
  state: VenueState,
  commandType: CoreCommandType,
  accountId: number | null,
  error: CoreError,
): CommandResult {
  state.events.push({ type: 'rejection', commandType, accountId, error });
  return { ok: false, error, events: state.events };
}

function ok(state: VenueState): CommandResult {
  return { ok: true, events: state.events };
}

export function createAccount(state: VenueState, command: CreateAccount): CommandResult {
  if (!Number.isSafeInteger(command.accountId) || command.accountId <= 0) {
    return fail(
      state,
      command.type,
      null,
      refusal('invalid_params', 'accountId must be a positive integer', { field: 'accountId' }),
    );
  }
  if (state.accounts.has(command.accountId)) {
    return fail(
      state,
      command.type,
      command.accountId,
      refusal('invalid_params', 'account already exists', { field: 'accountId' }),
    );
  }
  const account = new Account(
    command.accountId,
    command.userId ?? null,
    command.selfTradeMode ?? 'cancel_maker',
    command.maxOpenOrders ?? state.config.maxOpenOrdersPerAccount,
  );
  state.accounts.set(account.id, account);
  state.events.push({ type: 'account', accountId: account.id, change: 'created' });
  return ok(state);
}

export function setAccountSettings(state: VenueState, command: SetAccountSettings): CommandResult {
  const account = state.accounts.get(command.accountId);
  if (account === undefined) {
    return fail(
      state,
      command.type,
      command.accountId,
      refusal('account_not_found', 'account not found', { field: 'accountId' }),
    );
  }
  if (command.selfTradeMode !== undefined) account.selfTradeMode = command.selfTradeMode;
  if (command.maxOpenOrders !== undefined) account.maxOpenOrders = command.maxOpenOrders;
  state.events.push({ type: 'account', accountId: account.id, change: 'settings' });
  return ok(state);
}

export function moveFunds(state: VenueState, command: Deposit | Withdraw): CommandResult {
  const account = state.accounts.get(command.accountId);
  if (account === undefined) {
    return fail(
      state,
      command.type,
      command.accountId,
      refusal('account_not_found', 'account not found', { field: 'accountId' }),
    );
  }
  if (!Number.isSafeInteger(command.amount) || command.amount <= 0) {
    return fail(
      state,
      command.type,
      account.id,
      refusal('invalid_amount', 'amount must be a positive integer of minor units', { field: 'amount' }),
    );
  }
  const change = command.type === 'deposit' ? command.amount : -command.amount;
  if (change < 0 && availableFunds(state, account, command.currency) < command.amount) {
    return fail(
      state,
      command.type,
      account.id,
      refusal('not_enough_funds', 'not enough available funds', { field: 'amount' }),
    );
  }
  const ledger = account.ledger(command.currency);
  ledger.balance += change;
  state.events.push({
    type: 'balance',
    accountId: account.id,
    currency: command.currency,
    balance: ledger.balance,
    change,
    reason: command.type,
  });
  return ok(state);
}

export function listInstrument(state: VenueState, command: ListInstrument): CommandResult {
  if (state.instruments.has(command.spec.name)) {
    return fail(
      state,
      command.type,
      null,
      refusal('invalid_params', `instrument ${command.spec.name} already listed`, { field: 'spec.name' }),
    );
  }
  let instrument: Instrument;
  let economics: Economics;
  try {
    instrument = new Instrument(state.instrumentList.length, command.spec);
    economics = new Economics(instrument);
  } catch (error) {
    return fail(
      state,
      command.type,
      null,
      refusal('invalid_params', `bad instrument spec: ${(error as Error).message}`, { field: 'spec' }),
    );
  }
  const entry = new InstrumentState(instrument, economics);
  state.instruments.set(instrument.name, entry);
  state.instrumentList.push(entry);
  state.events.push({
    type: 'instrument',
    instrumentName: instrument.name,
    state: 'open',
    settlementPrice: null,
  });
  return ok(state);
}

export function updatePrices(state: VenueState, command: UpdatePrices): CommandResult {
  for (const update of command.indexPrices ?? []) state.indexPrices.set(update.currency, update.price);
  for (const update of command.markPrices ?? []) {
    const instrument = state.instruments.get(update.instrumentName);
    if (instrument !== undefined && Number.isSafeInteger(update.markPrice))
      instrument.markPrice = update.markPrice;
  }
  state.priceEpoch++;
  return ok(state);
}

/** Cancels good-til-day orders whose session ended at or before `now`. */
export function expireDue(state: VenueState): void {
  while (state.expiries.nextAt() <= state.now) {
    const order = state.expiries.pop()!;
    if (order.state !== 'open' || order.level === null) continue;
    cancelResting(state, state.instrumentList[order.instrumentId]!, order, 'good_til_day');
  }
}

export function settleInstrument(state: VenueState, command: SettleInstrument): CommandResult {
  const instrument = state.instruments.get(command.instrumentName);
  if (instrument === undefined) {
    return fail(
      state,
      command.type,
      null,
      refusal('invalid_instrument', 'instrument not found', { field: 'instrumentName' }),
    );
  }
  if (instrument.status !== 'open') {
    return fail(
      state,
      command.type,
      null,
      refusal('instrument_expired', 'instrument already expired', { field: 'instrumentName' }),
    );
  }
  if (!Number.isSafeInteger(command.settlementPrice)) {
    return fail(
      state,
      command.type,
      null,
      refusal('invalid_price', 'settlement price must be integer ticks', { field: 'settlementPrice' }),
    );
  }
  const open = [...instrument.book.bids.levelsBestFirst(), ...instrument.book.asks.levelsBestFirst()].flatMap(
    (level) => {
      const orders: Order[] = [];
      for (let o = level.head; o !== null; o = o.next) orders.push(o);
      return orders;
    },
  );
  open.sort((a, b) => a.number - b.number);
  for (const order of open) cancelResting(state, instrument, order, 'settlement');
  const economics = instrument.economics;
  const price = command.settlementPrice;
  const accounts = [...instrument.positions.keys()].sort((a, b) => a - b);
  for (const accountId of accounts) {
    const position = instrument.positions.get(accountId)!;
    if (position.size === 0) continue;
    const account = state.accounts.get(accountId)!;
    const lots = Math.abs(position.size);
    const sigma: 1 | -1 = position.size > 0 ? 1 : -1;
    const pnl = applyFill(position, sigma === 1 ? -1 : 1, lots, price);
    const cash = (economics.isOption ? sigma * economics.value(lots, Math.max(0, price)) : pnl) + 0;
    const ledger = account.ledger(economics.settlementCurrency);
    ledger.balance += cash;
    ledger.cachedEpoch = -1;
    state.events.push({ type: 'position', position: position.toView() });
    state.events.push({
      type: 'balance',
      accountId,
      currency: ledger.currency,
      balance: ledger.balance,
      change: cash,
      reason: 'settlement',
    });
  }
  instrument.status = 'expired';
  instrument.settlementPrice = price;
  state.priceEpoch++;
  state.events.push({
    type: 'instrument',
    instrumentName: instrument.instrument.name,
    state: 'expired',
    settlementPrice: price,
  });
  return ok(state);
}

export function blockTrade(state: VenueState, command: BlockTrade): CommandResult {
  const refuse = (error: CoreError) => fail(state, command.type, command.takerAccountId, error);
  const taker = state.accounts.get(command.takerAccountId);
  const maker = state.accounts.get(command.makerAccountId);
  if (taker === undefined)
    return refuse(refusal('account_not_found', 'taker account not found', { field: 'takerAccountId' }));
  if (maker === undefined)
    return refuse(refusal('account_not_found', 'maker account not found', { field: 'makerAccountId' }));
  if (taker === maker)
    return refuse(
      refusal('order_overlap', 'a block trade needs two different accounts', { field: 'makerAccountId' }),
    );
  if (command.legs.length === 0)
    return refuse(refusal('invalid_arguments', 'a block trade needs legs', { field: 'legs' }));
  const needs = new Map<Account, Map<string, number>>([
    [taker, new Map()],
    [maker, new Map()],
  ]);
  const legs: InstrumentState[] = [];
  for (const [i, leg] of command.legs.entries()) {
    const instrument = state.instruments.get(leg.instrumentName);
    if (instrument === undefined)
      return refuse(
        refusal('invalid_instrument', `leg ${i}: instrument not found`, {
          field: `legs[${i}].instrumentName`,
        }),
      );
    if (instrument.status !== 'open')
      return refuse(
        refusal('instrument_expired', `leg ${i}: instrument expired`, { field: `legs[${i}].instrumentName` }),
      );
    if (!Number.isSafeInteger(leg.amount) || leg.amount <= 0)
      return refuse(refusal('invalid_amount', `leg ${i}: bad amount`, { field: `legs[${i}].amount` }));
    if (!Number.isSafeInteger(leg.price) || !instrument.instrument.isOnTick(leg.price)) {
      return refuse(
        refusal('off_grid', `leg ${i}: price not on the tick grid`, { field: `legs[${i}].price` }),
      );
    }
    legs.push(instrument);
    for (const [account, side] of [
      [taker, leg.side],
      [maker, leg.side === 'buy' ? 'sell' : 'buy'],
    ] as const) {
      const reserve = orderReserve(state, instrument, account, side, leg.amount, leg.price);
      const byCurrency = needs.get(account)!;
      byCurrency.set(reserve.currency, (byCurrency.get(reserve.currency) ?? 0) + reserve.amount);
    }
  }
  for (const [account, byCurrency] of needs) {
    for (const [currency, amount] of byCurrency) {
      const available = availableFunds(state, account, currency);
      if (amount > available) {
        return refuse(
          refusal('not_enough_funds', `account ${account.id} lacks funds for the block trade`, {
            field: account === taker ? 'takerAccountId' : 'makerAccountId',
            required: amount,
            available,
            currency,
          }),
        );
      }
    }
  }
  const blockTradeId = command.blockTradeId ?? `BLOCK-${++state.blockTradeNumber}`;
  const block = {
    blockTradeId,
    blockRfqId: command.blockRfqId ?? null,
    makerBlockRfqId: command.makerBlockRfqId ?? command.blockRfqId ?? null,
    blockRfqQuoteId: command.blockRfqQuoteId ?? null,
  };
  const trades: TradeView[] = [];
  command.legs.forEach((leg, i) => {
    const instrument = legs[i]!;
    const takerOrder = blockOrder(
      state,
      instrument,
      taker.id,
      leg.side,
      leg.amount,
      leg.price,
      command.takerLabel ?? '',
    );
    const makerOrder = blockOrder(
      state,
      instrument,
      maker.id,
      leg.side === 'buy' ? 'sell' : 'buy',
      leg.amount,
      leg.price,
      command.makerLabel ?? '',
    );
    state.events.push({ type: 'order', order: takerOrder.toView() });
    state.events.push({ type: 'order', order: makerOrder.toView() });
    trades.push(
      settleTrade(state, instrument, takerOrder, taker, makerOrder, maker, leg.price, leg.amount, block),
    );
  });
  return { ok: true, events: state.events, trades, blockTradeId };
}

function blockOrder(
  state: VenueState,
  instrument: InstrumentState,
  accountId: number,
  side: 'buy' | 'sell',
  lots: number,
  price: number,
  label: string,
): Order {
  const number = ++state.orderNumber;
  const currency = instrument.instrument.currency;
  const order = new Order(
    `${currency}-${number}`,
    number,
    accountId,
    instrument.id,
    instrument.instrument.name,
    currency,
    side,
    'limit',
    price,
    lots,
    'fill_or_kill',
    state.now,
    label,
    null,
    FLAG_BLOCK_TRADE,
  );
  order.filled = lots;
  order.filledNotional = lots * price;
  state.orders.set(order.id, order);
  closeOrder(state, order, 'fill_complete', null);
  return order;
}
