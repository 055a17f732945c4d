/**
 * The flat portfolio routes (SEMANTICS, Transport), signed with the same five headers as every
 * HTTP request, answered `{succ, code, message, value}`:
 * - `POST /tt/core-broker/openapi/portfolios/submit`  (flat body of spec 2.1) → `{portfolioId}`;
 *   a COMMON portfolio whose legs form a combo lists the combo first (ComboPort), so the listing
 *   is journaled before the submit and the algorithm can place one combo order (src/algo/combo.ts)
 * - `GET  /tt/core-broker/openapi/portfolios/info?portfolioId=` → the portfolio (wire.ts)
 * - `POST /tt/core-broker/openapi/portfolios/cancel` `{portfolioId, accountId?}` → null
 * - `POST /tt/core-broker/openapi/portfolios/cancel-all` `{accountId, portfolioType?}` →
 *   `{portfolioIds}`
 *
 * A finished portfolio leaves the core 7 days after it ended (src/algo/machine.ts); `info` then
 * answers from its final record in the read store (`archive`), exactly as before, and `cancel`
 * refuses it as the core refused a finished one (`portfolio_not_active`).
 *
 * Invariants: `submit`, `cancel` and `cancel-all` need the `trade` role (a key without it is refused
 * `forbidden` and nothing runs); `info` answers any key of the user. A key sees and acts on the
 * portfolios of its user's accounts only (another user's portfolio is `portfolio_not_found`, never
 * "forbidden", so ids cannot be probed); refusals of the core travel with their catalogue code and
 * `data.field`. A cancel may name the portfolio's own
 * account or, for a mirror, its original's; another account of the key is `invalid_params`.
 */

import { commonComboCandidate } from '../../algo/combo.ts';
import type { PortfolioMachine } from '../../algo/machine.ts';
import type { PortfolioState } from '../../algo/portfolio-state.ts';
import type { AlgoValue, PortfolioSpec, PortfolioType, UnstampedAlgoCommand } from '../../algo/types.ts';
import type { MachineResult } from '../../core/machine.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { Principal } from '../auth/authenticator.ts';
import type { Role } from '../auth/key-store.ts';
import type { FlatRouteDefinition } from '../http-routes.ts';
import type { ComboPort } from '../ports.ts';
import { isErrorName } from '../wire-errors.ts';
import {
  CancelAllPortfoliosValue,
  CancelPortfolioValue,
  PortfolioInfoValue,
  SubmitPortfolioValue,
} from './answer-schemas.ts';
import {
  CancelAllPortfoliosBody,
  CancelPortfolioBody,
  PortfolioInfoQuery,
  SubmitPortfolioBody,
} from './schemas.ts';
import { validatePortfolioBody } from './validate.ts';
import { portfolioInfoToWire } from './wire.ts';

export const PORTFOLIO_BASE_PATH = '/tt/core-broker/openapi/portfolios';

export interface PortfolioRouteDeps {
  /** Journals and applies a command (CoreService.submitMachine). */
  submitMachine(command: UnstampedAlgoCommand): Promise<Pick<MachineResult, 'result'>>;
  now(): number;
  instrument(name: string): Instrument | undefined;
  /** The live algorithm layer (reads only); `prunedPortfolio` covers a prune not yet in the store. */
  portfolios(): Pick<PortfolioMachine, 'portfolio'> & Partial<Pick<PortfolioMachine, 'prunedPortfolio'>>;
  /**
   * Portfolios the core has pruned, from the read store (`portfolioArchive` of
   * src/store/read/portfolio-queries.ts). Without it such a portfolio is `portfolio_not_found`.
   */
  readonly archive?: PortfolioArchive;
  /** Lists combos on first use; without it a COMMON portfolio uses combos already listed only. */
  readonly combos?: ComboPort;
}

export interface PortfolioArchive {
  /** The final record of a pruned portfolio, or null. */
  portfolio(portfolioId: number): Promise<PortfolioState | null>;
}

export interface FlatRouteRegistrar {
  registerFlatRoute<Body, Query>(route: FlatRouteDefinition<Body, Query>): void;
}

type Json = Record<string, unknown>;
type CoreOutcome =
  | { ok: true; value: AlgoValue }
  | { ok: false; error: { name: string; message: string; data: Json } };

