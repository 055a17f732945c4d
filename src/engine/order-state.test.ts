import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canTransition, isClosedState, transition } from './order-state.ts';

test('order state table: open orders fill, cancel and get edited', () => {
  assert.equal(transition('open', 'fill_partial'), 'open');
  assert.equal(transition('open', 'fill_complete'), 'filled');
  assert.equal(transition('open', 'cancel'), 'cancelled');
  assert.equal(transition('open', 'edit'), 'open');
  assert.equal(transition('untriggered', 'trigger'), 'open');
});

test('closed states are final', () => {
  for (const state of ['filled', 'cancelled', 'rejected'] as const) {
    assert.ok(isClosedState(state));
    for (const event of ['fill_partial', 'fill_complete', 'cancel', 'edit', 'trigger', 'reject'] as const) {
      assert.equal(canTransition(state, event), false);
      assert.throws(() => transition(state, event));
    }
  }
  assert.equal(canTransition('untriggered', 'fill_partial'), false);
});
