import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VenueError } from '../../domain/errors.ts';
import { Instrument } from '../../domain/instrument.ts';
import { buildCatalogue } from '../../market/catalogue.ts';
import { toEditOrder, toPlaceOrder } from './order-params.ts';

const specs = buildCatalogue(Date.UTC(2026, 10, 20, 12), { BTC: 60_000, ETH: 3_000 });
const perp = new Instrument(1, specs.find((spec) => spec.name === 'BTC-PERPETUAL')!);

function refusal(fn: () => unknown): { name: string; field: unknown } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof VenueError, String(error));
    return { name: error.errorName, field: error.data?.field };
  }
  assert.fail('expected a refusal');
}

describe('toPlaceOrder', () => {
  test('defaults: limit, good_til_cancelled, api source, empty label', () => {
    const command = toPlaceOrder(
      { instrumentName: perp.name, quantity: '20', price: '60000.5' },
      'buy',
      7,
      perp,
    );
    assert.equal(command.orderType, 'limit');
    assert.equal(command.timeInForce, 'good_til_cancelled');
    assert.equal(command.amount, 2);
    assert.equal(command.price, perp.parsePrice('60000.5'));
    assert.equal(command.accountId, 7);
    assert.deepEqual(command.source, { api: true });
    assert.equal(command.label, '');
  });

  test('market orders carry no price; limit orders need one', () => {
    assert.equal(
      toPlaceOrder({ instrumentName: perp.name, quantity: '10', type: 'market' }, 'sell', 1, perp).price,
      null,
    );
    assert.deepEqual(
      refusal(() => toPlaceOrder({ instrumentName: perp.name, quantity: '10' }, 'sell', 1, perp)),
      {
        name: 'missing_params',
        field: 'price',
      },
    );
  });

  test('post-only rules and trigger requirements name their fields', () => {
    const base = { instrumentName: perp.name, quantity: '10', price: '60000' };
    assert.equal(
      refusal(() => toPlaceOrder({ ...base, rejectPostOnly: true }, 'buy', 1, perp)).field,
      'rejectPostOnly',
    );
    assert.deepEqual(
      refusal(() =>
        toPlaceOrder({ ...base, postOnly: true, timeInForce: 'immediate_or_cancel' }, 'buy', 1, perp),
      ),
      { name: 'post_only_not_allowed', field: 'postOnly' },
    );
    assert.equal(
      refusal(() => toPlaceOrder({ ...base, type: 'stop_limit' }, 'buy', 1, perp)).field,
      'trigger',
    );
    assert.equal(
      refusal(() => toPlaceOrder({ ...base, price: null, type: 'market', mmp: true }, 'buy', 1, perp)).field,
      'mmp',
    );
  });

  test('displayAmount: at least 100 lots, and the hidden part below 100 × the display', () => {
    const base = { instrumentName: perp.name, price: '60000' };
    assert.equal(
      refusal(() => toPlaceOrder({ ...base, quantity: '10000', displayAmount: '990' }, 'buy', 1, perp)).name,
      'invalid_max_show_amount',
    );
    assert.equal(
      refusal(() => toPlaceOrder({ ...base, quantity: '101000', displayAmount: '1000' }, 'buy', 1, perp))
        .name,
      'invalid_max_show_amount',
    );
    assert.equal(
      toPlaceOrder({ ...base, quantity: '100990', displayAmount: '1000' }, 'buy', 1, perp).displayAmount,
      100,
    );
  });

  test('otocoConfig entries are parsed with indexed field names', () => {
    const command = toPlaceOrder(
      {
        instrumentName: perp.name,
        quantity: '10',
        price: '60000',
        linkedOrderType: 'one_triggers_other',
        otocoConfig: [{ side: 'sell', quantity: '10', price: '65000', timeInForce: 'good_til_day' }],
      },
      'buy',
      1,
      perp,
    );
    assert.equal(command.otocoConfig?.[0]?.amount, 1);
    assert.equal(command.otocoConfig?.[0]?.timeInForce, 'good_til_day');
    assert.equal(
      refusal(() =>
        toPlaceOrder(
          {
            instrumentName: perp.name,
            quantity: '10',
            price: '60000',
            otocoConfig: [{ side: 'sell', price: '65000.3' }],
          },
          'buy',
          1,
          perp,
        ),
      ).field,
      'otocoConfig[0].price',
    );
    const disagreeing = refusal(() =>
      toPlaceOrder(
        {
          instrumentName: perp.name,
          quantity: '10',
          price: '60000',
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', timeInforce: 'good_til_day', timeInForce: 'good_til_cancelled' }],
        },
        'buy',
        1,
        perp,
      ),
    );
    assert.deepEqual(disagreeing, { name: 'invalid_params', field: 'otocoConfig[0].timeInForce' });
  });

  test('an advanced price has at most 9 digits and 6 decimals, so it prints back as the decimal sent', () => {
    const option = new Instrument(
      2,
      specs.find((spec) => spec.kind === 'option' && spec.settlementCurrency === 'BTC')!,
    );
    const place = (price: string) =>
      toPlaceOrder({ instrumentName: option.name, quantity: '1', price, advanced: 'usd' }, 'buy', 1, option);
    assert.equal(place('12.345678').advancedValue, 12.345678);
    assert.equal(String(place('0.000001').advancedValue), '0.000001');
    assert.equal(String(place('999999999.999999').advancedValue), '999999999.999999');
    for (const price of ['0.00000000000000000001', '1234567890', '999999999999.999999', '0', '1e3'])
      assert.deepEqual(
        refusal(() => place(price)),
        { name: 'invalid_price', field: 'price' },
        price,
      );
  });

  test('mmp is refused on every non-limit type, not only market, naming mmp', () => {
    const base = { instrumentName: perp.name, quantity: '10', price: '60000' };
    for (const type of ['stop_limit', 'market_limit'] as const)
      assert.deepEqual(
        refusal(() =>
          toPlaceOrder(
            {
              ...base,
              price: type === 'market_limit' ? null : base.price,
              type,
              mmp: true,
              trigger: 'last_price',
              triggerPrice: '61000',
            },
            'buy',
            1,
            perp,
          ),
        ),
        { name: 'invalid_params', field: 'mmp' },
        type,
      );
  });

  test('a trigger order needs trigger even when triggerPrice is given, naming trigger', () => {
    assert.deepEqual(
      refusal(() =>
        toPlaceOrder(
          {
            instrumentName: perp.name,
            quantity: '10',
            price: '60000',
            type: 'stop_limit',
            triggerPrice: '61000',
          },
          'buy',
          1,
          perp,
        ),
      ),
      { name: 'missing_params', field: 'trigger' },
    );
  });

  test('reduceOnly is carried to the command, false when omitted', () => {
    const base = { instrumentName: perp.name, quantity: '10', price: '60000' };
    assert.equal(toPlaceOrder({ ...base, reduceOnly: true }, 'sell', 1, perp).reduceOnly, true);
    assert.equal(toPlaceOrder(base, 'sell', 1, perp).reduceOnly, false);
  });

  test('an off-tick triggerOffset is refused naming triggerOffset', () => {
    assert.equal(
      refusal(() =>
        toPlaceOrder(
          {
            instrumentName: perp.name,
            quantity: '10',
            type: 'trailing_stop',
            trigger: 'last_price',
            triggerOffset: '100.3',
          },
          'buy',
          1,
          perp,
        ),
      ).field,
      'triggerOffset',
    );
  });

  test('price on a market type is refused naming price (spec 4.3: for limit and stop_limit)', () => {
    const trigger = { trigger: 'last_price' as const };
    for (const [type, more] of [
      ['market', {}],
      ['market_limit', {}],
      ['stop_market', { ...trigger, triggerPrice: '61000' }],
      ['take_market', { ...trigger, triggerPrice: '59000' }],
      ['trailing_stop', { ...trigger, triggerOffset: '100' }],
    ] as const) {
      const params = { instrumentName: perp.name, quantity: '10', type, ...more };
      assert.deepEqual(
        refusal(() => toPlaceOrder({ ...params, price: '60000.5' }, 'buy', 1, perp)),
        { name: 'unsupported_arg_combination', field: 'price' },
        type,
      );
      assert.equal(toPlaceOrder(params, 'buy', 1, perp).price, null, type);
    }
    // The same in an otocoConfig entry, named there.
    const linked = {
      instrumentName: perp.name,
      quantity: '10',
      price: '60000',
      linkedOrderType: 'one_triggers_other' as const,
    };
    assert.deepEqual(
      refusal(() =>
        toPlaceOrder(
          {
            ...linked,
            otocoConfig: [{ side: 'sell', type: 'stop_market', price: '1', trigger: 'last_price' }],
          },
          'buy',
          1,
          perp,
        ),
      ),
      { name: 'unsupported_arg_combination', field: 'otocoConfig[0].price' },
    );
    assert.ok(
      toPlaceOrder(
        { ...linked, otocoConfig: [{ side: 'sell', type: 'stop_limit', price: '59000' }] },
        'buy',
        1,
        perp,
      ),
    );
  });

  test('contracts beyond the safe integer range are out of range, naming contracts', () => {
    assert.deepEqual(
      refusal(() =>
        toPlaceOrder(
          { instrumentName: perp.name, contracts: '99999999999999999999', type: 'market' },
          'buy',
          1,
          perp,
        ),
      ),
      { name: 'invalid_params', field: 'contracts' },
    );
  });
});

