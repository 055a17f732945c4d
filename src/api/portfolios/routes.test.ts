import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { COMBO, comboInstruments, LONG_LEG, SHORT_LEG } from '../../../test/support/combo-trade.ts';
import type { PortfolioState } from '../../algo/portfolio-state.ts';
import type { UnstampedAlgoCommand } from '../../algo/types.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { Principal } from '../auth/authenticator.ts';
import type { FlatRouteDefinition } from '../http-routes.ts';
import type { ComboPort } from '../ports.ts';
import { PORTFOLIO_BASE_PATH, registerPortfolioRoutes } from './routes.ts';

const ACCOUNT = 7;
const principal = { accountIds: new Set([ACCOUNT]) } as unknown as Principal;

/** The submit route over fakes: instruments by name, a combo port, a recording core. */
function submitRoute(listed: Map<string, Instrument>, combos: ComboPort | undefined) {
  const steps: string[] = [];
  const routes: FlatRouteDefinition[] = [];
  registerPortfolioRoutes(
    { registerFlatRoute: (route) => routes.push(route as FlatRouteDefinition) },
    {
      submitMachine: async (command: UnstampedAlgoCommand) => {
        steps.push(`submit ${command.type}`);
        const value = { kind: 'submitted', portfolioId: 1, mirrorPortfolioIds: [] };
        return { result: { ok: true as const, value, events: [] } };
      },
      now: () => Date.UTC(2026, 10, 20),
      instrument: (name) => listed.get(name),
      portfolios: () => ({ portfolio: () => undefined }),
      ...(combos === undefined ? {} : { combos }),
    },
  );
  const route = routes.find((r) => r.url === `${PORTFOLIO_BASE_PATH}/submit`)!;
  const submit = (body: unknown) => route.handler({ body, query: undefined, principal });
  return { steps, submit };
}

const optionLeg = (instrument: string, side: 1 | 2, quantity = '1') => ({
  instrument,
  instrumentType: 'OPTION',
  side,
  quantity,
  priceOptions: { priceType: 'LIMIT', price: 0.03, priceIn: 'BTC' },
});

const spread = (quantity = '1') => ({
  accountId: ACCOUNT,
  portfolioType: 'COMMON',
  legs: [optionLeg(LONG_LEG, 1), optionLeg(SHORT_LEG, 2, quantity)],
});

function legsOnly(): Map<string, Instrument> {
  const all = comboInstruments();
  all.delete(COMBO);
  return all;
}

describe('portfolio submit lists the combo a COMMON portfolio forms', () => {
  test('the combo is listed before the submit is journaled', async () => {
    const listed = legsOnly();
    const { steps, submit } = submitRoute(listed, {
      list: async (name) => {
        steps.push(`list ${name}`);
        listed.set(name, comboInstruments().get(COMBO)!);
      },
    });
    assert.deepEqual(await submit(spread()), { portfolioId: 1 });
    assert.deepEqual(steps, [`list ${COMBO}`, 'submit submit_portfolio']);
    // Listed now: not listed again.
    steps.length = 0;
    await submit(spread());
    assert.deepEqual(steps, ['submit submit_portfolio']);
  });

  test('a listing that fails is harmless: the portfolio is submitted (its legs go one order each)', async () => {
    const { steps, submit } = submitRoute(legsOnly(), {
      list: async (name) => {
        steps.push(`list ${name}`);
        throw new Error('no market');
      },
    });
    assert.deepEqual(await submit(spread()), { portfolioId: 1 });
    assert.deepEqual(steps, [`list ${COMBO}`, 'submit submit_portfolio']);
  });

  test('legs that form no combo, or no combo port: nothing is listed', async () => {
    const calls: string[] = [];
    const { steps, submit } = submitRoute(legsOnly(), { list: async (name) => void calls.push(name) });
    await submit(spread('2'));
    assert.deepEqual(calls, []);
    assert.deepEqual(steps, ['submit submit_portfolio']);
    const without = submitRoute(legsOnly(), undefined);
    assert.deepEqual(await without.submit(spread()), { portfolioId: 1 });
  });
});

