/** CUSTOMER_MESSAGES: where the service's messages to the customer go (docs/decisions.md, "Customer messages"). */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';
import { COMPLETE_PRODUCTION_ENV } from '../support/production-env';

describe('CUSTOMER_MESSAGES', () => {
  it("defaults to the contract's customer_note, unset or empty", () => {
    expect(parseConfig(COMPLETE_PRODUCTION_ENV).customerMessages).toBe('customer_note');
    expect(parseConfig({ ...COMPLETE_PRODUCTION_ENV, CUSTOMER_MESSAGES: '' }).customerMessages).toBe('customer_note');
  });

  it('takes order_notes', () => {
    expect(parseConfig({ ...COMPLETE_PRODUCTION_ENV, CUSTOMER_MESSAGES: 'order_notes' }).customerMessages).toBe('order_notes');
  });

  it('refuses another value by name, without echoing it', () => {
    const parse = () => parseConfig({ ...COMPLETE_PRODUCTION_ENV, CUSTOMER_MESSAGES: 'email-secret-ish' });
    expect(parse).toThrow('CUSTOMER_MESSAGES must be customer_note or order_notes (or unset)');
    expect(parse).not.toThrow(/email-secret-ish/);
  });
});
