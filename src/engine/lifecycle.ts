/**
 * Accounts, instruments, prices, expiry, settlement and block trades.
 *
 * Settlement: every open order of the instrument is cancelled (`settlement`), then each position
 * is closed at the settlement price as if traded (futures book the realised PnL; options pay
 * the settlement value, i.e. the option's payoff in its own price units, long receives, short
 * pays), no fees; the instrument is then expired, keeping only its last `EXPIRED_TRADES_KEPT`
 * public trades. The closed positions then go (`dropSettled`): an account's positions are those of
 * open instruments (and the flat ones of instruments settled by older builds, restored as saved). The open combos of a settling leg are found through a leg→combos index derived
 * from the instrument list (`takeCombosOf`), not by walking every instrument ever listed.
 *
 * Block trades: all legs are validated first (accounts, instruments open, amounts, prices on
 * tick and positive for options, futures and spot, funds of both sides per currency, including
 * what the resting orders whose claimed lots the block closes then need, block-claims.ts); only
 * then is one trade per leg booked. A batch of block trades is validated as a whole (each account's
 * funds against its needs over every block) before any block is booked, so it books all or
 * nothing. Block trades are not bound by the price band; both sides get a filled order with
 * `blockTrade` set. A block's `tradeAllocations` (a Block RFQ's list) are recorded on its trades
 * (a combo's trade, not its leg trades) for the taker's views only: not on the public tape.
 */
import {
  type BlockTrade,
  type BlockTradeTerms,
  type CoreCommandType,
  type CreateAccount,
  DEPOSIT_ID_PATTERN,
  type Deposit,
  type ListInstrument,
  type SetAccountSettings,
  type SettleInstrument,
  type TradeAllocation,
  type UpdatePrices,
  type Withdraw,
} from '../core/commands.ts';
import type { CommandResult, CoreError, TradeView } from '../core/events.ts';
import { parseDecimal, type ScaledDecimal } from '../domain/decimal.ts';
import { Instrument } from '../domain/instrument.ts';
import { Account, closeAtValue, type DepositRecord } from './accounts.ts';
import { blockLegsNeed } from './block-claims.ts';
import { forgetIdleLegLots, forgetSettledClaims } from './claim-queues.ts';
import { comboLegsProblem } from './combo-legs.ts';
import { Economics, type Rounding } from './economics.ts';
import { cancelResting, closeOrder, settleTrade } from './matching.ts';
import { FLAG_API, FLAG_BLOCK_TRADE, Order } from './order.ts';
import { availableFunds, type ReserveLeg } from './risk.ts';
import { InstrumentState, refusal, type VenueState } from './state.ts';
import { comboPriceProblem, pastExpiry } from './trading.ts';

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
  const depositId = command.type === 'deposit' ? command.depositId : undefined;
  if (depositId !== undefined) {
    if (typeof depositId !== 'string' || !DEPOSIT_ID.test(depositId)) {
      return fail(
        state,
        command.type,
        account.id,
        refusal('invalid_params', 'depositId must be 1 to 64 characters of A-Z a-z 0-9 . _ : -', {
          field: 'depositId',
        }),
      );
    }
    const earlier = depositById(state, account, depositId);
    if (earlier !== undefined) {
      const { accountId, record } = earlier;
      // Already credited: a retry answers as the deposit did, and changes nothing.
      if (
        accountId === account.id &&
        record.currency === command.currency &&
        record.amount === command.amount
      )
        return ok(state);
      return fail(
        state,
        command.type,
        account.id,
        refusal(
          'invalid_params',
          `depositId '${depositId}' was already used for a different deposit (account ${accountId}, ${record.amount} minor units of ${record.currency}): use a new id for a new deposit`,
          { field: 'depositId' },
        ),
      );
    }
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
  // Minor units stay exact integers: a balance past 2^53 would round, and later deposits vanish.
  const balance = (account.ledgers.get(command.currency)?.balance ?? 0) + change;
  if (!Number.isSafeInteger(balance)) {
    return fail(
      state,
      command.type,
      account.id,
      refusal('invalid_amount', `the balance would pass ${Number.MAX_SAFE_INTEGER} minor units`, {
        field: 'amount',
      }),
    );
  }
  const ledger = account.ledger(command.currency);
  ledger.balance = balance;
  if (depositId !== undefined) {
    account.rememberDeposit(depositId, { currency: command.currency, amount: command.amount });
  }
  state.events.push({
    type: 'balance',
    accountId: account.id,
    currency: command.currency,
    balance: ledger.balance,
    change,
    reason: command.type,
    ...(depositId !== undefined ? { depositId } : {}),
  });
  return ok(state);
}