describe('quantity and contracts together', () => {
  test('when they disagree the refusal says what the contracts come to, naming contracts', () => {
    // BTC-PERPETUAL: a contract is 10 USD.
    try {
      toPlaceOrder(
        { instrumentName: perp.name, quantity: '20', contracts: '3', type: 'market' },
        'buy',
        1,
        perp,
      );
      assert.fail('expected a refusal');
    } catch (error) {
      assert.ok(error instanceof VenueError, String(error));
      assert.equal(error.errorName, 'invalid_params');
      assert.equal(error.message, 'contracts 3 is 30 in quantity, not 20');
      assert.deepEqual(error.data, { field: 'contracts', quantityFromContracts: '30' });
    }
    const agreeing = toPlaceOrder(
      { instrumentName: perp.name, quantity: '30', contracts: '3', type: 'market' },
      'buy',
      1,
      perp,
    );
    assert.equal(agreeing.amount, 3);
  });
});

describe('toEditOrder', () => {
  test('quantity or contracts is required; omitted fields stay omitted', () => {
    assert.equal(refusal(() => toEditOrder({ orderId: 'x' }, 1, perp)).field, 'quantity');
    const command = toEditOrder({ orderId: 'x', contracts: '3' }, 1, perp);
    assert.deepEqual(command, { type: 'edit_order', accountId: 1, orderId: 'x', amount: 3 });
    assert.equal(
      toEditOrder({ orderId: 'x', quantity: '10', displayAmount: 1000 }, 1, perp).displayAmount,
      100,
    );
  });

  test('price in an edit of an order type that takes none is refused naming price', () => {
    const params = { orderId: 'x', quantity: '10', price: '50000' };
    for (const type of ['stop_market', 'take_market', 'trailing_stop', 'market'] as const)
      assert.deepEqual(
        refusal(() => toEditOrder(params, 1, perp, type)),
        { name: 'unsupported_arg_combination', field: 'price' },
        type,
      );
    for (const type of ['limit', 'stop_limit', 'take_limit'] as const)
      assert.equal(toEditOrder(params, 1, perp, type).price, perp.parsePrice('50000'), type);
    // Without a price the edit of a stop_market goes through (quantity, triggerPrice).
    assert.equal(toEditOrder({ orderId: 'x', quantity: '10' }, 1, perp, 'stop_market').amount, 1);
  });
});