/**
 * The info, cancel and cancel-all routes over fakes: portfolio 1 is live on the key's account 7
 * (the key also owns account 8); every command the core would run is recorded.
 */
function portfolioRoutes() {
  const commands: UnstampedAlgoCommand[] = [];
  const routes: FlatRouteDefinition[] = [];
  const live = {
    id: 1,
    spec: { accountId: ACCOUNT },
    linkedTo: null,
    status: 'WORKING',
  } as unknown as PortfolioState;
  registerPortfolioRoutes(
    { registerFlatRoute: (route) => routes.push(route as FlatRouteDefinition) },
    {
      submitMachine: async (command: UnstampedAlgoCommand) => {
        commands.push(command);
        const value = {
          kind: 'cancelled' as const,
          portfolioIds: command.type === 'cancel_all_portfolios' ? [1] : [],
        };
        return { result: { ok: true as const, value, events: [] } };
      },
      now: () => Date.UTC(2026, 10, 20),
      instrument: () => undefined,
      portfolios: () => ({ portfolio: (id: number) => (id === 1 ? live : undefined) }),
    },
  );
  const keyOf = { accountIds: new Set([ACCOUNT, 8]) } as unknown as Principal;
  /** The answer, or the refusal's error name and data.field. */
  const call = async (path: 'info' | 'cancel' | 'cancel-all', input: unknown) => {
    const route = routes.find((r) => r.url === `${PORTFOLIO_BASE_PATH}/${path}`)!;
    const get = path === 'info';
    try {
      return {
        value: await route.handler({
          body: get ? undefined : input,
          query: get ? input : undefined,
          principal: keyOf,
        }),
      };
    } catch (error) {
      assert.ok(error instanceof VenueError, `a VenueError, not ${String(error)}`);
      return { refused: error.errorName, field: error.data?.field };
    }
  };
  return { commands, call };
}

describe('portfolio info, cancel and cancel-all check ids and accounts before the core runs anything', () => {
  const FOREIGN = 99;

  test("cancel-all of another user's account is account_not_owned naming accountId; nothing is cancelled", async () => {
    const { commands, call } = portfolioRoutes();
    assert.deepEqual(await call('cancel-all', { accountId: FOREIGN }), {
      refused: 'account_not_owned',
      field: 'accountId',
    });
    assert.deepEqual(await call('cancel-all', { accountId: FOREIGN, portfolioType: 'TWAP' }), {
      refused: 'account_not_owned',
      field: 'accountId',
    });
    assert.deepEqual(commands, [], 'no cancel reached the core');
    // The key's own account goes through.
    assert.deepEqual(await call('cancel-all', { accountId: ACCOUNT }), { value: { portfolioIds: [1] } });
    assert.deepEqual(commands, [{ type: 'cancel_all_portfolios', accountId: ACCOUNT, portfolioType: null }]);
  });

  test("cancel naming another user's account is account_not_owned naming accountId, whatever the portfolio", async () => {
    const { commands, call } = portfolioRoutes();
    const notOwned = { refused: 'account_not_owned', field: 'accountId' };
    assert.deepEqual(await call('cancel', { portfolioId: 1, accountId: FOREIGN }), notOwned, 'own portfolio');
    assert.deepEqual(
      await call('cancel', { portfolioId: 2, accountId: FOREIGN }),
      notOwned,
      'unknown portfolio',
    );
    // Another account of the key itself is a wrong account, not a foreign one.
    assert.deepEqual(await call('cancel', { portfolioId: 1, accountId: 8 }), {
      refused: 'invalid_params',
      field: 'accountId',
    });
    assert.deepEqual(commands, [], 'no cancel reached the core');
    assert.deepEqual(await call('cancel', { portfolioId: 1, accountId: ACCOUNT }), { value: null });
    assert.deepEqual(commands, [{ type: 'cancel_portfolio', portfolioId: 1, accountId: ACCOUNT }]);
  });

  test('an id of 0 is invalid_params naming its field, on info, cancel and cancel-all', async () => {
    const { commands, call } = portfolioRoutes();
    const zero = (field: string) => ({ refused: 'invalid_params', field });
    assert.deepEqual(await call('info', { portfolioId: '0' }), zero('portfolioId'), 'info');
    assert.deepEqual(await call('cancel', { portfolioId: 0 }), zero('portfolioId'), 'cancel');
    assert.deepEqual(
      await call('cancel', { portfolioId: 1, accountId: 0 }),
      zero('accountId'),
      'cancel accountId',
    );
    assert.deepEqual(await call('cancel-all', { accountId: 0 }), zero('accountId'), 'cancel-all');
    assert.deepEqual(commands, [], 'nothing reached the core');
  });
});

