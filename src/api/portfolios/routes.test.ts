import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { COMBO, comboInstruments, LONG_LEG, SHORT_LEG } from '../../../test/support/combo-trade.ts';
import type { UnstampedAlgoCommand } from '../../algo/types.ts';
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