const DEPOSIT_ID = new RegExp(DEPOSIT_ID_PATTERN);

/**
 * The remembered deposit with this id: the target account's first, then every other account's
 * (an id names one deposit venue-wide). The scan runs only for a deposit with a new id, an
 * operator action, so it is not on any trading path.
 */
function depositById(
  state: VenueState,
  target: Account,
  depositId: string,
): { accountId: number; record: DepositRecord } | undefined {
  const own = target.depositIds.get(depositId);
  if (own !== undefined) return { accountId: target.id, record: own };
  for (const account of state.accounts.values()) {
    const record = account.depositIds.get(depositId);
    if (record !== undefined) return { accountId: account.id, record };
  }
  return undefined;
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
  const legsProblem = comboLegsProblem(command.spec, (name) => state.instruments.get(name)?.instrument.spec);
  if (legsProblem !== null)
    return fail(state, command.type, null, refusal('invalid_params', legsProblem, { field: 'spec.legs' }));
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
  for (const update of command.indexPrices ?? []) {
    state.indexPrices.set(update.currency, update.price);
    state.indexSamples.record(update.currency, state.now, update.price);
  }
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

/**
 * The combos of each leg by leg name, in listing order: derived from `instrumentList` (which only
 * grows) as it grows, so a settlement does not walk every instrument ever listed. Not state: a
 * restored venue builds its own at its first settlement.
 */
interface CombosByLeg {
  scanned: number;
  readonly byLeg: Map<string, InstrumentState[]>;
}

const combosByLeg = new WeakMap<VenueState, CombosByLeg>();

/** The open combos `leg` belongs to, in listing order; forgets the leg's entry (it settles). */
function takeCombosOf(state: VenueState, leg: InstrumentState): InstrumentState[] {
  let index = combosByLeg.get(state);
  if (index === undefined) {
    index = { scanned: 0, byLeg: new Map() };
    combosByLeg.set(state, index);
  }
  const list = state.instrumentList;
  for (; index.scanned < list.length; index.scanned++) {
    const combo = list[index.scanned]!;
    const legs = combo.instrument.spec.legs;
    if (legs === null || combo.status !== 'open') continue;
    for (const { instrumentName } of legs) {
      const combos = index.byLeg.get(instrumentName);
      if (combos === undefined) index.byLeg.set(instrumentName, [combo]);
      else if (combos[combos.length - 1] !== combo) combos.push(combo);
    }
  }
  const combos = index.byLeg.get(leg.instrument.name) ?? [];
  index.byLeg.delete(leg.instrument.name);
  // A settling combo leaves its legs' lists (a perpetual leg never settles to clear its own).
  for (const { instrumentName } of leg.instrument.spec.legs ?? []) {
    const combos = index.byLeg.get(instrumentName);
    if (combos !== undefined)
      index.byLeg.set(
        instrumentName,
        combos.filter((c) => c !== leg),
      );
  }
  return combos.filter((combo) => combo.status === 'open');
}

/**
 * A leg that expires takes the resting orders of every open combo it belongs to with it. Returns
 * those combos.
 */
function cancelOnCombosOf(state: VenueState, leg: InstrumentState): InstrumentState[] {
  const combos = takeCombosOf(state, leg);
  for (const combo of combos) {
    const resting: Order[] = [];
    for (const book of [combo.book.bids, combo.book.asks])
      for (const level of book.levelsBestFirst())
        for (let o = level.head; o !== null; o = o.next) resting.push(o);
    resting.sort((a, b) => a.number - b.number);
    for (const order of resting) cancelResting(state, combo, order, 'settlement');
  }
  return combos;
}

/**
 * What a settled instrument's holders kept of it goes once their positions are closed and its
 * orders cancelled: each holder's flat position (the settlement's position event carries its
 * final realised PnL), the claim queues and combo lots derived from orders on it (the accounts
 * with a resting combo order on one of `combos` hold a position on that combo), a settled combo's
 * spent lots on its legs, and its empty book's spare room. None of it is saved but the positions,
 * which a snapshot then leaves out, so live, replayed and restored venues agree.
 */
function dropSettled(
  state: VenueState,
  instrument: InstrumentState,
  combos: readonly InstrumentState[],
): void {
  const holders = new Set(instrument.positions.keys());
  for (const combo of combos) for (const accountId of combo.positions.keys()) holders.add(accountId);
  const legIds: number[] = [];
  for (const { instrumentName } of instrument.instrument.spec.legs ?? []) {
    const leg = state.instruments.get(instrumentName);
    if (leg !== undefined) legIds.push(leg.id);
  }
  for (const accountId of holders) {
    const account = state.accounts.get(accountId);
    if (account === undefined) continue;
    account.positions.delete(instrument.id);
    forgetSettledClaims(account, instrument.id);
    for (const legId of legIds) forgetIdleLegLots(account, legId);
  }
  instrument.positions.clear();
  instrument.book.release();
  // The greeks published with its marks (MMP, usd/implv pricing): nothing trades it any more.
  state.advanced.greeks.delete(instrument.instrument.name);
}

/**
 * Public trades an expired instrument keeps (`recentTrades`): the default count of
 * public/get_last_trades_by_instrument (docs/decisions.md, "What an expired instrument keeps").
 */
export const EXPIRED_TRADES_KEPT = 10;

function settlementIndexOf(command: SettleInstrument): ScaledDecimal | null | 'invalid' {
  if (command.settlementIndex === undefined) return null;
  if (typeof command.settlementIndex !== 'string') return 'invalid';
  try {
    const index = parseDecimal(command.settlementIndex, 'settlementIndex');
    return index.units > 0n ? index : 'invalid';
  } catch {
    return 'invalid';
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
  const index = settlementIndexOf(command);
  if (index === 'invalid') {
    return fail(
      state,
      command.type,
      null,
      refusal('invalid_price', 'settlement index must be a positive decimal', { field: 'settlementIndex' }),
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
  const combos = cancelOnCombosOf(state, instrument);
  const economics = instrument.economics;
  const price = command.settlementPrice;
  const accounts = [...instrument.positions.keys()].sort((a, b) => a - b);
  for (const accountId of accounts) {
    const position = instrument.positions.get(accountId)!;
    if (position.size === 0) continue;
    const account = state.accounts.get(accountId)!;
    const size = position.size;
    const lots = Math.abs(size);
    const sigma: 1 | -1 = position.size > 0 ? 1 : -1;
    // Each position's value rounds once, against its holder: the holder's cash from it,
    // dir × σ × value, rounds down, so over all positions the venue keeps under one minor unit
    // per position and never pays one out (docs/decisions.md, "Settlement index").
    const rounding: Rounding = economics.direction * sigma > 0 ? 'floor' : 'ceil';
    const exit =
      index !== null && economics.isOption
        ? economics.optionPayoff(lots, index, rounding)
        : index !== null && economics.isFuture
          ? economics.valueAt(lots, index, rounding)
          : economics.valueOfTicks(lots, economics.isOption ? Math.max(0, price) : price, rounding);
    const pnl = closeAtValue(position, exit);
    const cash = (economics.isOption ? sigma * exit : pnl) + 0;
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
      settlement: {
        instrumentName: instrument.instrument.name,
        size,
        settlementPrice: price,
        settlementIndex:
          index !== null && (economics.isOption || economics.isFuture) ? command.settlementIndex! : null,
        profitLoss: pnl,
      },
    });
  }
  dropSettled(state, instrument, combos);
  instrument.openInterest = 0;
  // An expired instrument trades no more: its tape keeps the last trades a default
  // public/get_last_trades_by_instrument shows; the read store keeps the whole history.
  const recent = instrument.recentTrades;
  if (recent.length > EXPIRED_TRADES_KEPT) recent.splice(0, recent.length - EXPIRED_TRADES_KEPT);
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
  const blocks: readonly BlockTradeTerms[] = [command, ...(command.batch ?? [])];
  const checked: CheckedBlock[] = [];
  for (const [index, terms] of blocks.entries()) {
    const block = checkBlock(state, terms, index);
    if (!block.ok) return refuse(block.error);
    checked.push(block.block);
  }
  const short = checkBlockFunds(state, checked);
  if (short !== null) return refuse(short);
  const trades: TradeView[] = [];
  let firstBlockTradeId: string | null = null;
  for (const block of checked) {
    const booked = bookBlock(state, block);
    firstBlockTradeId ??= booked.blockTradeId;
    for (const trade of booked.trades) trades.push(trade);
  }
  return { ok: true, events: state.events, trades, blockTradeId: firstBlockTradeId! };
}

/** A block of a `block_trade` command whose accounts, instruments, amounts and prices are valid. */
interface CheckedBlock {
  readonly terms: BlockTradeTerms;
  /** Where the block's fields sit in the command (for error fields). */
  readonly index: number;
  readonly taker: Account;
  readonly maker: Account;
  readonly instruments: readonly InstrumentState[];
}

/** The name of a block's field in the command: the command's own, or one in `batch`. */
function blockField(index: number, name: string): string {
  return index === 0 ? name : `batch[${index - 1}].${name}`;
}

/** Options, futures and spot trade at positive prices only (combo prices may be negative). */
function isOutright(instrument: InstrumentState): boolean {
  const kind = instrument.instrument.kind;
  return kind === 'option' || kind === 'future' || kind === 'spot';
}

function checkBlock(
  state: VenueState,
  terms: BlockTradeTerms,
  index: number,
): { ok: true; block: CheckedBlock } | { ok: false; error: CoreError } {
  const refused = (
    name: CoreError['name'],
    message: string,
    field: string,
    more: CoreError['data'] = {},
  ) => ({
    ok: false as const,
    error: refusal(name, message, { field: blockField(index, field), ...more }),
  });
  // Refusals caused by one party name its account, so a caller can tell whose they are.
  const taker = state.accounts.get(terms.takerAccountId);
  const maker = state.accounts.get(terms.makerAccountId);
  if (taker === undefined)
    return refused('account_not_found', 'taker account not found', 'takerAccountId', {
      accountId: terms.takerAccountId,
    });
  if (maker === undefined)
    return refused('account_not_found', 'maker account not found', 'makerAccountId', {
      accountId: terms.makerAccountId,
    });
  if (taker === maker)
    return refused('order_overlap', 'a block trade needs two different accounts', 'makerAccountId', {
      accountId: terms.makerAccountId,
    });
  if (terms.legs.length === 0) return refused('invalid_arguments', 'a block trade needs legs', 'legs');
  if (terms.tradeAllocations !== undefined && !allocationsWellFormed(terms.tradeAllocations))
    return refused('invalid_arguments', 'malformed trade allocations', 'tradeAllocations');
  const instruments: InstrumentState[] = [];
  for (const [i, leg] of terms.legs.entries()) {
    const instrument = state.instruments.get(leg.instrumentName);
    if (instrument === undefined)
      return refused('invalid_instrument', `leg ${i}: instrument not found`, `legs[${i}].instrumentName`);
    if (pastExpiry(state, instrument))
      return refused('instrument_expired', `leg ${i}: instrument expired`, `legs[${i}].instrumentName`);
    if (!Number.isSafeInteger(leg.amount) || leg.amount <= 0)
      return refused('invalid_amount', `leg ${i}: bad amount`, `legs[${i}].amount`);
    if (!Number.isSafeInteger(leg.price) || !instrument.instrument.isOnTick(leg.price))
      return refused('off_grid', `leg ${i}: price not on the tick grid`, `legs[${i}].price`);
    // A price at or below zero would pay the buyer and, through fees on a negative premium,
    // give both sides negative fees: money created.
    if (leg.price <= 0 && isOutright(instrument))
      return refused('invalid_price', `leg ${i}: price must be positive`, `legs[${i}].price`);
    // A combo's trade is booked on its legs (docs/decisions.md, "Combo trades"), at leg prices of
    // at least one tick each: a price they cannot split into is refused, as an order's is.
    const combo = comboPriceProblem(state, instrument, leg.price);
    if (combo !== null) {
      const { field: _price, ...bound } = combo.data;
      return refused(combo.name, `leg ${i}: ${combo.message}`, `legs[${i}].price`, bound);
    }
    instruments.push(instrument);
  }
  return { ok: true, block: { terms, index, taker, maker, instruments } };
}

/**
 * Checks every account's funds against what it needs over all the blocks together; null when
 * every account can pay. An account's earlier lots on the same instrument and side count as
 * pending, so a position is not counted as reducible twice; its option legs cover each other's
 * shorts as a combo's do, a long bought above its mark by its marked value only. Lots that close
 * what the account's resting orders claim also need what those orders then reserve for opening
 * (`blockLegsNeed`, block-claims.ts); their reserves move in the review after the command
 * (matching.ts `clipReduceOnly`, run by `Venue.execute`, through which the Block RFQ desk books).
 */
function checkBlockFunds(state: VenueState, blocks: readonly CheckedBlock[]): CoreError | null {
  const legs = new Map<Account, ReserveLeg[]>();
  const fields = new Map<Account, string>();
  const pending = new Map<string, number>();
  for (const block of blocks) {
    for (const [i, leg] of block.terms.legs.entries()) {
      const instrument = block.instruments[i]!;
      const parties = [
        [block.taker, leg.side, 'takerAccountId'],
        [block.maker, leg.side === 'buy' ? 'sell' : 'buy', 'makerAccountId'],
      ] as const;
      for (const [account, side, field] of parties) {
        const key = `${account.id}|${instrument.id}|${side}`;
        const pendingLots = pending.get(key) ?? 0;
        pending.set(key, pendingLots + leg.amount);
        let accountLegs = legs.get(account);
        if (accountLegs === undefined) {
          accountLegs = [];
          legs.set(account, accountLegs);
          fields.set(account, blockField(block.index, field));
        }
        accountLegs.push({ instrument, side, lots: leg.amount, price: leg.price, pendingLots });
      }
    }
  }
  for (const [account, accountLegs] of legs) {
    for (const [currency, amount] of blockLegsNeed(state, account, accountLegs)) {
      const available = availableFunds(state, account, currency);
      if (amount > available) {
        return refusal('not_enough_funds', `account ${account.id} lacks funds for the block trade`, {
          field: fields.get(account)!,
          accountId: account.id,
          required: amount,
          available,
          currency,
        });
      }
    }
  }
  return null;
}

/** Books one validated block: a filled order per side and one trade per leg. */
function bookBlock(state: VenueState, block: CheckedBlock): { blockTradeId: string; trades: TradeView[] } {
  const { terms, taker, maker } = block;
  const blockTradeId = terms.blockTradeId ?? `BLOCK-${++state.blockTradeNumber}`;
  const ids = {
    blockTradeId,
    blockRfqId: terms.blockRfqId ?? null,
    makerBlockRfqId: terms.makerBlockRfqId ?? terms.blockRfqId ?? null,
    blockRfqQuoteId: terms.blockRfqQuoteId ?? null,
  };
  const allocations = allocationsOf(terms);
  const trades: TradeView[] = [];
  terms.legs.forEach((leg, i) => {
    const instrument = block.instruments[i]!;
    const takerOrder = blockOrder(
      state,
      instrument,
      taker.id,
      leg.side,
      leg.amount,
      leg.price,
      terms.takerLabel ?? '',
    );
    const makerOrder = blockOrder(
      state,
      instrument,
      maker.id,
      leg.side === 'buy' ? 'sell' : 'buy',
      leg.amount,
      leg.price,
      terms.makerLabel ?? '',
    );
    state.events.push({ type: 'order', order: takerOrder.toView() });
    state.events.push({ type: 'order', order: makerOrder.toView() });
    const trade = settleTrade(
      state,
      instrument,
      takerOrder,
      taker,
      makerOrder,
      maker,
      leg.price,
      leg.amount,
      {
        ...ids,
        comboId: leg.comboId ?? null,
      },
    );
    trades.push(allocations === null ? trade : withAllocations(state, trade, allocations));
  });
  return { blockTradeId, trades };
}

function allocationsWellFormed(allocations: unknown): boolean {
  if (!Array.isArray(allocations)) return false;
  return allocations.every((a: Partial<TradeAllocation> | null) => {
    if (typeof a !== 'object' || a === null || typeof a.amount !== 'string') return false;
    if (a.userId !== undefined && !Number.isSafeInteger(a.userId)) return false;
    const client = a.clientInfo;
    return (
      client === undefined ||
      (typeof client === 'object' &&
        client !== null &&
        Number.isSafeInteger(client.clientId) &&
        Number.isSafeInteger(client.clientLinkId) &&
        (client.name === null || Number.isSafeInteger(client.name)))
    );
  });
}

/** A copy of the block's allocation list for its trades; null when it has none. */
function allocationsOf(terms: BlockTradeTerms): readonly TradeAllocation[] | null {
  const list = terms.tradeAllocations;
  if (list === undefined || list.length === 0) return null;
  return list.map((a) => ({
    amount: a.amount,
    ...(a.userId !== undefined ? { userId: a.userId } : {}),
    ...(a.clientInfo !== undefined ? { clientInfo: { ...a.clientInfo } } : {}),
  }));
}

/**
 * `trade` with the RFQ's allocations, put in place of the trade in the command's `trade` event
 * (its last, as `settleTrade` just pushed it before the positions and balances). The instrument's
 * recent trades keep the trade without them: the public tape never shows allocations, and the
 * engine's state (snapshots, state hash) is what it was before allocations were recorded.
 */
function withAllocations(
  state: VenueState,
  trade: TradeView,
  allocations: readonly TradeAllocation[],
): TradeView {
  const shown: TradeView = { ...trade, tradeAllocations: allocations };
  for (let i = state.events.length - 1; i >= 0; i--) {
    const event = state.events[i]!;
    if (event.type === 'trade' && event.trade === trade) {
      state.events[i] = { type: 'trade', trade: shown };
      return shown;
    }
  }
  // `settleTrade` always pushes the event; were it ever missing, the answer still carries them
  // (a throw here would stop the core).
  return shown;
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
    // Block trades are made only through the API (`block/rfqs/accept`, quotes).
    FLAG_BLOCK_TRADE | FLAG_API,
  );
  order.filled = lots;
  order.filledNotional = lots * price;
  state.orders.set(order.id, order);
  closeOrder(state, order, 'fill_complete', null);
  return order;
}
