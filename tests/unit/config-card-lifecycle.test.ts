import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';
import { ConfigError } from '@/lib/errors';
import { handledEventTypes } from '@/lib/card-payments/apply-event';

const DELAYED_WARNING = /STRIPE_PAYMENT_METHODS=automatic without async/;

describe('CARD_LIFECYCLE_EVENTS', () => {
  it('is empty by default: only the spec\'s two event types change orders', () => {
    const config = parseConfig({ NODE_ENV: 'test' });
    expect([...config.lifecycleEvents]).toEqual([]);
    expect(handledEventTypes(config)).toEqual(['payment_intent.succeeded', 'payment_intent.payment_failed']);
  });

  it('reads a comma-separated list in any case and spacing, each word once', () => {
    const config = parseConfig({ NODE_ENV: 'test', CARD_LIFECYCLE_EVENTS: ' Refunds, disputes ,refunds' });
    expect([...config.lifecycleEvents]).toEqual(['refunds', 'disputes']);
    // Reconciliation asks the provider for exactly the enabled types.
    expect(handledEventTypes(config)).toEqual([
      'payment_intent.succeeded',
      'payment_intent.payment_failed',
      'charge.refunded',
      'charge.refund.updated',
      'refund.updated',
      'charge.dispute.created',
      'charge.dispute.closed',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.funds_reinstated',
    ]);
  });

  it('reviews adds the Radar review and early fraud warning types, for the webhook and for reconciliation', () => {
    const config = parseConfig({ NODE_ENV: 'test', CARD_LIFECYCLE_EVENTS: 'reviews' });
    expect(handledEventTypes(config)).toEqual([
      'payment_intent.succeeded',
      'payment_intent.payment_failed',
      'review.opened',
      'review.closed',
      'radar.early_fraud_warning.created',
    ]);
  });

  it('refuses an unknown word at start, naming the variable and not its value', () => {
    const parse = () => parseConfig({ NODE_ENV: 'test', CARD_LIFECYCLE_EVENTS: 'refunds,chargebacks-secret' });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow('CARD_LIFECYCLE_EVENTS must be a comma-separated list of refunds, disputes, async, reviews (or empty)');
    expect(parse).not.toThrow(/chargebacks-secret/);
  });
});

describe('STRIPE_PAYMENT_METHODS', () => {
  const methods = (value?: string) =>
    parseConfig({ NODE_ENV: 'test', STRIPE_SECRET_KEY: 'sk_test_methods', ...(value === undefined ? {} : { STRIPE_PAYMENT_METHODS: value }) }).card
      ?.paymentMethods;

  it('defaults to card, so the "Credit Card" title stays true', () => {
    expect(methods()).toEqual(['card']);
  });

  it('takes an explicit list of payment method types', () => {
    expect(methods('card, link')).toEqual(['card', 'link']);
  });

  it('takes automatic alone, and refuses it mixed with types or anything not an identifier', () => {
    expect(methods('automatic')).toBe('automatic');
    for (const bad of ['automatic,card', 'card;drop', 'Card Payments']) {
      expect(() => parseConfig({ NODE_ENV: 'test', STRIPE_PAYMENT_METHODS: bad })).toThrow(/STRIPE_PAYMENT_METHODS must be "automatic" or a comma-separated list/);
    }
  });

  it('warns at start when automatic may bring delayed methods without async', () => {
    expect(parseConfig({ NODE_ENV: 'test', STRIPE_PAYMENT_METHODS: 'automatic' }).warnings.join('\n')).toMatch(DELAYED_WARNING);
    const withAsync = parseConfig({ NODE_ENV: 'test', STRIPE_PAYMENT_METHODS: 'automatic', CARD_LIFECYCLE_EVENTS: 'async' });
    expect(withAsync.warnings.join('\n')).not.toMatch(DELAYED_WARNING);
    expect(parseConfig({ NODE_ENV: 'test' }).warnings.join('\n')).not.toMatch(DELAYED_WARNING);
  });
});
