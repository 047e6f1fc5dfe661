import { describe, expect, it } from 'vitest';
import { MoneyError } from '@/lib/errors';
import { chargeableAmount, currencyExponent, formatMinorUnits, toMinorUnits } from '@/lib/money';

describe('money in minor units', () => {
  it('parses "4.35" to 435 without floating-point drift', () => {
    expect(toMinorUnits('4.35', 'USD')).toBe(435);
    // parseFloat('4.35') * 100 is 434.99999999999994
    expect(toMinorUnits('1.005', 'EUR')).toBe(101);
    expect(toMinorUnits('19.99', 'usd')).toBe(1999);
  });

  it('adds "0.10" and "0.20" to exactly 30', () => {
    expect(toMinorUnits('0.10', 'USD') + toMinorUnits('0.20', 'USD')).toBe(30);
  });

  it('charges zero-decimal currencies such as JPY in whole units', () => {
    expect(currencyExponent('JPY')).toBe(0);
    expect(toMinorUnits('1500', 'JPY')).toBe(1500);
    expect(toMinorUnits('1500.00', 'jpy')).toBe(1500);
    expect(toMinorUnits('1500.6', 'JPY')).toBe(1501);
  });

  it('counts three-decimal currencies such as KWD in thousandths', () => {
    expect(currencyExponent('KWD')).toBe(3);
    expect(toMinorUnits('12.345', 'KWD')).toBe(12345);
    expect(toMinorUnits('0.5', 'KWD')).toBe(500);
  });

  it('rounds a KWD charge to a multiple of 10 as Stripe requires, and leaves others alone', () => {
    expect(chargeableAmount(12345, 'KWD')).toBe(12350);
    expect(chargeableAmount(12344, 'kwd')).toBe(12340);
    expect(chargeableAmount(12340, 'KWD')).toBe(12340);
    expect(chargeableAmount(12345, 'USD')).toBe(12345);
  });

  it('handles whole numbers, signs, JSON numbers and extra decimals', () => {
    expect(toMinorUnits('10', 'USD')).toBe(1000);
    expect(toMinorUnits('-2.50', 'USD')).toBe(-250);
    expect(toMinorUnits('.5', 'USD')).toBe(50);
    expect(toMinorUnits(4.35, 'USD')).toBe(435);
    expect(toMinorUnits('4.355', 'USD')).toBe(436);
    expect(toMinorUnits('4.354', 'USD')).toBe(435);
    expect(toMinorUnits('-0.001', 'USD')).toBe(0);
  });

  it('refuses anything that is not a decimal number', () => {
    for (const bad of ['', 'abc', '1,50', '1e3', '4.35.1', '-', 'NaN']) {
      expect(() => toMinorUnits(bad, 'USD'), bad).toThrow(MoneyError);
    }
    expect(() => toMinorUnits(Number.POSITIVE_INFINITY, 'USD')).toThrow(MoneyError);
    expect(() => toMinorUnits('99999999999999999999', 'USD')).toThrow(MoneyError);
  });

  it('formats minor units back to decimals', () => {
    expect(formatMinorUnits(435, 'USD')).toBe('4.35');
    expect(formatMinorUnits(5, 'USD')).toBe('0.05');
    expect(formatMinorUnits(-250, 'USD')).toBe('-2.50');
    expect(formatMinorUnits(1500, 'JPY')).toBe('1500');
    expect(formatMinorUnits(12340, 'KWD')).toBe('12.340');
  });
});