describe('what a command must refuse or carry', () => {
  const option = new Instrument(
    2,
    specs.find((spec) => spec.kind === 'option' && spec.settlementCurrency === 'BTC')!,
  );
  const base = { instrumentName: perp.name, quantity: '10', price: '60000' };

  test('an advanced price with a 7th decimal is refused naming price', () => {
    assert.deepEqual(
      refusal(() =>
        toPlaceOrder(
          { instrumentName: option.name, quantity: '1', price: '1.0000001', advanced: 'usd' },
          'buy',
          1,
          option,
        ),
      ),
      { name: 'invalid_price', field: 'price' },
    );
  });

  test('an advanced order without a price is missing_params naming price, on place and on edit', () => {
    assert.deepEqual(
      refusal(() =>
        toPlaceOrder({ instrumentName: option.name, quantity: '1', advanced: 'implv' }, 'buy', 1, option),
      ),
      { name: 'missing_params', field: 'price' },
    );
    assert.deepEqual(
      refusal(() => toEditOrder({ orderId: 'x', quantity: '1', advanced: 'implv' }, 1, option)),
      { name: 'missing_params', field: 'price' },
    );
  });

  test('every limit-style type needs a price', () => {
    for (const type of ['limit', 'stop_limit', 'take_limit'] as const)
      assert.deepEqual(
        refusal(() =>
          toPlaceOrder(
            { instrumentName: perp.name, quantity: '10', type, trigger: 'last_price', triggerPrice: '61000' },
            'buy',
            1,
            perp,
          ),
        ),
        { name: 'missing_params', field: 'price' },
        type,
      );
  });

  test('advanced is refused on a future naming advanced, on place and on edit', () => {
    assert.deepEqual(
      refusal(() => toPlaceOrder({ ...base, advanced: 'usd' }, 'buy', 1, perp)),
      {
        name: 'no_adv_for_futures',
        field: 'advanced',
      },
    );
    assert.deepEqual(
      refusal(() => toEditOrder({ orderId: 'x', quantity: '10', price: '60000', advanced: 'usd' }, 1, perp)),
      { name: 'no_adv_for_futures', field: 'advanced' },
    );
  });

  test('postOnly is refused with every time in force but good_til_cancelled', () => {
    for (const timeInForce of ['good_til_day', 'fill_or_kill', 'immediate_or_cancel'] as const)
      assert.deepEqual(
        refusal(() => toPlaceOrder({ ...base, postOnly: true, timeInForce }, 'buy', 1, perp)),
        { name: 'post_only_not_allowed', field: 'postOnly' },
        timeInForce,
      );
  });

  test('every trigger type needs trigger, naming trigger', () => {
    for (const type of ['stop_limit', 'stop_market', 'take_limit', 'take_market', 'trailing_stop'] as const)
      assert.deepEqual(
        refusal(() =>
          toPlaceOrder(
            {
              ...base,
              price: type.endsWith('_limit') ? base.price : null,
              type,
              triggerPrice: '61000',
              triggerOffset: '100',
            },
            'sell',
            1,
            perp,
          ),
        ),
        { name: 'missing_params', field: 'trigger' },
        type,
      );
  });

  test('an off-tick triggerPrice is refused naming triggerPrice: on place, on edit, in otocoConfig', () => {
    assert.equal(
      refusal(() =>
        toPlaceOrder(
          { ...base, type: 'stop_limit', trigger: 'last_price', triggerPrice: '61000.3' },
          'buy',
          1,
          perp,
        ),
      ).field,
      'triggerPrice',
    );
    assert.equal(
      refusal(() => toEditOrder({ orderId: 'x', quantity: '10', triggerPrice: '61000.3' }, 1, perp)).field,
      'triggerPrice',
    );
    assert.equal(
      refusal(() =>
        toPlaceOrder(
          {
            ...base,
            linkedOrderType: 'one_triggers_other',
            otocoConfig: [
              { side: 'sell', type: 'stop_market', trigger: 'last_price', triggerPrice: '59000.3' },
            ],
          },
          'buy',
          1,
          perp,
        ),
      ).field,
      'otocoConfig[0].triggerPrice',
    );
  });

  test('an edit with rejectPostOnly and postOnly false is refused naming rejectPostOnly', () => {
    assert.deepEqual(
      refusal(() =>
        toEditOrder({ orderId: 'x', quantity: '10', rejectPostOnly: true, postOnly: false }, 1, perp),
      ),
      { name: 'invalid_params', field: 'rejectPostOnly' },
    );
  });

  test('no given field is dropped: triggerFillCondition, otoco flags and label, edit flags', () => {
    const placed = toPlaceOrder(
      {
        ...base,
        linkedOrderType: 'one_triggers_other',
        triggerFillCondition: 'complete_fill',
        otocoConfig: [
          {
            side: 'sell',
            price: '65000',
            reduceOnly: true,
            postOnly: true,
            rejectPostOnly: true,
            label: 'tp',
          },
        ],
      },
      'buy',
      1,
      perp,
    );
    assert.equal(placed.triggerFillCondition, 'complete_fill');
    const entry = placed.otocoConfig?.[0];
    assert.deepEqual(
      {
        reduceOnly: entry?.reduceOnly,
        postOnly: entry?.postOnly,
        rejectPostOnly: entry?.rejectPostOnly,
        label: entry?.label,
      },
      { reduceOnly: true, postOnly: true, rejectPostOnly: true, label: 'tp' },
    );
    for (const flag of [true, false]) {
      const edited = toEditOrder(
        { orderId: 'x', quantity: '10', reduceOnly: flag, mmp: flag, postOnly: flag },
        1,
        perp,
      );
      assert.deepEqual(
        { reduceOnly: edited.reduceOnly, mmp: edited.mmp, postOnly: edited.postOnly },
        { reduceOnly: flag, mmp: flag, postOnly: flag },
      );
    }
  });
});