describe('cancel-all passes its portfolioType; info and cancel of a portfolio the key cannot see name portfolioId', () => {
  test('cancel-all with a portfolioType cancels that type only; an unknown type is invalid_params naming portfolioType', async () => {
    const { commands, call } = portfolioRoutes();
    assert.deepEqual(await call('cancel-all', { accountId: ACCOUNT, portfolioType: 'TWAP' }), {
      value: { portfolioIds: [1] },
    });
    assert.deepEqual(commands, [
      { type: 'cancel_all_portfolios', accountId: ACCOUNT, portfolioType: 'TWAP' },
    ]);
    commands.length = 0;
    for (const portfolioType of ['twap', 'LIMIT', 1, '']) {
      assert.deepEqual(
        await call('cancel-all', { accountId: ACCOUNT, portfolioType }),
        { refused: 'invalid_params', field: 'portfolioType' },
        String(portfolioType),
      );
    }
    assert.deepEqual(commands, [], 'nothing reached the core');
  });

  test('an unknown portfolio is portfolio_not_found naming portfolioId, on info and cancel', async () => {
    const { commands, call } = portfolioRoutes();
    const notFound = { refused: 'portfolio_not_found', field: 'portfolioId' };
    assert.deepEqual(await call('info', { portfolioId: '2' }), notFound, 'info');
    assert.deepEqual(await call('cancel', { portfolioId: 2 }), notFound, 'cancel');
    assert.deepEqual(
      await call('cancel', { portfolioId: 2, accountId: ACCOUNT }),
      notFound,
      'cancel with accountId',
    );
    assert.deepEqual(commands, [], 'nothing reached the core');
  });
});

describe('ids: a missing one is value_required, a fraction or an unsafe integer is invalid_params', () => {
  test('info, cancel and cancel-all', async () => {
    const { commands, call } = portfolioRoutes();
    const refused = (name: string, field: string) => ({ refused: name, field });
    assert.deepEqual(await call('info', {}), refused('value_required', 'portfolioId'), 'info without id');
    assert.deepEqual(await call('cancel', {}), refused('value_required', 'portfolioId'), 'cancel without id');
    assert.deepEqual(await call('cancel-all', {}), refused('value_required', 'accountId'), 'cancel-all');
    for (const bad of [1.5, 2 ** 53, Number.MAX_VALUE]) {
      assert.deepEqual(
        await call('cancel', { portfolioId: bad }),
        refused('invalid_params', 'portfolioId'),
        `${bad}`,
      );
      assert.deepEqual(
        await call('cancel', { portfolioId: 1, accountId: ACCOUNT + 0.5 }),
        refused('invalid_params', 'accountId'),
      );
      assert.deepEqual(
        await call('cancel-all', { accountId: bad }),
        refused('invalid_params', 'accountId'),
        `${bad}`,
      );
    }
    assert.deepEqual(commands, [], 'nothing reached the core');
  });
});