async function run(deps: PortfolioRouteDeps, command: UnstampedAlgoCommand): Promise<AlgoValue> {
  const { result } = await deps.submitMachine(command);
  const outcome = result as CoreOutcome;
  if (outcome.ok) return outcome.value;
  const name = isErrorName(outcome.error.name) ? outcome.error.name : 'other_reject';
  throw new VenueError(name, outcome.error.message, outcome.error.data);
}

function asObject(value: unknown): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new VenueError('invalid_params', 'body must be an object', { field: 'body' });
  }
  return value as Json;
}

function id(value: unknown, field: string, required: boolean): number | null {
  if (value === undefined || value === null || value === '') {
    if (required) throw new VenueError('value_required', `${field} is required`, { field });
    return null;
  }
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    throw new VenueError(
      'invalid_params',
      `${field} must be a positive integer of at most 16 digits (below 2^53)`,
      {
        field,
      },
    );
  }
  return n;
}

function ownAccount(principal: Principal, accountId: number, field: string): void {
  if (!principal.accountIds.has(accountId)) {
    throw new VenueError('account_not_owned', `${field} ${accountId} does not belong to this key`, { field });
  }
}

/**
 * Lists the combo a COMMON portfolio's legs form, when it is not listed yet. A listing that fails
 * (an unlisted leg, grids that differ, the market not started) is harmless: the algorithm then
 * places the legs one order each.
 */
async function listCommonCombo(deps: PortfolioRouteDeps, portfolio: PortfolioSpec): Promise<void> {
  if (deps.combos === undefined) return;
  const name = commonComboCandidate(portfolio, (n) => deps.instrument(n));
  if (name === null || deps.instrument(name) !== undefined) return;
  try {
    await deps.combos.list(name);
  } catch {
    // One order per leg instead.
  }
}

/** Submitting and cancelling trade (docs/decisions.md, "Roles"); `info` is a read for any key of the user. */
const TRADE: readonly Role[] = ['trade'];

const TYPES: readonly PortfolioType[] = ['BALANCE', 'TWAP', 'COMMON', 'ICEBERG'];

/**
 * A cancel's `accountId` is the portfolio's own account or, for a mirror, the account its
 * original was submitted from (the `accountId` the client sent with the submit).
 */
function checkCancelAccount(
  portfolio: PortfolioState,
  accountId: number,
  original: PortfolioState | undefined,
): void {
  if (portfolio.spec.accountId === accountId) return;
  if (original?.spec.accountId === accountId) return;
  throw new VenueError(
    'invalid_params',
    `accountId ${accountId} is not the account of portfolio ${portfolio.id} (${portfolio.spec.accountId})` +
      (original === undefined ? '' : ` nor of its original ${original.id} (${original.spec.accountId})`),
    { field: 'accountId' },
  );
}

export function registerPortfolioRoutes(registrar: FlatRouteRegistrar, deps: PortfolioRouteDeps): void {
  /** A portfolio the core has pruned: the last pruned ones, else the read store's record. */
  const pruned = async (portfolioId: number): Promise<PortfolioState | undefined> =>
    deps.portfolios().prunedPortfolio?.(portfolioId) ??
    (await deps.archive?.portfolio(portfolioId)) ??
    undefined;
  const notFound = (portfolioId: number) =>
    new VenueError('portfolio_not_found', `portfolio ${portfolioId} not found`, { field: 'portfolioId' });
  /** The portfolio, live or pruned (`live` tells which), if the key may see it. */
  const visible = async (principal: Principal, portfolioId: number) => {
    const live = deps.portfolios().portfolio(portfolioId);
    const portfolio = live ?? (await pruned(portfolioId));
    if (portfolio === undefined || !principal.accountIds.has(portfolio.spec.accountId)) {
      throw notFound(portfolioId);
    }
    return { portfolio, live: live !== undefined };
  };

  registrar.registerFlatRoute({
    method: 'POST',
    url: `${PORTFOLIO_BASE_PATH}/submit`,
    value: SubmitPortfolioValue,
    body: SubmitPortfolioBody,
    handlerValidates: true,
    summary: 'Submit a BALANCE, TWAP, COMMON or ICEBERG portfolio (flat body of spec 2.1).',
    matching: true,
    roles: TRADE,
    handler: async ({ body, principal }) => {
      const portfolio = validatePortfolioBody(body, {
        accountIds: principal.accountIds,
        instrument: (name) => deps.instrument(name),
        now: deps.now(),
      });
      await listCommonCombo(deps, portfolio);
      const value = await run(deps, { type: 'submit_portfolio', portfolio });
      if (value.kind !== 'submitted') throw new VenueError('internal_error');
      return { portfolioId: value.portfolioId };
    },
  });

  registrar.registerFlatRoute({
    method: 'GET',
    url: `${PORTFOLIO_BASE_PATH}/info`,
    value: PortfolioInfoValue,
    query: PortfolioInfoQuery,
    handlerValidates: true,
    summary: 'A portfolio: status, per-leg progress, slippage, parts and child orders.',
    handler: async ({ query, principal }) => {
      const portfolioId = id((query as Json).portfolioId, 'portfolioId', true)!;
      const { portfolio } = await visible(principal, portfolioId);
      return portfolioInfoToWire(portfolio, (name) => deps.instrument(name));
    },
  });

  registrar.registerFlatRoute({
    method: 'POST',
    url: `${PORTFOLIO_BASE_PATH}/cancel`,
    value: CancelPortfolioValue,
    body: CancelPortfolioBody,
    handlerValidates: true,
    summary: 'Cancel a portfolio: CANCELLING at once, then CANCELLED when every child order is gone.',
    matching: true,
    roles: TRADE,
    handler: async ({ body, principal }) => {
      const input = asObject(body);
      const portfolioId = id(input.portfolioId, 'portfolioId', true)!;
      const accountId = id(input.accountId, 'accountId', false);
      if (accountId !== null) ownAccount(principal, accountId, 'accountId');
      const { portfolio, live } = await visible(principal, portfolioId);
      if (accountId !== null) {
        const linked = portfolio.linkedTo;
        const original =
          linked === null ? undefined : (deps.portfolios().portfolio(linked) ?? (await pruned(linked)));
        checkCancelAccount(portfolio, accountId, original);
      }
      if (!live) {
        // Pruned only once finished, with its whole group: refused as the core refused it then.
        throw new VenueError('portfolio_not_active', `portfolio ${portfolioId} is ${portfolio.status}`, {
          field: 'portfolioId',
        });
      }
      await run(deps, { type: 'cancel_portfolio', portfolioId, accountId: portfolio.spec.accountId });
      return null;
    },
  });

  registrar.registerFlatRoute({
    method: 'POST',
    url: `${PORTFOLIO_BASE_PATH}/cancel-all`,
    value: CancelAllPortfoliosValue,
    body: CancelAllPortfoliosBody,
    handlerValidates: true,
    summary: 'Cancel every active portfolio of an account (optionally of one portfolioType).',
    matching: true,
    roles: TRADE,
    handler: async ({ body, principal }) => {
      const input = asObject(body);
      const accountId = id(input.accountId, 'accountId', true)!;
      ownAccount(principal, accountId, 'accountId');
      let portfolioType: PortfolioType | null = null;
      if (input.portfolioType !== undefined && input.portfolioType !== null) {
        if (!TYPES.includes(input.portfolioType as PortfolioType)) {
          throw new VenueError('invalid_params', `portfolioType must be one of ${TYPES.join(', ')}`, {
            field: 'portfolioType',
          });
        }
        portfolioType = input.portfolioType as PortfolioType;
      }
      const value = await run(deps, { type: 'cancel_all_portfolios', accountId, portfolioType });
      return { portfolioIds: value.kind === 'cancelled' ? value.portfolioIds : [] };
    },
  });
}

/** What the composition root has: the core service (submitMachine, now, reads, machine). */
export interface PortfolioHost {
  submitMachine(command: UnstampedAlgoCommand): Promise<Pick<MachineResult, 'result'>>;
  now(): number;
  instrument(name: string): Instrument | undefined;
  readonly machine: { sub<T>(name: string): T };
}

/** Route deps over the core service; the algorithm layer is the `portfolios` sub-machine. */
export function portfolioRouteDeps(
  host: PortfolioHost,
  subMachineName = 'portfolios',
  archive?: PortfolioArchive,
): PortfolioRouteDeps {
  return {
    submitMachine: (command) => host.submitMachine(command),
    now: () => host.now(),
    instrument: (name) => host.instrument(name),
    portfolios: () => host.machine.sub<PortfolioMachine>(subMachineName),
    ...(archive === undefined ? {} : { archive }),
  };
}
